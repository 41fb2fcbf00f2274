// Package load drives the load benchmarks of `make bench` with wrk, a load generator
// written in C: a fixed number of connections each send one request, read the answer and
// send the next (a closed loop), for a fixed time after a warm-up. wrk costs far less CPU
// per request than the servers it loads, so on a machine of few cores a comparison of two
// handlers measures the handlers, not the generator (a Go generator saturated at about
// half of wrk's rate on a bare handler, squeezing every ratio toward 1).
//
// A closed loop measures throughput at saturation and the latency that goes with it; it is
// the right tool to compare a handler with a bare one on the same machine, not to model
// an open stream of independent clients (latencies under overload are understated).
package load

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Result is what a run measured in its recording window (the warm-up is not in it).
type Result struct {
	// Requests is the number of answered requests.
	Requests int64
	// Bad counts the answers whose status was not 2xx or 3xx.
	Bad int64
	// Errors counts the requests that got no complete answer (connect, read, write and
	// timeout errors).
	Errors int64
	// Bytes is the total size of the answers, headers included.
	Bytes int64
	// Elapsed is the length of the recording window.
	Elapsed time.Duration
	// P50, P90 and P99 are latency percentiles from wrk's distribution.
	P50, P90, P99 time.Duration
	// CPU is the CPU time this process (the servers under test, not wrk) used during the
	// recording window, zero where it cannot be read. When the server under test runs in
	// this process, CPU per request compares two servers even on a machine that other work
	// keeps busy, which throughput alone cannot.
	CPU time.Duration
	// Watched is the CPU time of the processes of each name in Config.Watch during the
	// recording window, counted in ticks of 10 ms; nil where /proc cannot be read.
	Watched map[string]time.Duration
}

// Throughput is the number of answered requests per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// CPUPerRequest is CPU divided by the answered requests.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// WatchedPerRequest is the CPU time of the processes named name divided by the answered
// requests.
func (r Result) WatchedPerRequest(name string) time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.Watched[name] / time.Duration(r.Requests)
}

// Failed is the number of requests that were not answered with 2xx or 3xx.
func (r Result) Failed() int64 { return r.Bad + r.Errors }

// String is a one-line summary of the run.
func (r Result) String() string {
	return fmt.Sprintf("%.0f req/s, p50 %v, p90 %v, p99 %v, %v CPU/req, %d requests in %v, %.1f MB, %d not 2xx/3xx, %d errors",
		r.Throughput(), Round(r.P50), Round(r.P90), Round(r.P99), Round(r.CPUPerRequest()), r.Requests,
		r.Elapsed.Round(time.Millisecond), float64(r.Bytes)/1e6, r.Bad, r.Errors)
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

// RandomIPv4 returns a random public-looking IPv4 address (not 0/8, 10/8, 127/8, or
// multicast and above), as the X-Forwarded-For of a client behind the ingress; the load
// script draws its addresses from about the same ranges.
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

// Merge adds up the results of runs that took turns with the runs of another server (so
// that a drift in the machine's load hits both alike): counts, bytes, windows and CPU
// are summed, and each latency percentile is the median of the runs'.
func Merge(rs ...Result) Result {
	var m Result
	for _, r := range rs {
		m.Requests += r.Requests
		m.Bad += r.Bad
		m.Errors += r.Errors
		m.Bytes += r.Bytes
		m.Elapsed += r.Elapsed
		m.CPU += r.CPU
		for name, d := range r.Watched {
			if m.Watched == nil {
				m.Watched = map[string]time.Duration{}
			}
			m.Watched[name] += d
		}
	}
	median := func(f func(Result) time.Duration) time.Duration {
		ds := make([]time.Duration, len(rs))
		for i, r := range rs {
			ds[i] = f(r)
		}
		slices.Sort(ds)
		if len(ds) == 0 {
			return 0
		}
		return ds[len(ds)/2]
	}
	m.P50 = median(func(r Result) time.Duration { return r.P50 })
	m.P90 = median(func(r Result) time.Duration { return r.P90 })
	m.P99 = median(func(r Result) time.Duration { return r.P99 })
	return m
}
