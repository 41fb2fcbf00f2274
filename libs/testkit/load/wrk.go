package load

import (
	"bytes"
	"context"
	_ "embed" // The load script.
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// script is the wrk script every run uses; see its header for what it sends.
//
//go:embed wrk.lua
var script []byte

// Binary returns the path of the wrk binary (Debian package `wrk`) on PATH, or an error
// that says it is missing.
func Binary() (string, error) {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return "", fmt.Errorf("load: wrk is not installed (Debian package wrk): %w", err)
	}
	return p, nil
}

// Target is what a run sends.
type Target struct {
	// URL is the server's base, scheme://host:port.
	URL string
	// Method is the request method; empty means GET.
	Method string
	// Paths are the request paths (with query); each request takes one at random.
	Paths []string
	// Header holds extra request headers. Every request also carries a random
	// X-Forwarded-For, so that per-IP limits see many clients, as behind an ingress.
	Header map[string]string
	// Tokens, if any, are sent as bearer tokens, one after another, as clients of many
	// accounts would.
	Tokens []string
	// Body is every request's body.
	Body []byte
}

// Config describes one run.
type Config struct {
	// Bin is the wrk binary (Binary's answer).
	Bin string
	// Connections is the number of connections, each with one request in flight.
	Connections int
	// Threads is the number of wrk's threads; 0 means 2.
	Threads int
	// Pace, when set, is how long each connection waits after an answer before it sends
	// its next request (wrk's delay()): readers who read at a rate, where a run without it
	// saturates the server. Whole milliseconds.
	Pace time.Duration
	// Warmup is how long wrk runs before the recorded run, opening connections and filling
	// the caches of the server under test; Duration is the recorded run. wrk counts whole
	// seconds: both are rounded up to one.
	Warmup, Duration time.Duration
	// Watch names local processes (by their name in /proc, such as postgres and
	// redis-server) whose CPU time during the recorded run goes into Result.Watched, so
	// that a server's cost in its database shows beside its own (Linux only).
	Watch []string
}

// Run runs wrk against tg: a warm-up, then the recorded run. It fails when wrk cannot run
// or prints no result; answers that are not 2xx or 3xx are counted in the Result.
func Run(ctx context.Context, cfg Config, tg Target) (Result, error) {
	if cfg.Connections < 1 || cfg.Duration <= 0 || len(tg.Paths) == 0 {
		return Result{}, errors.New("load: a run needs connections, a duration and a path")
	}
	dir, err := os.MkdirTemp("", "loadwrk")
	if err != nil {
		return Result{}, fmt.Errorf("load: %w", err)
	}
	defer os.RemoveAll(dir)
	args, err := prepare(dir, cfg, tg)
	if err != nil {
		return Result{}, err
	}
	var env []string
	if cfg.Pace > 0 {
		env = []string{"SHARENOTE_WRK_PACE_MS=" + strconv.FormatInt(cfg.Pace.Milliseconds(), 10)}
	}
	if cfg.Warmup > 0 {
		if _, err := wrk(ctx, cfg.Bin, seconds(cfg.Warmup), args, env); err != nil {
			return Result{}, err
		}
	}
	cpu, watched := processCPU(), namedCPU(cfg.Watch)
	out, err := wrk(ctx, cfg.Bin, seconds(cfg.Duration), args, env)
	used, watchedAfter := processCPU()-cpu, namedCPU(cfg.Watch)
	if err != nil {
		return Result{}, err
	}
	res, err := parse(out)
	res.CPU = max(used, 0)
	if watched != nil {
		res.Watched = make(map[string]time.Duration, len(cfg.Watch))
		for _, name := range cfg.Watch {
			res.Watched[name] = max(watchedAfter[name]-watched[name], 0)
		}
	}
	return res, err
}

// prepare writes the script and its inputs into dir and returns wrk's arguments but the
// duration.
func prepare(dir string, cfg Config, tg Target) ([]string, error) {
	var in strings.Builder
	if tg.Method != "" {
		fmt.Fprintf(&in, "method %s\n", tg.Method)
	}
	for _, p := range tg.Paths {
		fmt.Fprintf(&in, "path %s\n", p)
	}
	for _, k := range slices.Sorted(maps.Keys(tg.Header)) {
		fmt.Fprintf(&in, "header %s: %s\n", k, tg.Header[k])
	}
	for _, tok := range tg.Tokens {
		fmt.Fprintf(&in, "token %s\n", tok)
	}
	files := map[string][]byte{"wrk.lua": script}
	if tg.Body != nil {
		fmt.Fprintf(&in, "body %s\n", filepath.Join(dir, "body"))
		files["body"] = tg.Body
	}
	files["input"] = []byte(in.String())
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
	}
	threads := cfg.Threads
	if threads == 0 {
		threads = 2
	}
	return []string{"-t", strconv.Itoa(min(threads, cfg.Connections)), "-c", strconv.Itoa(cfg.Connections),
		"--timeout", "10s", "-s", filepath.Join(dir, "wrk.lua"), tg.URL, "--", filepath.Join(dir, "input")}, nil
}

// seconds is d in wrk's duration syntax, rounded up to a whole second.
func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))) + "s"
}

// wrk runs the binary for duration, with env added to this process's environment, and
// returns what it printed.
func wrk(ctx context.Context, bin, duration string, args, env []string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{"-d", duration}, args...)...)
	cmd.Stdout, cmd.Stderr, cmd.Env = &out, &errOut, append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("load: wrk: %w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// parse reads the script's "wrk-result k=v …" line.
func parse(out string) (Result, error) {
	var line string
	for l := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(l, "wrk-result "); ok {
			line = strings.TrimSpace(rest)
		}
	}
	if line == "" {
		return Result{}, fmt.Errorf("load: wrk printed no result: %q", out)
	}
	v := map[string]int64{}
	for _, kv := range strings.Fields(line) {
		k, s, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Result{}, fmt.Errorf("load: wrk result %q: %w", kv, err)
		}
		v[k] = n
	}
	us := func(k string) time.Duration { return time.Duration(v[k]) * time.Microsecond }
	return Result{
		Requests: v["requests"], Bad: v["status"], Errors: v["connect"] + v["read"] + v["write"] + v["timeout"],
		Bytes: v["bytes"], Elapsed: us("duration_us"), P50: us("p50_us"), P90: us("p90_us"), P99: us("p99_us"),
	}, nil
}
