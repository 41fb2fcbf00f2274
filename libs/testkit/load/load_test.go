package load_test

import (
	"context"
	"crypto/sha256"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit/load"
)

// tally is a server-side count of the requests a handler answered, by status.
type tally struct {
	mu       sync.Mutex
	statuses map[int]int64
	bytes    int64
	clients  map[string]bool
}

func newTally() *tally { return &tally{statuses: map[int]int64{}, clients: map[string]bool{}} }

// statusServer answers each request with the status named by its ?status= parameter and a
// body of status/10 bytes, and counts what it answered.
func statusServer(t *testing.T, tl *tally) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, err := strconv.Atoi(r.URL.Query().Get("status"))
		if err != nil {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		// A 304 has no body: Write refuses it, and the count says what was really sent.
		n, _ := w.Write([]byte(strings.Repeat("x", status/10)))
		tl.mu.Lock()
		tl.statuses[status]++
		tl.bytes += int64(n)
		tl.clients[r.Header.Get("X-Forwarded-For")] = true
		tl.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunCountsEveryStatusTheServerAnswered(t *testing.T) {
	tl := newTally()
	srv := statusServer(t, tl)
	var n atomic.Int64
	statuses := []int{200, 200, 200, 201, 404, 429, 500, 200, 304, 200}
	res, err := load.Run(context.Background(), load.Config{
		Concurrency: 8,
		Duration:    300 * time.Millisecond,
		Request: func(rng *rand.Rand) (*http.Request, error) {
			status := statuses[int(n.Add(1))%len(statuses)]
			req, err := http.NewRequest("GET", srv.URL+"/?status="+strconv.Itoa(status), nil)
			if err == nil {
				req.Header.Set("X-Forwarded-For", load.RandomIPv4(rng))
			}
			return req, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Without a warm-up every request sent is recorded, so the two counts agree exactly.
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if !maps.Equal(res.Statuses, tl.statuses) {
		t.Errorf("statuses = %v, the server answered %v", res.Statuses, tl.statuses)
	}
	var answered int64
	for _, c := range tl.statuses {
		answered += c
	}
	if res.Requests != answered || res.Errors != 0 || answered < 100 {
		t.Errorf("requests = %d (errors %d), the server answered %d (want at least 100)", res.Requests, res.Errors, answered)
	}
	if res.Bytes != tl.bytes {
		t.Errorf("bytes = %d, the server sent %d", res.Bytes, tl.bytes)
	}
	if int64(len(res.Latencies)) != res.Requests {
		t.Errorf("%d latencies for %d requests", len(res.Latencies), res.Requests)
	}
	if got, want := res.Unexpected(200, 201, 304), res.Count(404)+res.Count(429)+res.Count(500); got != want || want == 0 {
		t.Errorf("unexpected = %d, want %d (non-zero)", got, want)
	}
	if int64(len(tl.clients)) < answered*9/10 {
		t.Errorf("%d distinct client addresses in %d requests: the builder's rng repeats", len(tl.clients), answered)
	}
	if got := res.StatusSummary(); !strings.HasPrefix(got, "200×") || !strings.Contains(got, " 500×") {
		t.Errorf("summary %q", got)
	}
}

func TestRunKeepsOneConnectionPerWorker(t *testing.T) {
	var dialled atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	const workers = 16
	res, err := load.Run(context.Background(), load.Config{
		Concurrency: workers,
		Warmup:      50 * time.Millisecond,
		Duration:    200 * time.Millisecond,
		Request:     func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", srv.URL, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(200) < workers*10 {
		t.Fatalf("only %s", res)
	}
	// net/http may dial a spare connection when a request finds no idle one while another
	// is on its way back to the pool (on a busy machine it does), so allow twice the
	// workers: without keep-alive there would be one per request.
	if d := dialled.Load(); d > 2*workers {
		t.Errorf("%d connections for %d workers and %d requests: keep-alive is not working", d, workers, res.Requests)
	}
}

func TestWarmupIsNotRecorded(t *testing.T) {
	tl := newTally()
	srv := statusServer(t, tl)
	res, err := load.Run(context.Background(), load.Config{
		Concurrency: 4,
		Warmup:      200 * time.Millisecond,
		Duration:    200 * time.Millisecond,
		Request:     func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", srv.URL, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	tl.mu.Lock()
	answered := tl.statuses[200]
	tl.mu.Unlock()
	if res.Requests == 0 || res.Requests >= answered {
		t.Errorf("recorded %d of the %d answered requests; want some, not all", res.Requests, answered)
	}
	if res.Elapsed != 200*time.Millisecond {
		t.Errorf("elapsed = %v, want the recording window", res.Elapsed)
	}
	if tp := res.Throughput(); tp != float64(res.Requests)/0.2 {
		t.Errorf("throughput = %v for %d requests in 200ms", tp, res.Requests)
	}
}

func TestRunCountsRequestsThatGetNoAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	res, err := load.Run(context.Background(), load.Config{
		Concurrency: 2,
		Duration:    100 * time.Millisecond,
		Request:     func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", "http://"+addr, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != res.Requests || len(res.Statuses) != 0 || res.FirstError == nil {
		t.Fatalf("against a closed port: %s (first error %v)", res, res.FirstError)
	}
	if res.Unexpected(200) != res.Requests {
		t.Errorf("unexpected = %d of %d", res.Unexpected(200), res.Requests)
	}
}

func TestRunStopsWhenTheContextEnds(t *testing.T) {
	tl := newTally()
	srv := statusServer(t, tl)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := load.Run(ctx, load.Config{
		Concurrency: 2,
		Duration:    time.Minute,
		Request:     func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", srv.URL, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second || res.Elapsed > took {
		t.Errorf("took %v, elapsed %v, after a context of 100ms", took, res.Elapsed)
	}
}

func TestRunRefusesABadConfig(t *testing.T) {
	get := func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", "http://127.0.0.1:1", nil) }
	for name, cfg := range map[string]load.Config{
		"no workers":       {Duration: time.Second, Request: get},
		"no duration":      {Concurrency: 1, Request: get},
		"negative warm-up": {Concurrency: 1, Duration: time.Second, Warmup: -time.Second, Request: get},
		"no builder":       {Concurrency: 1, Duration: time.Second},
	} {
		if _, err := load.Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRunMeasuresTheProcessCPUOfTheWindow(t *testing.T) {
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
	window := 300 * time.Millisecond
	res, err := load.Run(context.Background(), load.Config{
		Concurrency: 2,
		Warmup:      50 * time.Millisecond,
		Duration:    window,
		Request:     func(*rand.Rand) (*http.Request, error) { return http.NewRequest("GET", srv.URL, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// The spin loop measures wall time, so on a busy machine a request may cost less CPU
	// than 200µs; a tenth of it is a safe floor. No process uses more than its CPUs.
	limit := time.Duration(runtime.NumCPU())*window + 50*time.Millisecond
	if res.CPU <= 0 || res.CPU > limit || res.CPUPerRequest() < 20*time.Microsecond {
		t.Errorf("CPU %v for %d requests in %v (%v per request)", res.CPU, res.Requests, window, res.CPUPerRequest())
	}
}

func TestPercentileIsTheNearestRank(t *testing.T) {
	var r load.Result
	if r.Percentile(0.5) != 0 {
		t.Errorf("percentile of nothing = %v", r.Percentile(0.5))
	}
	for i := 1; i <= 100; i++ {
		r.Latencies = append(r.Latencies, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.01: 1, 0.5: 50, 0.9: 90, 0.99: 99, 0.995: 100, 1: 100} {
		if got := r.Percentile(q); got != want*time.Millisecond {
			t.Errorf("p%v = %v, want %v", q*100, got, want*time.Millisecond)
		}
	}
	r.Latencies = []time.Duration{7}
	if r.Percentile(0.5) != 7 || r.Percentile(0.99) != 7 {
		t.Errorf("one sample: p50 %v, p99 %v", r.Percentile(0.5), r.Percentile(0.99))
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
