package publish_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/testkit"
)

// rawRequest is a publish request written by hand on its own TCP connection, so that a test
// decides when each byte of the body is sent.
type rawRequest struct {
	f    *fixture
	conn net.Conn
	r    *bufio.Reader
	sent time.Time // when the head began to be written: the server cannot have it before
}

// rawPublish writes the head of POST /api/publish declaring length bytes of body
// (-1: chunked; the test then writes the chunk framing itself).
func (f *fixture) rawPublish(t *testing.T, token, contentType string, length int) *rawRequest {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	framing := "Content-Length: " + strconv.Itoa(length)
	if length < 0 {
		framing = "Transfer-Encoding: chunked"
	}
	head := fmt.Sprintf("POST /api/publish HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\n%s\r\n\r\n",
		token, contentType, framing)
	sent := time.Now()
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return &rawRequest{f: f, conn: conn, r: bufio.NewReader(conn), sent: sent}
}

// write sends more of the body; an error means the server closed the connection.
func (r *rawRequest) write(b []byte) error {
	_, err := r.conn.Write(b)
	return err
}

// response reads the answer (within a minute), validates it against the OpenAPI document
// and returns it with how long after the head it came.
func (r *rawRequest) response(t *testing.T) (*testkit.Response, time.Duration) {
	t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(r.r, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	took := time.Since(r.sent)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", r.f.URL+"/api/publish", nil)
	if err != nil {
		t.Fatal(err)
	}
	testkit.ValidateResponse(t, req, resp.StatusCode, resp.Header, b)
	if resp.Close {
		resp.Header.Set("Connection", "close")
	}
	return &testkit.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, took
}

// lingerBound is how soon after refusing a body part-way the server must close the
// connection: net/http sends FIN with the answer and closes half a second later.
const lingerBound = time.Second

// closedByServer fails unless the server closes the connection within d of the answer:
// the read sees its FIN, or its reset when the client was still sending.
func (r *rawRequest) closedByServer(t *testing.T, d time.Duration) {
	t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(d))
	if n, err := r.r.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) { //nolint:errorlint // A closed TCP connection reads io.EOF itself.
		t.Errorf("after the answer the connection read %d bytes, %v; want it closed by the server", n, err)
	}
}

func TestSlowBodyIsCutLongBeforeTheReadTimeout(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		t.Parallel()
		f := start(t, b)
		acc := f.NewAccount(t, "slow")
		// Production's rule: 8 KiB/s with 10 s of credit. A client that sends nothing,
		// or 4 bytes a second, is cut about 10 s after its head; the ReadTimeout would
		// have held it for 300 s.
		cases := []struct {
			name, contentType string
			every             time.Duration
		}{
			{"a Markdown body that trickles 4 bytes a second", "text/markdown", time.Second},
			{"a multipart body that trickles 4 bytes a second", "multipart/form-data; boundary=b", time.Second},
			{"a JSON body that never starts", "application/json", 0},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				r := f.rawPublish(t, acc.Token, c.contentType, 100_000)
				if c.every > 0 {
					go func() {
						for r.write([]byte("abcd")) == nil {
							time.Sleep(c.every)
						}
					}()
				}
				resp, took := r.response(t)
				resp.Expect(t, http.StatusRequestTimeout, "request_timeout")
				if took < httpx.BodyRateWindow || took > httpx.BodyRateWindow+3*time.Second {
					t.Errorf("answered %v after the head, want between %v and %v", took, httpx.BodyRateWindow, httpx.BodyRateWindow+3*time.Second)
				}
				if resp.Header.Get("Connection") != "close" {
					t.Error("the 408 does not say Connection: close")
				}
				r.closedByServer(t, time.Second)
			})
		}
		t.Cleanup(func() { f.storedNothing(t, acc) })
	})
}

// uploadGauge reads a gauge of the upload cap (sharenote_uploads_in_flight,
// sharenote_uploads_waiting) from the admin listener.
func (f *fixture) uploadGauge(t *testing.T, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindSubmatch(f.Admin(t, "/metrics").Body)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// inFlight reads sharenote_uploads_in_flight from the admin listener.
func (f *fixture) inFlight(t *testing.T) int {
	t.Helper()
	return f.uploadGauge(t, "sharenote_uploads_in_flight")
}

// waitGauge waits up to 5 s for the gauge name to read want.
func (f *fixture) waitGauge(t *testing.T, name string, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.uploadGauge(t, name) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d", name, f.uploadGauge(t, name), want)
		}
	}
}

func TestUploadsOverTheCapWaitForASlot(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		const maxUploads, extra, wait = 2, 5, 2 * time.Second
		f := start(t, b, testkit.WithEnv("SHARE_MAX_UPLOADS", strconv.Itoa(maxUploads)), testkit.WithEnv("SHARE_UPLOAD_WAIT", wait.String()))
		acc := f.NewAccount(t, "uploader")
		body, contentType := multipartBody(t, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNGOfSize(t, 300_000)))

		// maxUploads uploads send half their body and wait, holding every slot.
		holders := make([]*rawRequest, maxUploads)
		for i := range holders {
			holders[i] = f.rawPublish(t, acc.Token, contentType, len(body))
			if err := holders[i].write(body[:len(body)/2]); err != nil {
				t.Fatal(err)
			}
		}
		f.waitGauge(t, "sharenote_uploads_in_flight", maxUploads)

		t.Run("uploads beyond the cap wait SHARE_UPLOAD_WAIT, then get 503 with Retry-After before sending any body", func(t *testing.T) {
			// Only the heads are sent: an answer that waited for the body would come 10 s
			// later as a 408. A body of unknown length, and one small enough that net/http
			// would otherwise read what is left of it, wait and are refused alike.
			var lengths []int
			for range extra {
				lengths = append(lengths, len(body))
			}
			lengths = append(lengths, -1, 100_000)
			var wg sync.WaitGroup
			for _, length := range lengths {
				r := f.rawPublish(t, acc.Token, contentType, length)
				wg.Go(func() {
					resp, took := r.response(t)
					resp.Expect(t, http.StatusServiceUnavailable, "service_unavailable")
					if took < wait || took > wait+time.Second {
						t.Errorf("the refusal took %v, want it after the wait of %v", took, wait)
					}
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
						t.Errorf("Retry-After = %q, want whole seconds ≥ 1", resp.Header.Get("Retry-After"))
					}
					r.closedByServer(t, lingerBound)
				})
			}
			wg.Wait()
			if n := f.uploadGauge(t, "sharenote_uploads_waiting"); n != 0 {
				t.Errorf("%d uploads waiting after every waiter was refused, want 0", n)
			}
		})
		t.Run("small bodies pass while every upload slot is taken", func(t *testing.T) {
			f.published(t, f.markdown(t, acc.Token, "# Small", nil))
		})
		t.Run("an upload waiting for a slot gets the first that frees up", func(t *testing.T) {
			waiter := f.rawPublish(t, acc.Token, contentType, len(body))
			go func() { _ = waiter.write(body) }()
			f.waitGauge(t, "sharenote_uploads_waiting", 1)
			time.Sleep(wait / 2)
			if err := holders[0].write(body[len(body)/2:]); err != nil {
				t.Fatal(err)
			}
			resp, _ := holders[0].response(t)
			f.published(t, resp)
			resp, took := waiter.response(t)
			f.published(t, resp)
			if took < wait/2 {
				t.Errorf("the waiting upload was answered after %v, before a slot was free", took)
			}
		})
		t.Run("the uploads holding the slots complete", func(t *testing.T) {
			for _, h := range holders[1:] {
				if err := h.write(body[len(body)/2:]); err != nil {
					t.Fatal(err)
				}
			}
			for _, h := range holders[1:] {
				resp, _ := h.response(t)
				f.published(t, resp)
			}
		})
		t.Run("the slots are released", func(t *testing.T) {
			if n := f.inFlight(t); n != 0 {
				t.Errorf("%d uploads in flight after they all ended, want 0", n)
			}
			for range maxUploads + 1 {
				f.published(t, f.multipart(t, acc.Token, field("content", "x"), file("b.png", "image/png", testkit.PNGOfSize(t, 300_000))))
			}
		})
	})
}

func TestUploadsWaitingForASlotAreRefusedWhenShutdownBegins(t *testing.T) {
	f := start(t, testkit.SQLiteBackend(t), testkit.WithEnv("SHARE_MAX_UPLOADS", "1"), testkit.WithEnv("SHARE_UPLOAD_WAIT", "1m"),
		testkit.WithEnv("SHARE_DRAIN_DELAY", "2s"))
	acc := f.NewAccount(t, "uploader")
	body, contentType := multipartBody(t, field("content", "![[a.png]]"), file("a.png", "image/png", testkit.PNGOfSize(t, 300_000)))
	holder := f.rawPublish(t, acc.Token, contentType, len(body))
	if err := holder.write(body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	f.waitGauge(t, "sharenote_uploads_in_flight", 1)
	waiter := f.rawPublish(t, acc.Token, contentType, len(body))
	f.waitGauge(t, "sharenote_uploads_waiting", 1)
	shutdown := make(chan error, 1)
	go func() { shutdown <- f.Shutdown() }()
	// The waiter is refused as the drain begins, rather than holding the shutdown for
	// its minute; the upload in flight finishes.
	resp, took := waiter.response(t)
	resp.Expect(t, http.StatusServiceUnavailable, "service_unavailable")
	if took > 5*time.Second {
		t.Errorf("the waiting upload was refused after %v, want at once when shutdown began", took)
	}
	if err := holder.write(body[len(body)/2:]); err != nil {
		t.Fatal(err)
	}
	resp, _ = holder.response(t)
	f.published(t, resp)
	if err := <-shutdown; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestMaxUploadsMustBeAPositiveNumber(t *testing.T) {
	for _, v := range []string{"0", "-1", "many", "10001"} {
		_, err := config.Load(func(name string) string {
			if name == "SHARE_MAX_UPLOADS" {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "SHARE_MAX_UPLOADS") {
			t.Errorf("SHARE_MAX_UPLOADS=%q: error %v, want one naming the variable", v, err)
		}
	}
	c, err := config.Load(func(string) string { return "" })
	if err != nil || c.MaxUploads != 8 {
		t.Errorf("default MaxUploads = %d (%v), want 8", c.MaxUploads, err)
	}
}
