package load_test

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit/load"
)

// wrkBin returns the wrk binary, or skips the test when it is not installed.
func wrkBin(t *testing.T) string {
	t.Helper()
	bin, err := load.Binary()
	if err != nil {
		t.Skip(err)
	}
	return bin
}

// seen is what a server saw of the requests it answered.
type seen struct {
	mu       sync.Mutex
	requests int64
	statuses map[int]int64
	clients  map[string]bool
	tokens   map[string]int64
	paths    map[string]int64
	bodies   map[string]bool
	methods  map[string]bool
	header   map[string]bool
}

// recorder answers 404 on /missing and 200 elsewhere, and records what it saw.
func recorder(t *testing.T) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{statuses: map[int]int64{}, clients: map[string]bool{}, tokens: map[string]int64{}, paths: map[string]int64{},
		bodies: map[string]bool{}, methods: map[string]bool{}, header: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := http.StatusOK
		if r.URL.Path == "/missing" {
			status = http.StatusNotFound
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("ok"))
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		s.statuses[status]++
		s.clients[r.Header.Get("X-Forwarded-For")] = true
		s.tokens[r.Header.Get("Authorization")]++
		s.paths[r.URL.RequestURI()]++
		s.bodies[string(body)] = true
		s.methods[r.Method] = true
		s.header[r.Header.Get("X-Test")] = true
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func TestRunSendsTheTargetFromRandomClients(t *testing.T) {
	bin := wrkBin(t)
	srv, s := recorder(t)
	tg := load.Target{URL: srv.URL, Method: "POST", Paths: []string{"/a?x=1", "/b"}, Header: map[string]string{"X-Test": "yes"},
		Tokens: []string{"t1", "t2", "t3"}, Body: []byte(`{"content":"hi"}`)}
	res, err := load.Run(context.Background(), load.Config{Bin: bin, Connections: 4, Duration: time.Second}, tg)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Requests < 100 || res.Requests > s.requests || res.Failed() != 0 {
		t.Fatalf("%s; the server answered %d", res, s.requests)
	}
	if len(s.clients) < int(s.requests*9/10) {
		t.Errorf("%d client addresses for %d requests", len(s.clients), s.requests)
	}
	for c := range s.clients {
		if a, err := netip.ParseAddr(c); err != nil || !a.Is4() || a.IsLoopback() || a.As4()[0] == 10 {
			t.Fatalf("client address %q", c)
		}
	}
	for _, tok := range []string{"Bearer t1", "Bearer t2", "Bearer t3"} {
		if n := s.tokens[tok]; n < s.requests/5 {
			t.Errorf("token %q sent %d times of %d: %v", tok, n, s.requests, s.tokens)
		}
	}
	if s.paths["/a?x=1"] == 0 || s.paths["/b"] == 0 || len(s.paths) != 2 {
		t.Errorf("paths %v", s.paths)
	}
	if len(s.bodies) != 1 || !s.bodies[`{"content":"hi"}`] || len(s.methods) != 1 || !s.methods["POST"] || len(s.header) != 1 || !s.header["yes"] {
		t.Errorf("bodies %v, methods %v, X-Test %v", s.bodies, s.methods, s.header)
	}
	if res.P50 <= 0 || res.P50 > res.P90 || res.P90 > res.P99 || res.Elapsed < 900*time.Millisecond {
		t.Errorf("percentiles or window: %s", res)
	}
}

// A paced run sends each connection's next request Pace after its answer: 4 connections
// paced at 100 ms send about 40 requests a second, where an unpaced run sends thousands.
func TestAPacedRunReadsAtItsRate(t *testing.T) {
	bin := wrkBin(t)
	srv, _ := recorder(t)
	res, err := load.Run(context.Background(), load.Config{Bin: bin, Connections: 4, Pace: 100 * time.Millisecond, Duration: 2 * time.Second},
		load.Target{URL: srv.URL, Paths: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	if rate := res.Throughput(); rate < 30 || rate > 41 || res.Failed() != 0 {
		t.Errorf("4 connections paced at 100 ms: %s, want about 40 req/s", res)
	}
}

func TestRunCountsAnswersThatAreNotSuccesses(t *testing.T) {
	bin := wrkBin(t)
	srv, s := recorder(t)
	res, err := load.Run(context.Background(), load.Config{Bin: bin, Connections: 2, Duration: time.Second},
		load.Target{URL: srv.URL, Paths: []string{"/missing", "/here"}})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Bad == 0 || res.Bad > s.statuses[404] || res.Requests-res.Bad > s.statuses[200] || res.Failed() != res.Bad {
		t.Errorf("%s; the server answered %v", res, s.statuses)
	}
}

func TestRunFailsWithWrksReasonWhenNothingListens(t *testing.T) {
	bin := wrkBin(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, err = load.Run(context.Background(), load.Config{Bin: bin, Connections: 2, Duration: time.Second},
		load.Target{URL: "http://" + addr, Paths: []string{"/"}})
	if err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("against a closed port: %v", err)
	}
}

func TestWarmupIsNotRecorded(t *testing.T) {
	bin := wrkBin(t)
	srv, s := recorder(t)
	res, err := load.Run(context.Background(), load.Config{Bin: bin, Connections: 2, Warmup: time.Second, Duration: time.Second},
		load.Target{URL: srv.URL, Paths: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Requests == 0 || res.Requests >= s.requests*3/4 {
		t.Errorf("recorded %d of the %d answered requests; want about half", res.Requests, s.requests)
	}
}

func TestRunRefusesABadConfig(t *testing.T) {
	for name, c := range map[string]struct {
		cfg load.Config
		tg  load.Target
	}{
		"no connections": {load.Config{Bin: "wrk", Duration: time.Second}, load.Target{URL: "http://127.0.0.1:1", Paths: []string{"/"}}},
		"no duration":    {load.Config{Bin: "wrk", Connections: 1}, load.Target{URL: "http://127.0.0.1:1", Paths: []string{"/"}}},
		"no path":        {load.Config{Bin: "wrk", Connections: 1, Duration: time.Second}, load.Target{URL: "http://127.0.0.1:1"}},
	} {
		if _, err := load.Run(context.Background(), c.cfg, c.tg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRunMeasuresTheProcessCPUOfTheWindow(t *testing.T) {
	bin := wrkBin(t)
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("process CPU time is read on Unix only")
	}
	// Each answer costs at least 200µs of CPU in this process, spent hashing.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256(nil)
		for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
			sum = sha256.Sum256(sum[:])
		}
		_, _ = w.Write(sum[:1])
	}))
	t.Cleanup(srv.Close)
	// This process, watched by its name in /proc, is seen to spend what it spends.
	self, _ := os.ReadFile("/proc/self/comm")
	name := strings.TrimSpace(string(self))
	res, err := load.Run(context.Background(), load.Config{Bin: bin, Connections: 2, Duration: time.Second, Watch: []string{name, "no-such-process"}},
		load.Target{URL: srv.URL, Paths: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	// The spin loop measures wall time, so on a busy machine a request may cost less CPU
	// than 200µs; a tenth of it is a safe floor. No process uses more than its CPUs.
	limit := time.Duration(runtime.NumCPU())*1500*time.Millisecond + 50*time.Millisecond
	if res.CPU <= 0 || res.CPU > limit || res.CPUPerRequest() < 20*time.Microsecond {
		t.Errorf("CPU %v for %d requests (%v per request)", res.CPU, res.Requests, res.CPUPerRequest())
	}
	if runtime.GOOS != "linux" {
		return
	}
	// /proc counts in ticks of 10 ms, getrusage finer.
	if got := res.Watched[name]; got < res.CPU/2 || got > res.CPU*3/2+20*time.Millisecond {
		t.Errorf("watched %q used %v, this process %v", name, got, res.CPU)
	}
	if got, ok := res.Watched["no-such-process"]; !ok || got != 0 {
		t.Errorf("a process that is not running used %v (reported: %v)", got, ok)
	}
}

func TestRandomIPv4LooksLikeAnInternetClient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 10000 {
		s := load.RandomIPv4(rng)
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			t.Fatalf("%q is not an IPv4 address", s)
		}
		if a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() || a.As4()[0] == 10 || a.As4()[0] >= 224 {
			t.Fatalf("%s is not a public-looking address", a)
		}
		seen[s] = true
	}
	if len(seen) < 9990 {
		t.Errorf("only %d distinct addresses in 10000", len(seen))
	}
}

func TestStringSaysWhatFailed(t *testing.T) {
	r := load.Result{Requests: 10, Bad: 2, Errors: 1, Elapsed: time.Second}
	if s := r.String(); !strings.Contains(s, "2 not 2xx/3xx, 1 errors") || r.Failed() != 3 {
		t.Errorf("%q, failed %d", s, r.Failed())
	}
}

func TestMergeSumsCountsAndTakesTheMedianPercentile(t *testing.T) {
	ms := time.Millisecond
	m := load.Merge(
		load.Result{Requests: 10, Bad: 1, Bytes: 100, Elapsed: time.Second, CPU: ms, P50: 1 * ms, P90: 5 * ms, P99: 30 * ms,
			Watched: map[string]time.Duration{"postgres": ms}},
		load.Result{Requests: 20, Errors: 2, Bytes: 200, Elapsed: time.Second, CPU: 2 * ms, P50: 3 * ms, P90: 6 * ms, P99: 10 * ms,
			Watched: map[string]time.Duration{"postgres": 2 * ms, "redis-server": ms}},
		load.Result{Requests: 30, Bytes: 300, Elapsed: time.Second, CPU: 3 * ms, P50: 2 * ms, P90: 4 * ms, P99: 20 * ms},
	)
	want := load.Result{Requests: 60, Bad: 1, Errors: 2, Bytes: 600, Elapsed: 3 * time.Second, CPU: 6 * ms, P50: 2 * ms, P90: 5 * ms, P99: 20 * ms,
		Watched: map[string]time.Duration{"postgres": 3 * ms, "redis-server": ms}}
	if !reflect.DeepEqual(m, want) || m.Throughput() != 20 || m.WatchedPerRequest("postgres") != 50*time.Microsecond {
		t.Errorf("merged %+v, want %+v", m, want)
	}
}
