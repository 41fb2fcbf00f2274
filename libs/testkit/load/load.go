// Package load is a small closed-loop HTTP load generator for the load benchmarks of
// `make bench`: a fixed number of workers each send one request, read the whole answer and
// send the next, for a fixed time after a warm-up. It records the status of every answer,
// the exact latency distribution (every sample is kept) and the bytes received.
//
// A closed loop measures throughput at saturation and the latency that goes with it; it is
// the right tool to compare a handler with a bare one on the same machine, not to model
// an open stream of independent clients (latencies under overload are understated).
package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Builder makes the next request of one worker. Each worker has its own rng, so a builder
// can draw random values (a client address, a token, a cuid) without locking; anything
// else it shares between workers must be safe for concurrent use. The request's body, if
// any, must be new for every call.
type Builder func(rng *rand.Rand) (*http.Request, error)

// Config describes one run.
type Config struct {
	// Concurrency is the number of workers, each with at most one request in flight.
	Concurrency int
	// Warmup is how long the workers run before recording starts: it opens the
	// connections and fills the caches of the server under test.
	Warmup time.Duration
	// Duration is how long requests are recorded after the warm-up.
	Duration time.Duration
	// Request builds every request.
	Request Builder
	// Client sends the requests; nil means NewClient(Concurrency).
	Client *http.Client
}

// Result is what a run measured. Only requests that started during the recording window
// count: those of the warm-up are not in it.
type Result struct {
	// Requests is the number of recorded requests, answered or failed.
	Requests int64
	// Statuses counts the recorded answers by HTTP status.
	Statuses map[int]int64
	// Errors counts recorded requests that got no complete answer (transport or body
	// errors); FirstError is the first of them.
	Errors     int64
	FirstError error
	// Bytes is the total size of the recorded response bodies.
	Bytes int64
	// Elapsed is the length of the recording window.
	Elapsed time.Duration
	// Latencies are the answered requests' latencies, sorted ascending.
	Latencies []time.Duration
	// CPU is the CPU time this whole process used during the recording window (zero where
	// it cannot be read). When the server under test runs in the same process, CPU per
	// request compares two servers even on a machine that other work keeps busy, which
	// throughput alone cannot. It includes the load generator's own share.
	CPU time.Duration
}

// Throughput is the number of recorded requests per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Percentile returns the latency at quantile q (0 < q ≤ 1) by the nearest-rank method: the
// smallest recorded latency that at least a fraction q of the samples do not exceed. It is
// 0 when nothing was answered.
func (r Result) Percentile(q float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return r.Latencies[min(max(i, 0), n-1)]
}

// CPUPerRequest is CPU divided by the recorded requests.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// Count returns how many recorded answers had the given status.
func (r Result) Count(status int) int64 { return r.Statuses[status] }

// Unexpected returns how many recorded requests did not end with one of the expected
// statuses, failed requests included.
func (r Result) Unexpected(expected ...int) int64 {
	n := r.Errors
	for status, c := range r.Statuses {
		if !slices.Contains(expected, status) {
			n += c
		}
	}
	return n
}

// StatusSummary lists the statuses and their counts in ascending order, then the errors,
// e.g. "200×1500 429×3 errors×1".
func (r Result) StatusSummary() string {
	codes := make([]int, 0, len(r.Statuses))
	for s := range r.Statuses {
		codes = append(codes, s)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes)+1)
	for _, s := range codes {
		parts = append(parts, strconv.Itoa(s)+"×"+strconv.FormatInt(r.Statuses[s], 10))
	}
	if r.Errors > 0 {
		parts = append(parts, "errors×"+strconv.FormatInt(r.Errors, 10))
	}
	return strings.Join(parts, " ")
}

// String is a one-line summary of the run.
func (r Result) String() string {
	return fmt.Sprintf("%.0f req/s, p50 %v, p90 %v, p99 %v, %v CPU/req, %d requests in %v, %.1f MB, %s",
		r.Throughput(), Round(r.Percentile(0.50)), Round(r.Percentile(0.90)), Round(r.Percentile(0.99)),
		Round(r.CPUPerRequest()), r.Requests, r.Elapsed.Round(time.Millisecond), float64(r.Bytes)/1e6, r.StatusSummary())
}

// Round shortens a latency to three significant digits for printing.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// NewClient returns a keep-alive client for n concurrent workers: it keeps up to n idle
// connections per host (the default of 2 would make most workers dial for every request
// and measure TCP setup instead of the handler), does not ask for compression (so the
// bytes compared are the bytes served) and gives up on a request after 30 s.
func NewClient(n int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        n + 16,
			MaxIdleConnsPerHost: n + 16,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		// A redirect is an answer to record, not something to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// worker is one worker's private tally, merged after the run.
type worker struct {
	statuses  map[int]int64
	errors    int64
	firstErr  error
	bytes     int64
	requests  int64
	latencies []time.Duration
}

// Run sends requests until the warm-up and the recording window have passed, or ctx ends
// (then the result covers what was recorded so far). It fails only on a bad Config; the
// failures of requests are counted in the Result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	client := cfg.Client
	if client == nil {
		client = NewClient(cfg.Concurrency)
		defer client.CloseIdleConnections()
	}

	begin := time.Now()
	recordFrom := begin.Add(cfg.Warmup)
	recordUntil := recordFrom.Add(cfg.Duration)
	ctx, cancel := context.WithDeadline(ctx, recordUntil.Add(time.Minute))
	defer cancel()

	cpu := measureCPU(ctx, recordFrom, recordUntil)

	workers := make([]worker, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.statuses = map[int]int64{}
		rng := rand.New(rand.NewPCG(uint64(begin.UnixNano()), uint64(i)))
		wg.Go(func() { w.loop(ctx, client, cfg.Request, rng, recordFrom, recordUntil) })
	}
	wg.Wait()

	elapsed := cfg.Duration
	if now := time.Now(); now.Before(recordUntil) { // ctx ended early.
		elapsed = max(now.Sub(recordFrom), 0)
	}
	return merge(workers, elapsed, <-cpu), nil
}

// validate reports what makes cfg unusable, if anything.
func (cfg Config) validate() error {
	if cfg.Concurrency < 1 {
		return errors.New("load: Concurrency must be at least 1")
	}
	if cfg.Duration <= 0 || cfg.Warmup < 0 {
		return errors.New("load: Duration must be positive and Warmup not negative")
	}
	if cfg.Request == nil {
		return errors.New("load: Request is required")
	}
	return nil
}

// measureCPU returns the CPU time the process spends between from and until, sent once
// until has passed or ctx has ended (0 when ctx ends before from). The CPU clock is read at the window's
// edges by a goroutine of its own, not by the workers, so that a reading never waits for
// a request in flight.
func measureCPU(ctx context.Context, from, until time.Time) <-chan time.Duration {
	cpu := make(chan time.Duration, 1)
	go func() {
		var start time.Duration
		select {
		case <-time.After(time.Until(from)):
			start = processCPU()
		case <-ctx.Done():
			cpu <- 0
			return
		}
		select {
		case <-time.After(time.Until(until)):
		case <-ctx.Done():
		}
		cpu <- max(processCPU()-start, 0)
	}()
	return cpu
}

// merge adds up the workers' tallies into the Result of a run that recorded for elapsed
// and used cpu, with its latencies sorted.
func merge(workers []worker, elapsed, cpu time.Duration) Result {
	r := Result{Statuses: map[int]int64{}, Elapsed: elapsed, CPU: cpu}
	for i := range workers {
		w := &workers[i]
		r.Requests += w.requests
		r.Errors += w.errors
		r.Bytes += w.bytes
		if r.FirstError == nil {
			r.FirstError = w.firstErr
		}
		for s, c := range w.statuses {
			r.Statuses[s] += c
		}
		r.Latencies = append(r.Latencies, w.latencies...)
	}
	slices.Sort(r.Latencies)
	return r
}

// loop is one worker: it sends requests back to back until the recording window ends.
func (w *worker) loop(ctx context.Context, client *http.Client, build Builder, rng *rand.Rand, from, until time.Time) {
	for ctx.Err() == nil {
		start := time.Now()
		if !start.Before(until) {
			return
		}
		record := !start.Before(from)
		status, n, err := send(ctx, client, build, rng)
		latency := time.Since(start)
		if !record {
			continue
		}
		w.requests++
		w.bytes += n
		if err != nil {
			w.errors++
			if w.firstErr == nil {
				w.firstErr = err
			}
			continue
		}
		w.statuses[status]++
		w.latencies = append(w.latencies, latency)
	}
}

// send makes, sends and fully reads one request, so that its connection can be reused.
func send(ctx context.Context, client *http.Client, build Builder, rng *rand.Rand) (status int, n int64, err error) {
	req, err := build(rng)
	if err != nil {
		return 0, 0, fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, n, fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, n, nil
}

// RandomIPv4 returns a random public-looking IPv4 address (outside 0/8, 10/8, 127/8 and
// the multicast and reserved ranges), to send as the client address in X-Forwarded-For so
// that every request comes from another client, as on the internet.
func RandomIPv4(rng *rand.Rand) string {
	for {
		v := rng.Uint32()
		a := byte(v >> 24)
		if a == 0 || a == 10 || a == 127 || a >= 224 {
			continue
		}
		return strconv.Itoa(int(a)) + "." + strconv.Itoa(int(byte(v>>16))) + "." +
			strconv.Itoa(int(byte(v>>8))) + "." + strconv.Itoa(int(byte(v)))
	}
}
