//go:build chaos

package sharenote_test

// The fault tests of `make chaos`: the real binary on throw-away Postgres and Redis servers
// that the test stops and starts, under a mixed load of reads and writes from many client
// addresses, and with hostile clients (bodies trickling in, many big uploads at once).
// Every phase prints its requests by status, the publishes it acknowledged and how many
// of them the database lost (must be 0), the longest stall and the server's peak RSS.
//
//	cd services/sharenote && go test -count=1 -tags chaos -run Chaos -v -timeout 20m .

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/sharenote/sharenote/libs/testkit"
)

// chaosServer is the binary serving everything, as one process the test can signal.
type chaosServer struct {
	*process
	url, admin string
	tokens     []string
	lastRSS    int
	client     *http.Client
}

// tally is what a phase saw.
type tally struct {
	mu       sync.Mutex
	statuses map[string]int
	stall    time.Duration
	acked    []string // cuids of acknowledged publishes
	notes    []string // the seeded notes, and in owners the index of each one's token
	owners   []int
	errors   []string // what the failed requests met
}

func newTally() *tally { return &tally{statuses: map[string]int{}} }

func (t *tally) add(status string, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.statuses[status]++
	t.stall = max(t.stall, took)
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.statuses))
	for k := range t.statuses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, t.statuses[k])
	}
	return strings.Join(parts, " ")
}

var chaosClient = &http.Client{Timeout: 30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, ExpectContinueTimeout: 5 * time.Second}}

// do sends one request from a random client address and records its outcome.
func (s *chaosServer) do(t *tally, method, path, token string, body []byte, contentType string) (*http.Response, []byte) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", rand.IntN(256), rand.IntN(256)))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if len(body) > 1<<20 {
		// As curl does for large bodies: a refusal (503 over the upload cap, 413) then
		// arrives before the body is sent, not as a reset in the middle of it.
		req.Header.Set("Expect", "100-continue")
	}
	began := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		// A refused connection never reached the server (after SIGTERM, the listener is
		// closed); any other failure broke a request the server had.
		kind := "error"
		if errors.Is(err, syscall.ECONNREFUSED) {
			kind = "refused"
		} else {
			t.mu.Lock()
			t.errors = append(t.errors, method+" "+path+": "+err.Error())
			t.mu.Unlock()
		}
		t.add(kind, time.Since(began))
		return nil, nil
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	status := strconv.Itoa(resp.StatusCode)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		status += "-without-Retry-After"
	}
	t.add(status, time.Since(began))
	return resp, b
}

// login creates account i with the binary bin under env and returns a publish token
// from the server.
func (s *chaosServer) login(t *testing.T, bin string, env []string, i int) string {
	t.Helper()
	cmd := exec.Command(bin, "licenses", "create", "--name", fmt.Sprintf("chaos %d", i), "--email", fmt.Sprintf("chaos%d@example.com", i))
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("licenses create: %v", err)
	}
	var creds struct {
		LicenseKey string `json:"license_key"`
		InstanceID string `json:"instance_id"`
	}
	_ = json.Unmarshal(out, &creds)
	body, _ := json.Marshal(map[string]string{"license_key": creds.LicenseKey, "instance_id": creds.InstanceID})
	resp, b := s.do(newTally(), "POST", "/api/auth/publish", "", body, "application/json")
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %v %s", resp, b)
	}
	var tok struct{ Token string }
	_ = json.Unmarshal(b, &tok)
	return tok.Token
}

// mixedLoad runs readers and writers until stop is closed: reads of known notes (cached
// or not), and, at most once a second per worker, a publish or a PATCH.
func (s *chaosServer) mixedLoad(t *tally, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			lastWrite := time.Time{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := rand.IntN(len(t.notes))
				note, owner := t.notes[n], s.tokens[t.owners[n]]
				token := s.tokens[w%len(s.tokens)]
				switch {
				case time.Since(lastWrite) > time.Second && w%2 == 0:
					lastWrite = time.Now()
					body, _ := json.Marshal(map[string]any{"content": fmt.Sprintf("# Chaos %d\n\nwritten under faults", rand.Int())})
					resp, b := s.do(t, "POST", "/api/publish", token, body, "application/json")
					if resp != nil && resp.StatusCode == http.StatusOK {
						var created struct{ CUID string }
						_ = json.Unmarshal(b, &created)
						t.mu.Lock()
						t.acked = append(t.acked, created.CUID)
						t.mu.Unlock()
					}
				case time.Since(lastWrite) > time.Second:
					lastWrite = time.Now()
					body, _ := json.Marshal(map[string]any{"summary": fmt.Sprint(rand.Int())})
					s.do(t, "PATCH", "/api/notes/"+note, owner, body, "application/json")
				case rand.IntN(4) == 0:
					s.do(t, "GET", "/s/"+note, "", nil, "")
				default:
					s.do(t, "GET", "/api/notes/"+note, "", nil, "")
				}
			}
		})
	}
	return &wg
}

// peakRSS is the server's peak resident set (VmHWM) in MiB; once it has exited, the
// last value read.
func (s *chaosServer) peakRSS() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return s.lastRSS
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			s.lastRSS = kb / 1024
		}
	}
	return s.lastRSS
}

// checkImages reads back every image a note links and compares it with want.
func (s *chaosServer) checkImages(t *testing.T, cuid string, want []byte) {
	t.Helper()
	_, b := s.do(newTally(), "GET", "/api/notes/"+cuid, "", nil, "")
	var n struct{ Content string }
	_ = json.Unmarshal(b, &n)
	urls := imageURL.FindAllString(n.Content, -1)
	if len(urls) != 5 {
		t.Errorf("note %s links %d images, want 5", cuid, len(urls))
	}
	for _, u := range urls {
		if _, got := s.do(newTally(), "GET", u, "", nil, ""); !bytes.Equal(got, want) {
			t.Errorf("%s read back %d bytes differing from the %d uploaded", u, len(got), len(want))
		}
	}
}

var imageURL = regexp.MustCompile(`/api/images/[^)\s]+`)

func (s *chaosServer) readyz(t *testing.T) (int, string) {
	t.Helper()
	resp, err := http.Get(s.admin + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestChaos(t *testing.T) {
	pg := testkit.StartPostgres(t)
	dbURL := pg.NewDatabase(t)
	redis := testkit.StartRedis(t)
	bin := buildBinary(t)
	addr, admin := testkit.FreeAddr(), testkit.FreeAddr()
	env := commandEnv(map[string]string{
		"SHARE_ADDR": addr, "SHARE_ADMIN_ADDR": admin, "SHARE_PUBLIC_URL": "http://" + addr,
		"SHARE_DATABASE_URL": dbURL, "SHARE_REDIS_URL": redis.URL, "SHARE_REDIS_KEY_PREFIX": "chaos:",
		"SHARE_TRUSTED_PROXIES": "127.0.0.1/32", "SHARE_SHUTDOWN_TIMEOUT": "10s", "SHARE_LOG_LEVEL": "warn",
		"SHARE_DATA_DIR": t.TempDir(),
	})
	s := &chaosServer{url: "http://" + addr, admin: "http://" + admin, client: chaosClient}
	s.process = startProcess(t, "sharenote", bin, []string{"serve"}, env)
	s.waitFor(t, "readiness", func() bool { code, _ := s.readyz(t); return code == http.StatusOK })

	// Twenty accounts, so that the writers stay under each account's mutation limit.
	for i := range 20 {
		s.tokens = append(s.tokens, s.login(t, bin, env, i))
	}
	seed := newTally()
	for i := range 20 {
		body, _ := json.Marshal(map[string]any{"content": fmt.Sprintf("# Seed %d\n\n```go\nfunc main() {}\n```\n", i)})
		_, b := s.do(seed, "POST", "/api/publish", s.tokens[i%len(s.tokens)], body, "application/json")
		var created struct{ CUID string }
		_ = json.Unmarshal(b, &created)
		seed.notes = append(seed.notes, created.CUID)
		seed.owners = append(seed.owners, i%len(s.tokens))
	}

	// Each phase's line; the publishes it acknowledged are looked up in the database at
	// the end, when the server may be gone.
	type result struct {
		name string
		load *tally
		rss  int
	}
	var results []result
	phase := func(name string, run func(t *testing.T, load *tally)) {
		t.Run(name, func(t *testing.T) {
			load := newTally()
			load.notes, load.owners = seed.notes, seed.owners
			run(t, load)
			results = append(results, result{name, load, s.peakRSS()})
		})
	}

	phase("postgres down", func(t *testing.T, load *tally) {
		stop := make(chan struct{})
		wg := s.mixedLoad(load, stop)
		time.Sleep(time.Second)
		pg.Stop()
		time.Sleep(time.Second)
		if code, body := s.readyz(t); code != http.StatusOK || !strings.Contains(body, "database") {
			t.Errorf("/readyz with the database down: %d %s, want 200 naming the database", code, body)
		}
		down := newTally()
		down.notes, down.owners = seed.notes, seed.owners
		downStop := make(chan struct{})
		downWG := s.mixedLoad(down, downStop)
		time.Sleep(3 * time.Second)
		close(downStop)
		downWG.Wait()
		for status := range down.statuses {
			if status != "200" && status != "304" && status != "503" {
				t.Errorf("with the database down: %s answers (%s), want only 200 (cached reads) and 503 with Retry-After", status, down)
			}
		}
		pg.Start()
		back := time.Now()
		for {
			body, _ := json.Marshal(map[string]any{"content": "back"})
			if resp, _ := s.do(newTally(), "POST", "/api/publish", s.tokens[19], body, "application/json"); resp != nil && resp.StatusCode == http.StatusOK {
				break
			}
			if time.Since(back) > 5*time.Second {
				t.Fatalf("no publish succeeded within 5 s of the database coming back")
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("first successful publish %v after the database came back", time.Since(back).Round(time.Millisecond))
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()
		load.mu.Lock()
		load.acked = append(load.acked, down.acked...)
		load.mu.Unlock()
	})

	phase("redis down", func(t *testing.T, load *tally) {
		redis.Stop()
		time.Sleep(500 * time.Millisecond)
		reads := newTally()
		var slow atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					began := time.Now()
					s.do(reads, "GET", "/api/notes/"+seed.notes[rand.IntN(len(seed.notes))], "", nil, "")
					if time.Since(began) > 250*time.Millisecond {
						slow.Add(1)
					}
				}
			})
		}
		writers := s.mixedLoad(load, stop)
		time.Sleep(3 * time.Second)
		close(stop)
		wg.Wait()
		writers.Wait()
		if n := slow.Load(); n > 0 {
			t.Errorf("with Redis down, %d reads took over 250 ms (%s)", n, reads)
		}
		for _, tl := range []*tally{reads, load} {
			for status := range tl.statuses {
				if strings.HasPrefix(status, "5") || status == "error" {
					t.Errorf("with Redis down: %s answers (%s)", status, tl)
				}
			}
		}
		redis.Start()
		t.Logf("reads with Redis down: %s, longest %v", reads, reads.stall.Round(time.Millisecond))
	})

	phase("slow bodies", func(t *testing.T, load *tally) {
		stop := make(chan struct{})
		wg := s.mixedLoad(load, stop)
		var slowWG sync.WaitGroup
		var cut, refused atomic.Int64
		began := time.Now()
		for i := range 10 {
			slowWG.Go(func() {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				fmt.Fprintf(conn, "POST /api/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nX-Forwarded-For: 203.0.113.%d\r\n\r\n", s.tokens[i], i)
				done := make(chan string, 1)
				go func() {
					line, _ := bufio.NewReader(conn).ReadString('\n')
					done <- line
				}()
				for {
					select {
					case line := <-done:
						switch {
						case strings.Contains(line, " 408 "):
							cut.Add(1)
						case strings.Contains(line, " 503 "):
							refused.Add(1) // Over the cap of concurrent uploads, after waiting for a slot.
						default:
							t.Errorf("a slow body got %q, want 408 (or 503 over the upload cap)", line)
						}
						return
					case <-time.After(time.Second):
						_, _ = conn.Write([]byte("{"))
					}
					if time.Since(began) > 2*time.Minute {
						t.Error("a slow body was not cut within two minutes")
						return
					}
				}
			})
		}
		slowWG.Wait()
		close(stop)
		wg.Wait()
		t.Logf("slow bodies: %d cut with 408 within %v, %d refused with 503 over the upload cap", cut.Load(), time.Since(began).Round(time.Second), refused.Load())
	})

	phase("many big uploads", func(t *testing.T, load *tally) {
		// 50 publishes of about 24 MB at once: five 4.8 MB images each. Those beyond the
		// upload cap wait for a slot (SHARE_UPLOAD_WAIT), so each is stored within 2
		// minutes, or refused with 503 only after that wait.
		const uploadWait = 30 * time.Second
		saved := s.client
		s.client = &http.Client{Timeout: 2 * time.Minute, Transport: chaosClient.Transport}
		defer func() { s.client = saved }()
		image := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 4_800_000)...)
		var wg sync.WaitGroup
		var slowest atomic.Int64
		for i := range 50 {
			wg.Go(func() {
				var body bytes.Buffer
				w := multipart.NewWriter(&body)
				_ = w.WriteField("content", "[[a.png]] [[b.png]] [[c.png]] [[d.png]] [[e.png]]")
				for _, name := range []string{"a.png", "b.png", "c.png", "d.png", "e.png"} {
					h := textproto.MIMEHeader{}
					h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+name+`"`)
					h.Set("Content-Type", "image/png")
					part, _ := w.CreatePart(h)
					_, _ = part.Write(image)
				}
				_ = w.Close()
				began := time.Now()
				resp, b := s.do(load, "POST", "/api/publish", s.tokens[i%len(s.tokens)], body.Bytes(), w.FormDataContentType())
				took := time.Since(began)
				if resp == nil {
					t.Errorf("a big upload failed after %v", took.Round(time.Millisecond))
					return
				}
				switch resp.StatusCode {
				case http.StatusServiceUnavailable:
					if took < uploadWait {
						t.Errorf("a big upload got 503 after %v, before the upload wait of %v", took.Round(time.Millisecond), uploadWait)
					}
				case http.StatusOK:
					for old := slowest.Load(); int64(took) > old && !slowest.CompareAndSwap(old, int64(took)); old = slowest.Load() {
					}
					var created struct{ CUID string }
					_ = json.Unmarshal(b, &created)
					load.mu.Lock()
					load.acked = append(load.acked, created.CUID)
					load.mu.Unlock()
					s.checkImages(t, created.CUID, image)
				case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
				default:
					t.Errorf("a big upload got %d %s", resp.StatusCode, b)
				}
			})
		}
		wg.Wait()
		t.Logf("big uploads: %s; the slowest stored after %v", load, time.Duration(slowest.Load()).Round(time.Millisecond))
		if rss := s.peakRSS(); rss >= 512 {
			t.Errorf("peak RSS %d MiB with 50 concurrent 24 MB uploads, want < 512", rss)
		}
	})

	phase("SIGTERM under load", func(t *testing.T, load *tally) {
		// A connection per request, so that every failure is a request the server had: a
		// kept-alive connection the server closes while idle can meet a request the client
		// is just sending on it, which the server never received.
		s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		stop := make(chan struct{})
		wg := s.mixedLoad(load, stop)
		time.Sleep(time.Second)
		rss := s.peakRSS()
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// The load goes on through most of the drain delay (5 s), as a load balancer's
		// does until it has seen /readyz fail: every one of those requests must succeed.
		time.Sleep(3 * time.Second)
		if code, _ := s.readyz(t); code != http.StatusServiceUnavailable {
			t.Errorf("/readyz = %d while draining, want 503", code)
		}
		close(stop)
		wg.Wait()
		select {
		case <-s.done:
			if s.err != nil {
				t.Errorf("exit after SIGTERM: %v, want status 0", s.err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the server did not exit within 20 s of SIGTERM")
		}
		if n := load.statuses["error"] + load.statuses["refused"]; n > 0 {
			t.Errorf("%d requests failed while the server drained (%s): %q", n, load, load.errors)
		}
		t.Logf("peak RSS before SIGTERM: %d MiB", rss)
	})

	gdb, err := gorm.Open(postgres.Open(dbURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var report []string
	for _, r := range results {
		var stored int64
		if len(r.load.acked) > 0 {
			if err := gdb.Raw("SELECT count(*) FROM publications WHERE cuid IN ?", r.load.acked).Scan(&stored).Error; err != nil {
				t.Fatal(err)
			}
		}
		lost := int64(len(r.load.acked)) - stored
		if lost > 0 {
			t.Errorf("%s: %d of %d acknowledged publishes were lost", r.name, lost, len(r.load.acked))
		}
		report = append(report, fmt.Sprintf("%-20s %-34s | acknowledged %3d, lost %d | longest %-7v | peak RSS %d MiB",
			r.name, r.load, len(r.load.acked), lost, r.load.stall.Round(time.Millisecond), r.rss))
	}
	fmt.Println("== sharenote chaos")
	for _, l := range report {
		fmt.Println(l)
	}
	t.Log("\n" + strings.Join(report, "\n"))
}
