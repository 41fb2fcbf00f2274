package httpx_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
)

// rateServer serves POST /read, which reads the whole body under BodyLimitRate(rate,
// window) and answers its length, after pausing for pause once the first bytes arrived.
func rateServer(t *testing.T, rate int64, window, pause time.Duration) string {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(errs.Middleware(slog.New(slog.DiscardHandler), nil))
	e.POST("/read", httpx.BodyLimitRate(1<<20, rate, window), func(c *gin.Context) {
		first := make([]byte, 1)
		if _, err := io.ReadFull(c.Request.Body, first); err != nil {
			errs.Abort(c, httpx.ReadError(err))
			return
		}
		time.Sleep(pause)
		rest, err := io.ReadAll(c.Request.Body)
		if err != nil {
			// Any error will do: the middleware answers 408 for a body that was too slow.
			errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidBody, "unreadable"))
			return
		}
		c.JSON(http.StatusOK, gin.H{"bytes": 1 + len(rest)})
	})
	srv := httptest.NewUnstartedServer(e)
	srv.Config.ReadTimeout = time.Minute
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// chunk is part of a body, written after a pause.
type chunk struct {
	after time.Duration
	data  string
}

// every returns n chunks of size bytes, each after d.
func every(n, size int, d time.Duration) []chunk {
	out := make([]chunk, n)
	for i := range out {
		out[i] = chunk{d, strings.Repeat("x", size)}
	}
	return out
}

// send writes a request declaring length bytes of body, then writes the chunks, and
// returns the response with how long after the headers it came. Write errors are
// ignored: the server may close the connection before the body is done.
func send(t *testing.T, addr string, length int, chunks []chunk) (*http.Response, map[string]any, time.Duration, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	start := time.Now()
	fmt.Fprintf(conn, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", length)
	go func() {
		for _, c := range chunks {
			time.Sleep(c.after)
			if _, err := conn.Write([]byte(c.data)); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	took := time.Since(start)
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decode: %v", err)
	}
	resp.Body.Close()
	return resp, body, took, &bufConn{Conn: conn, r: br}
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// closed fails unless the server closes conn within d: the read sees its FIN, or its
// reset when the client was still sending.
func closed(t *testing.T, conn net.Conn, d time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(d))
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) { //nolint:errorlint // A closed TCP connection reads io.EOF itself.
		t.Errorf("after the answer the connection read %d bytes, %v; want it closed by the server", n, err)
	}
}

func TestBodyBelowTheMinimumRateIsCut(t *testing.T) {
	t.Parallel()
	// 1,000 bytes a second with 300 ms of credit: the same rule as production's 8 KiB/s
	// and 10 s, scaled so the test takes a second.
	const rate, window = 1000, 300 * time.Millisecond
	addr := rateServer(t, rate, window, 0)
	cases := []struct {
		name    string
		length  int
		chunks  []chunk
		status  int
		between [2]time.Duration // when the answer may come, after the headers
	}{
		{"a body that never starts is cut after the window", 100, nil, 408, [2]time.Duration{window, window + 250*time.Millisecond}},
		{"a trickle of a byte every 50 ms is cut soon after the window", 100, every(100, 1, 50*time.Millisecond),
			408, [2]time.Duration{window, window + 300*time.Millisecond}},
		{"a body at twice the minimum rate is read", 600, every(6, 100, 50*time.Millisecond), 200, [2]time.Duration{0, time.Second}},
		{"a stall shorter than the banked credit is forgiven", 300, []chunk{{0, strings.Repeat("x", 250)}, {220 * time.Millisecond, "xxxxxxxxxx"},
			{0, strings.Repeat("x", 40)}}, 200, [2]time.Duration{0, time.Second}},
		{"a stall longer than the banked credit is cut", 300, []chunk{{0, strings.Repeat("x", 250)}, {window + 200*time.Millisecond, strings.Repeat("x", 50)}},
			408, [2]time.Duration{window, window + 150*time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp, body, took, conn := send(t, addr, c.length, c.chunks)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d %v, want %d", resp.StatusCode, body, c.status)
			}
			if took < c.between[0] || took > c.between[1] {
				t.Errorf("answered after %v, want between %v and %v", took, c.between[0], c.between[1])
			}
			if c.status == http.StatusRequestTimeout {
				if body["error"] != errs.RequestTimeout || !resp.Close {
					t.Errorf("408 body %v, Connection: close %v; want request_timeout and close", body, resp.Close)
				}
				closed(t, conn, time.Second)
			} else if int(body["bytes"].(float64)) != c.length {
				t.Errorf("read %v bytes, want %d", body["bytes"], c.length)
			}
		})
	}
}

func TestTimeTheHandlerSpendsIsNotCountedAgainstTheBody(t *testing.T) {
	t.Parallel()
	// The handler pauses for three windows after the first byte; the client sent the whole
	// body at once, so no read ever waits and the body is read.
	addr := rateServer(t, 1000, 200*time.Millisecond, 600*time.Millisecond)
	resp, body, _, _ := send(t, addr, 300, []chunk{{0, strings.Repeat("x", 300)}})
	if resp.StatusCode != http.StatusOK || int(body["bytes"].(float64)) != 300 {
		t.Fatalf("status %d %v, want 200 with 300 bytes", resp.StatusCode, body)
	}
}
