//go:build loadbench

package sharenote_test

// The load benchmarks of `make bench`: the real all-in-one process on Postgres and Redis,
// behind a trusted proxy so that every request comes from another client address, loaded
// by wrk (libs/testkit/load): a closed loop of connections, from a C program that costs the
// shared cores little. Each case is compared with a bare net/http handler measured
// in the same run, in turns of a second with it, on the same machine, that answers with the same status, content type
// and bytes (for publish: one INSERT of the body), because absolute numbers on a shared
// machine mean little and ratios travel. The scale run compares reads and the owner's list
// at 1,000 and 1,000,000 publications.
//
// Goals are printed beside the ratios and never fail the test: the machine is noisy. The
// test fails only on errors: setup failures and answers other than 2xx. Without wrk on
// PATH the rows it measures are skipped with one line.
//
// Knobs (environment):
//
//	LOADBENCH_CONCURRENCY  connections per measurement (32)
//	LOADBENCH_DURATION     recording window per measurement (3s; wrk counts whole seconds;
//	                       an app and its bare handler take turns of one second)
//	LOADBENCH_WARMUP       warm-up before each window (1s)
//	LOADBENCH_ACCOUNTS     accounts whose tokens the publish case rotates (300)
//	LOADBENCH_ROWS         publications of the scale run (1000000); 0 skips it

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // The "pgx" driver of database/sql, for the bare publish handler.

	"github.com/sharenote/sharenote/libs/cuid"
	sharedb "github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/load"
	"github.com/sharenote/sharenote/services/sharenote"
)

// loadCommand is what `make bench` runs; the report prints it so that a table can be
// reproduced.
const loadCommand = "cd services/sharenote && go test -count=1 -tags loadbench -run LoadBench -v -timeout 30m ."

// benchConfig holds the knobs of one run.
type benchConfig struct {
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	accounts    int
	rows        int
	// pace, when set, is each connection's wait between an answer and its next request.
	pace time.Duration
	// wrk is the wrk binary, "" when it is not installed.
	wrk string
}

func loadBenchConfig(t *testing.T) benchConfig {
	t.Helper()
	return benchConfig{
		concurrency: envInt(t, "LOADBENCH_CONCURRENCY", 32),
		duration:    envDuration(t, "LOADBENCH_DURATION", 3*time.Second),
		warmup:      envDuration(t, "LOADBENCH_WARMUP", time.Second),
		accounts:    envInt(t, "LOADBENCH_ACCOUNTS", 300),
		rows:        envInt(t, "LOADBENCH_ROWS", 1_000_000),
		wrk:         wrkBinary(),
	}
}

// wrkBinary returns the wrk binary, or "" when it is not installed.
func wrkBinary() string {
	bin, err := load.Binary()
	if err != nil {
		return ""
	}
	return bin
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || n < 0 {
		t.Fatalf("%s=%q is not a count", name, s)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q is not a duration", name, s)
	}
	return d
}

// goal is a target a row's ratio must eventually meet.
type goal struct {
	text string
	met  func(ratio float64) bool
}

func atLeast(v float64) goal {
	return goal{fmt.Sprintf("≥ %.2f", v), func(r float64) bool { return r >= v }}
}

func atMost(v float64, of string) goal {
	return goal{fmt.Sprintf("≤ %.2f %s", v, of), func(r float64) bool { return r <= v }}
}

// row is one line of the report. A zero bare result or a NaN ratio prints as "-".
type row struct {
	name        string
	app, bare   load.Result
	ratio       float64
	goal        *goal
	showBareP99 bool
	// latencyOnly rows compare latencies: their throughput columns stay empty.
	latencyOnly bool
}

// report collects the rows and notes of a run and prints them as one table.
type report struct {
	cfg   benchConfig
	rows  []row
	notes []string
}

func (r *report) add(x row) { r.rows = append(r.rows, x) }

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== sharenote load bench: wrk, c=%d, 2 threads, warm-up %v, %v per measurement, Postgres + Redis + MinIO, random X-Forwarded-For per request\n",
		r.cfg.concurrency, r.cfg.warmup, r.cfg.duration)
	cells := [][]string{{"case", "req/s", "bare req/s", "ratio", "goal", "", "p50", "p99", "bare p99", "CPU/req", "bare CPU/req", "PG+Redis/req", "bare PG+Redis/req"}}
	for _, x := range r.rows {
		line := []string{x.name, fmt.Sprintf("%.0f", x.app.Throughput()), "-", "-", "-", "",
			load.Round(x.app.P50).String(), load.Round(x.app.P99).String(), "-",
			load.Round(x.app.CPUPerRequest()).String(), "-", servicesCPU(x.app), "-"}
		if x.bare.Requests > 0 {
			line[2] = fmt.Sprintf("%.0f", x.bare.Throughput())
			line[10] = load.Round(x.bare.CPUPerRequest()).String()
			line[12] = servicesCPU(x.bare)
			if x.showBareP99 {
				line[8] = load.Round(x.bare.P99).String()
			}
		}
		if !math.IsNaN(x.ratio) {
			line[3] = fmt.Sprintf("%.2f", x.ratio)
		}
		if x.goal != nil {
			line[4], line[5] = x.goal.text, "missed"
			if !math.IsNaN(x.ratio) && x.goal.met(x.ratio) {
				line[5] = "met"
			}
		}
		if x.latencyOnly {
			line[1], line[2], line[6], line[9], line[10], line[11], line[12] = "", "", "", "", "", "", ""
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(cells[0]))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	// The case, the goal and its verdict are text, left-aligned; the rest are numbers.
	left := map[int]bool{0: true, 4: true, 5: true}
	for _, line := range cells {
		var l strings.Builder
		for i, c := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				l.WriteString("  ")
			}
			if left[i] {
				l.WriteString(c + pad)
			} else {
				l.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	for _, n := range r.notes {
		b.WriteString(n + "\n")
	}
	fmt.Fprintf(&b, "machine: %s/%s, %d CPUs%s, GOMAXPROCS=%d, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.GOMAXPROCS(0), runtime.Version())
	b.WriteString("CPU/req: CPU time of the test process (the servers; not wrk, Postgres or Redis) per request; steadier than req/s on a shared machine\n")
	b.WriteString("PG+Redis/req: CPU time of the local postgres and redis-server processes per request, in ticks of 10 ms (a server's cost in its services)\n")
	b.WriteString("command: make bench  (" + loadCommand + ")\n")
	return b.String()
}

// watched are the processes whose CPU a measurement reads besides the test process's:
// the services the app uses (and the bare publish handler's Postgres).
var watched = []string{"postgres", "redis-server"}

// servicesCPU is what the watched processes spent per request of res, "-" where it was
// not read.
func servicesCPU(res load.Result) string {
	if res.Watched == nil || res.Requests == 0 {
		return "-"
	}
	return load.Round(watchedPerRequest(res)).String()
}

// watchedPerRequest is what the watched processes spent per request of res.
func watchedPerRequest(res load.Result) time.Duration {
	var sum time.Duration
	for name := range res.Watched {
		sum += res.WatchedPerRequest(name)
	}
	return sum
}

// cpuModel names the processor, best effort (Linux only).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return " (" + strings.TrimSpace(v) + ")"
		}
	}
	return ""
}

// TestLoadBenchAllInOne runs every load case in one process and prints the report.
func TestLoadBenchAllInOne(t *testing.T) {
	cfg := loadBenchConfig(t)
	rep := &report{cfg: cfg}
	defer func() {
		s := rep.String()
		fmt.Print(s)
		t.Log(s)
	}()
	if cfg.wrk == "" {
		rep.note("wrk is not installed (Debian package wrk): the throughput and latency rows are skipped")
	}
	withWrk := func(name string, f func(*testing.T)) {
		t.Run(name, func(t *testing.T) {
			if cfg.wrk == "" {
				t.Skip("wrk is not installed")
			}
			f(t)
		})
	}
	withWrk("public reads", func(t *testing.T) { benchPublicReads(t, cfg, rep) })
	withWrk("publish", func(t *testing.T) { benchPublish(t, cfg, rep) })
	withWrk("publish beside bombs", func(t *testing.T) { benchBombs(t, cfg, rep) })
	t.Run("publish with links", func(t *testing.T) { benchLinks(t, cfg, rep) })
	t.Run("rename", func(t *testing.T) { benchRename(t, rep) })
	t.Run("page with embeds", func(t *testing.T) { benchEmbeds(t, cfg, rep) })
	t.Run("unshare of an embedded note", func(t *testing.T) { benchEmbedUnshare(t, cfg, rep) })
	withWrk("page of large embeds that change", func(t *testing.T) { benchEmbedChanges(t, cfg, rep) })
	t.Run("upload memory", func(t *testing.T) { benchUploadMemory(t, rep) })
	withWrk("scale", func(t *testing.T) {
		if cfg.rows == 0 {
			rep.note("scale run skipped (LOADBENCH_ROWS=0)")
			t.Skip("LOADBENCH_ROWS=0")
		}
		benchScale(t, cfg, rep)
	})
}

// startLoadServer serves the all-in-one app on a fresh Postgres database and Redis key
// space, trusting the loopback proxy's X-Forwarded-For as the ingress's.
func startLoadServer(t *testing.T, env ...string) (*testkit.Server, testkit.Backend) {
	t.Helper()
	b := testkit.PostgresBackend(t)
	return startLoadServerOn(t, b, env...), b
}

// startLoadServerOn is startLoadServer on backend b (the embedded default, or Postgres
// and Redis), with the environment pairs env.
func startLoadServerOn(t *testing.T, b testkit.Backend, env ...string) *testkit.Server {
	t.Helper()
	// Log lines go where a container's stderr would: out of the process, not into a
	// buffer that grows with every line.
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devNull.Close() })
	opts := []testkit.Option{testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"), testkit.WithLogs(devNull)}
	for i := 0; i+1 < len(env); i += 2 {
		opts = append(opts, testkit.WithEnv(env[i], env[i+1]))
	}
	return testkit.StartServer(t, b, sharenote.Program.Targets, opts...)
}

// measure runs wrk against tg (a warm-up, then cfg.duration) and fails the test on
// answers other than 2xx.
func measure(t *testing.T, cfg benchConfig, what string, tg load.Target) load.Result {
	t.Helper()
	return checked(t, what, runWrk(t, cfg, cfg.warmup, cfg.duration, tg))
}

// compare measures app and bare in turns of one second, cfg.duration in all for each,
// so that a drift in the shared machine's load hits both alike, and fails the test on
// answers other than 2xx.
func compare(t *testing.T, cfg benchConfig, what string, app, bare load.Target) (load.Result, load.Result) {
	t.Helper()
	return compareInTurns(t, cfg, time.Second, what, app, bare)
}

// compareInTurns is compare in turns of turn each.
func compareInTurns(t *testing.T, cfg benchConfig, turn time.Duration, what string, app, bare load.Target) (load.Result, load.Result) {
	t.Helper()
	var as, bs []load.Result
	for i := range max(1, int(cfg.duration/turn)) {
		warmup := cfg.warmup
		if i > 0 {
			warmup = 0
		}
		as = append(as, runWrk(t, cfg, warmup, turn, app))
		bs = append(bs, runWrk(t, cfg, warmup, turn, bare))
	}
	return checked(t, what, load.Merge(as...)), checked(t, what+", bare", load.Merge(bs...))
}

func runWrk(t *testing.T, cfg benchConfig, warmup, d time.Duration, tg load.Target) load.Result {
	t.Helper()
	res, err := load.Run(context.Background(), load.Config{Bin: cfg.wrk, Connections: cfg.concurrency, Pace: cfg.pace, Warmup: warmup, Duration: d, Watch: watched}, tg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checked logs res and fails the test when a request got no 2xx answer.
func checked(t *testing.T, what string, res load.Result) load.Result {
	t.Helper()
	t.Logf("%-34s %s", what, res)
	if res.Failed() > 0 || res.Requests == 0 {
		t.Errorf("%s: %d of %d answers were not 2xx: %s", what, res.Failed(), res.Requests, res)
	}
	return res
}

// fetched is one response, read whole.
type fetched struct {
	status      int
	contentType string
	body        []byte
}

// fetch sends one request as the load generator does (no compression asked for).
func fetch(t *testing.T, req *http.Request) fetched {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	req.Header.Set("X-Forwarded-For", load.RandomIPv4(rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fetched{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
}

// bareServer answers every request with f's status, content type and bytes, and nothing
// else: the cost of net/http itself on this machine.
func bareServer(t *testing.T, f fetched) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", f.contentType)
		w.WriteHeader(f.status)
		_, _ = w.Write(f.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// compareGET measures the app and a bare handler serving what the app answered once.
func compareGET(t *testing.T, cfg benchConfig, s *testkit.Server, name, path string, g goal, rep *report) row {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := fetch(t, req)
	if ref.status != http.StatusOK {
		t.Fatalf("%s: GET %s = %d: %s", name, path, ref.status, ref.body)
	}
	bare := bareServer(t, ref)
	x := row{name: fmt.Sprintf("%s (%s)", name, byteSize(len(ref.body))), goal: &g}
	x.app, x.bare = compare(t, cfg, name, load.Target{URL: s.URL, Paths: []string{path}}, load.Target{URL: bare.URL, Paths: []string{path}})
	x.ratio = ratio(x.app.Throughput(), x.bare.Throughput())
	rep.add(x)
	return x
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

func byteSize(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1000)
}

// benchPublicReads measures the four public reads of one note with one image, and the note
// JSON of a second server that writes no access log line, right after the first's, so that
// the difference between the two shows what the per-request log line costs.
func benchPublicReads(t *testing.T, cfg benchConfig, rep *report) {
	s, _ := startLoadServer(t)
	quiet, _ := startLoadServer(t, "SHARE_LOG_LEVEL", "warn")
	id := publishWithImage(t, s, s.NewAccount(t, "reader").Token)
	quietID := publishWithImage(t, quiet, quiet.NewAccount(t, "quiet").Token)
	var n struct{ Content string }
	s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + id}).Expect(t, http.StatusOK, "").Decode(t, &n)
	image := regexp.MustCompile(`/api/images/[^)\s]+`).FindString(n.Content)
	if image == "" {
		t.Fatalf("the note's content %q does not link its image", n.Content)
	}
	on := compareGET(t, cfg, s, "note JSON", "/api/notes/"+id, atLeast(0.6), rep)
	off := compareGET(t, cfg, quiet, "note JSON, access log off", "/api/notes/"+quietID, atLeast(0.6), rep)
	// CPU per request of this process is the steadier measure on a shared machine. The
	// servers log to /dev/null, as to a container's stderr (startLoadServer).
	rep.note("access log line: note JSON %.0f req/s with it, %.0f without (%.2f×); CPU/req %v with it, %v without: ≈ %v per line",
		on.app.Throughput(), off.app.Throughput(), ratio(on.app.Throughput(), off.app.Throughput()),
		load.Round(on.app.CPUPerRequest()), load.Round(off.app.CPUPerRequest()), load.Round(on.app.CPUPerRequest()-off.app.CPUPerRequest()))
	compareGET(t, cfg, s, "page", "/s/"+id, atLeast(0.65), rep)
	compareGET(t, cfg, s, "OG PNG", "/api/og/"+id+".png", atLeast(0.65), rep)
	compareGET(t, cfg, s, "image", image, atLeast(0.65), rep)
}

// publishWithImage publishes a 4 KB note that shows one small PNG and returns its cuid.
func publishWithImage(t *testing.T, s *testkit.Server, token string) string {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("title", "Trip notes")
	_ = w.WriteField("content", load.Note(4000, "tram.png"))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="tram.png"; filename="tram.png"`)
	h.Set("Content-Type", "image/png")
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(testkit.PNG(t))
	_ = w.Close()
	var created struct{ CUID string }
	s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: token, Body: body.Bytes(), ContentType: w.FormDataContentType()}).
		Expect(t, http.StatusOK, "").Decode(t, &created)
	return created.CUID
}

// publishTarget returns the POSTs of a 4 KB JSON note (the body it returns) to a base URL,
// from accounts of s in turn, so that none nears its 60 mutations a minute.
func publishTarget(t *testing.T, cfg benchConfig, s *testkit.Server) (func(base string) load.Target, []byte) {
	t.Helper()
	start := time.Now()
	tokens := make([]string, max(cfg.accounts, 1))
	for i := range tokens {
		tokens[i] = s.NewAccount(t, fmt.Sprintf("writer%03d", i)).Token
	}
	t.Logf("%d accounts in %v", len(tokens), time.Since(start).Round(time.Millisecond))
	body, err := json.Marshal(map[string]any{
		"title": "Trip notes", "content": load.Note(3700, ""), "summary": "A long weekend in Lisbon.",
		"show_properties": true, "properties": map[string]any{"tags": []string{"travel", "lisbon"}, "rating": 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(base string) load.Target {
		return load.Target{URL: base, Method: "POST", Paths: []string{"/api/publish"}, Tokens: tokens, Body: body,
			Header: map[string]string{"Content-Type": "application/json"}}
	}, body
}

// benchPublish measures POST /api/publish of a 4 KB JSON note against a bare handler that
// does exactly one INSERT of the body into a table of the same database.
func benchPublish(t *testing.T, cfg benchConfig, rep *report) {
	s, b := startLoadServer(t)
	publish, body := publishTarget(t, cfg, s)
	ref, err := http.NewRequest("POST", s.URL+"/api/publish", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ref.Header.Set("Authorization", "Bearer "+publish(s.URL).Tokens[0])
	ref.Header.Set("Content-Type", "application/json")
	answer := fetch(t, ref)
	if answer.status != http.StatusOK {
		t.Fatalf("publish = %d: %s", answer.status, answer.body)
	}

	// The bare handler gets the pool the app's database package configures, so that both
	// sides have the same number of connections to Postgres.
	db, err := sql.Open("pgx", b.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(sharedb.MaxConns)
	db.SetMaxIdleConns(sharedb.MaxConns)
	if _, err := db.Exec(`CREATE TABLE loadbench_bare_publish (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 2_000_000))
		if err == nil {
			_, err = db.ExecContext(r.Context(), `INSERT INTO loadbench_bare_publish (body) VALUES ($1)`, string(in))
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", answer.contentType)
		w.WriteHeader(answer.status)
		_, _ = w.Write(answer.body)
	}))
	t.Cleanup(bare.Close)

	name := fmt.Sprintf("publish (%s JSON)", byteSize(len(body)))
	x := row{name: name, goal: ptr(atLeast(0.35)), showBareP99: true}
	x.app, x.bare = compare(t, cfg, "publish", publish(s.URL), publish(bare.URL))
	x.ratio = ratio(x.app.Throughput(), x.bare.Throughput())
	rep.add(x)
	rep.note("publish: Postgres %v and Redis %v of CPU per publish; Postgres %v per bare INSERT",
		load.Round(x.app.WatchedPerRequest("postgres")), load.Round(x.app.WatchedPerRequest("redis-server")), load.Round(x.bare.WatchedPerRequest("postgres")))
	p99 := x
	p99.name = "publish p99 vs bare p99"
	p99.ratio = ratio(float64(x.app.P99), float64(x.bare.P99))
	p99.goal = ptr(atMost(3, "× bare"))
	p99.latencyOnly = true
	rep.add(p99)
}

// benchBombs measures other accounts' publishes while two accounts publish, one after
// another, the largest notes of a shape goldmark used to parse in quadratic time, and
// reports their p99 beside the bombs over their p99 alone.
func benchBombs(t *testing.T, cfg benchConfig, rep *report) {
	s, _ := startLoadServer(t)
	publish, _ := publishTarget(t, cfg, s)
	alone := measure(t, cfg, "publish, alone", publish(s.URL))
	bomb, err := json.Marshal(map[string]any{"content": strings.Repeat("[a](b", 1_800_000/5)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var started, finished atomic.Int64
	var wg sync.WaitGroup
	for i := range 2 {
		token := s.NewAccount(t, fmt.Sprintf("bomber%d", i)).Token
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/publish", bytes.NewReader(bomb))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				started.Add(1)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					finished.Add(1)
				}
			}
		})
	}
	beside := measure(t, cfg, "publish, beside two bombs", publish(s.URL))
	stop()
	wg.Wait()
	rep.add(row{name: "publish p99 beside two bombs", app: beside, bare: alone, showBareP99: true, latencyOnly: true,
		ratio: ratio(float64(beside.P99), float64(alone.P99)), goal: ptr(atMost(2, "× alone"))})
	// A bomb still rendering when the window ends is cancelled: it started, not finished.
	rep.note("publish beside bombs: the bare p99 column is the same publishes alone; %d bomb publishes of %s started meanwhile, %d finished",
		started.Load(), byteSize(len(bomb)), finished.Load())
}

func ptr[T any](v T) *T { return &v }

// benchUploadMemory sends multipart publishes of five 4.8 MB images, SHARE_MAX_UPLOADS (8)
// at a time, into MinIO, and reports the memory one upload holds: the peak of the Go heap
// in use above the idle server's, divided by the uploads in flight (about the 1 MiB
// chunk reserved against the quota and one 5 MiB part of the S3 multipart upload), and
// the heap it allocates in all.
func benchUploadMemory(t *testing.T, rep *report) {
	const (
		uploads, inFlight = 32, 8
		images, imageSize = 5, 4_800_000
	)
	s, _ := startLoadServer(t)
	tokens := make([]string, inFlight)
	for i := range tokens {
		tokens[i] = s.NewAccount(t, fmt.Sprintf("uploader%d", i)).Token
	}
	heap := func() uint64 {
		m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(m)
		return m[0].Value.Uint64()
	}
	allocated := func() uint64 {
		m := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(m)
		return m[0].Value.Uint64()
	}
	runtime.GC()
	idle, allocBefore := heap(), allocated()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			if h := heap(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	began := time.Now()
	var wg sync.WaitGroup
	for c := range inFlight {
		wg.Go(func() {
			for range uploads / inFlight {
				if status := streamImages(t, s.URL, tokens[c], images, imageSize); status != http.StatusOK {
					t.Errorf("upload answered %d", status)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	close(stop)
	sampler.Wait()
	perUpload := (peak.Load() - min(idle, peak.Load())) / inFlight
	rep.note("upload memory: %d publishes of %d × %.1f MB images into MinIO, %d at a time, in %v: peak Go heap %.1f MiB above idle, "+
		"%.1f MiB per upload in flight; %.1f MiB allocated per upload", uploads, images, float64(imageSize)/1e6, inFlight,
		took.Round(time.Millisecond), float64(peak.Load()-min(idle, peak.Load()))/(1<<20), float64(perUpload)/(1<<20),
		float64(allocated()-allocBefore)/uploads/(1<<20))
}

// streamImages publishes a note of n images of size bytes each, generated while they are
// sent, and returns the status.
func streamImages(t *testing.T, base, token string, n, size int) int {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			if err := mw.WriteField("content", "Images."); err != nil {
				return err
			}
			for i := range n {
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%d.png"; filename="%d.png"`, i, i))
				h.Set("Content-Type", "image/png")
				w, err := mw.CreatePart(h)
				if err != nil {
					return err
				}
				png := testkit.PNG(t)
				if _, err := io.Copy(w, io.MultiReader(bytes.NewReader(png), io.LimitReader(zeros{}, int64(size-len(png))))); err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("POST", base+"/api/publish", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// zeros yields zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// scaleAccounts is the number of other accounts the scale run's publications belong to;
// the measured owner has every tenth publication.
const scaleAccounts = 999

// benchScale measures a public read of random publications and the owner's list (first
// page and a page deep in it) at 1,000 publications, tops the table up to cfg.rows with
// COPY, and measures again. The read cache is off here: at 1,000 rows every note would
// be served from memory, and the run compares what the database does at both sizes.
func benchScale(t *testing.T, cfg benchConfig, rep *report) {
	s, b := startLoadServer(t, "SHARE_CACHE_BYTES", "0")
	rep.note("scale run: the read cache is off, so every read is one query")
	owner := s.NewAccount(t, "owner")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })

	others := make([]string, scaleAccounts)
	for i := range others {
		others[i] = cuid.New()
	}
	now := time.Now().UTC()
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"accounts"}, []string{"cuid", "name", "email", "display_name", "created_at"},
		pgx.CopyFromSlice(len(others), func(i int) ([]any, error) {
			name := fmt.Sprintf("Seeded %d", i)
			return []any{others[i], name, fmt.Sprintf("seeded%d@example.com", i), name, now}, nil
		})); err != nil {
		t.Fatalf("seed accounts: %v", err)
	}

	seeder := &scaleSeeder{conn: conn, owner: owner.UserCUID, others: others, now: now, rng: rand.New(rand.NewPCG(7, 7))}
	small := min(1000, cfg.rows)
	seeder.seed(t, small)
	at1k := measureScale(t, cfg, s, owner.Token, seeder)

	took := seeder.seed(t, cfg.rows)
	rep.note("scale run: seeded %d publications with COPY in %v (+ VACUUM ANALYZE %v)", cfg.rows-small,
		took.copy.Round(100*time.Millisecond), took.analyze.Round(100*time.Millisecond))
	atN := measureScale(t, cfg, s, owner.Token, seeder)

	label := func(n int) string {
		if n >= 1_000_000 && n%1_000_000 == 0 {
			return strconv.Itoa(n/1_000_000) + "M"
		}
		if n >= 1000 && n%1000 == 0 {
			return strconv.Itoa(n/1000) + "k"
		}
		return strconv.Itoa(n)
	}
	g := atMost(1.5, "p50 vs "+label(small))
	for i, what := range []string{"read random note", "list, first page", "list, deep page"} {
		rep.add(row{name: what + " @" + label(small), app: at1k[i], ratio: math.NaN()})
		rep.add(row{name: what + " @" + label(cfg.rows), app: atN[i], goal: &g,
			ratio: ratio(float64(atN[i].P50), float64(at1k[i].P50))})
	}
}

// scaleSeeder adds publications to the scale run's database with COPY.
type scaleSeeder struct {
	conn   *pgx.Conn
	owner  string
	others []string
	now    time.Time
	rng    *rand.Rand
	// cuids are every seeded publication's; owned counts the owner's.
	cuids []string
	owned int
}

type seedTimes struct{ copy, analyze time.Duration }

// seedBatch is the number of rows of one COPY: big enough that a round trip is nothing,
// small enough that one batch is a few seconds of work.
const seedBatch = 100_000

// seed tops the publications up to total rows, in batches, then refreshes the planner's
// statistics and the visibility map as autovacuum would after a bulk load.
func (s *scaleSeeder) seed(t *testing.T, total int) seedTimes {
	t.Helper()
	ctx := context.Background()
	var took seedTimes
	start := time.Now()
	// Seeded rows look as if the current renderer had published them: stored HTML of the
	// renderer's version, so that a read serves them as it serves any note.
	columns := []string{"cuid", "account_cuid", "title", "summary", "content", "show_properties", "created_ms", "created_at", "updated_at",
		"html", "render_version", "etag"}
	for len(s.cuids) < total {
		n := min(seedBatch, total-len(s.cuids))
		first := len(s.cuids)
		i := 0
		rows := pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			k := first + i
			i++
			id := cuid.New()
			s.cuids = append(s.cuids, id)
			account := s.others[k%len(s.others)]
			if k%10 == 0 {
				account = s.owner
				s.owned++
			}
			// Creation times spread over two years, so that every list page mixes ages.
			created := s.now.Add(-time.Duration(s.rng.Int64N(int64(2 * 365 * 24 * time.Hour)))).Truncate(time.Millisecond)
			title := fmt.Sprintf("Seeded note %d", k)
			return []any{id, account, title, "A seeded publication of the scale run.", seedContent(k), true,
				created.UnixMilli(), created, created, seedHTML(k), render.Version, id}, nil
		})
		if _, err := s.conn.CopyFrom(ctx, pgx.Identifier{"publications"}, columns, rows); err != nil {
			t.Fatalf("seed publications: %v", err)
		}
	}
	took.copy = time.Since(start)
	start = time.Now()
	for _, table := range []string{"publications", "accounts"} {
		if _, err := s.conn.Exec(ctx, "VACUUM (ANALYZE) "+table); err != nil {
			t.Fatalf("vacuum %s: %v", table, err)
		}
	}
	took.analyze = time.Since(start)
	t.Logf("%d publications (%d the owner's): COPY %v, VACUUM ANALYZE %v", len(s.cuids), s.owned,
		took.copy.Round(time.Millisecond), took.analyze.Round(time.Millisecond))
	return took
}

// seedContent is a short Markdown body, different for every row.
func seedContent(k int) string {
	return fmt.Sprintf("# Seeded note %d\n\nThis publication was seeded by the scale run of the load bench. "+
		"It has a heading, *some emphasis*, a [link](https://example.com/%d) and a list:\n\n- one\n- two\n- three\n\n"+
		"The body is short on purpose: a million rows of it must load in seconds.\n", k, k)
}

// seedHTML is seedContent(k) as the renderer renders it.
func seedHTML(k int) string {
	return fmt.Sprintf(`<h1 id="seeded-note-%d">Seeded note %d</h1>`+"\n"+`<p>This publication was seeded by the scale run of the load bench. `+
		`It has a heading, <em>some emphasis</em>, a <a href="https://example.com/%d" rel="nofollow">link</a> and a list:</p>`+"\n"+
		"<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>\n<p>The body is short on purpose: a million rows of it must load in seconds.</p>\n", k, k, k)
}

// measureScale measures a public read of random publications, the owner's first list page
// and pages deep in the list, and returns the three results in that order.
func measureScale(t *testing.T, cfg benchConfig, s *testkit.Server, token string, seeder *scaleSeeder) [3]load.Result {
	t.Helper()
	label := strconv.Itoa(len(seeder.cuids))
	read := measure(t, cfg, "read random note @"+label, load.Target{URL: s.URL, Paths: notePaths(seeder.cuids, seeder.rng)})
	first := measure(t, cfg, "list, first page @"+label, load.Target{URL: s.URL, Paths: []string{"/api/user/notes"}, Tokens: []string{token}})
	var deep []string
	for _, c := range deepCursors(t, s, token, seeder.owned) {
		deep = append(deep, "/api/user/notes?cursor="+url.QueryEscape(c))
	}
	deepRes := measure(t, cfg, "list, deep page @"+label, load.Target{URL: s.URL, Paths: deep, Tokens: []string{token}})
	return [3]load.Result{read, first, deepRes}
}

// readSample is how many publications the random reads of the scale run draw from: wrk
// keeps its paths in memory, twice (one list per thread).
const readSample = 100_000

// notePaths returns the note JSON paths of up to readSample publications drawn at random.
func notePaths(cuids []string, rng *rand.Rand) []string {
	paths := make([]string, min(len(cuids), readSample))
	for i := range paths {
		paths[i] = "/api/notes/" + cuids[rng.IntN(len(cuids))]
	}
	return paths
}

// deepCursors walks the owner's list through its cursors to the middle and returns the
// next_cursor of up to 20 pages from there: real cursors that point deep into the list.
func deepCursors(t *testing.T, s *testkit.Server, token string, owned int) []string {
	t.Helper()
	step := min(max(owned/20, 1), 100)
	var (
		cursors []string
		cursor  string
		depth   int
	)
	start := time.Now()
	for len(cursors) < 20 {
		path := "/api/user/notes?limit=" + strconv.Itoa(step)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		req, err := http.NewRequest("GET", s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp := fetch(t, req)
		if resp.status != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", path, resp.status, resp.body)
		}
		var page struct {
			Notes      []json.RawMessage `json:"notes"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(resp.body, &page); err != nil {
			t.Fatalf("list page: %v", err)
		}
		depth += len(page.Notes)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
		if depth >= owned/2 {
			cursors = append(cursors, cursor)
		}
	}
	if len(cursors) == 0 {
		t.Fatalf("no cursor past the middle of a list of %d", owned)
	}
	t.Logf("walked %d of %d listed publications in %v for %d deep cursors", depth, owned, time.Since(start).Round(time.Millisecond), len(cursors))
	return cursors
}
