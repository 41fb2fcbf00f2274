package edge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/outbox"
)

// The purge requests: PURGE / to each edge, with the keys to drop at once in
// HeaderPurge or those to mark stale in HeaderSoftPurge (Varnish's xkey), or with
// HeaderPurgeAll for everything.
const (
	HeaderPurge     = "xkey-purge"
	HeaderSoftPurge = "xkey-softpurge"
	HeaderPurgeAll  = "Purge-All"
)

// Bounds of the worker; the defaults suit production, tests lower them.
type Bounds struct {
	// Batch is how many rows one Run takes (at most one Run per job tick: the rate bound).
	Batch int
	// MaxBacklog due rows, or a due row older than OutageBound, are replaced by one purge
	// of everything.
	MaxBacklog  int
	OutageBound time.Duration
	// Resend is how long after its first send a row is sent again: past the change
	// feed's second, when no replica serves the state before the change any more.
	Resend time.Duration
	// Retry is how soon rows whose send failed are due again.
	Retry time.Duration
	// Timeout bounds the requests of one Run; Lease, longer, is how long a claim keeps
	// rows from other workers.
	Timeout, Lease time.Duration
	// MaxKeys is how many keys one request carries.
	MaxKeys int
}

// DefaultBounds are the production bounds.
var DefaultBounds = Bounds{Batch: 2000, MaxBacklog: 20_000, OutageBound: time.Minute, Resend: 1100 * time.Millisecond,
	Retry: 200 * time.Millisecond, Timeout: 3 * time.Second, Lease: 15 * time.Second, MaxKeys: 200}

// Worker sends the changes of the outbox (libs/outbox, its Edge reader) to the edges.
type Worker struct {
	db     *gorm.DB
	keys   *Keys
	urls   []string
	bounds Bounds
	now    func() time.Time
	client *http.Client

	requests, errs, everything prometheus.Counter
}

// NewWorker returns the worker sending the outbox of gdb to urls, with its metrics
// registered on reg.
func NewWorker(gdb *gorm.DB, keys *Keys, urls []string, b Bounds, now func() time.Time, reg prometheus.Registerer) *Worker {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_edge_" + name, Help: help})
	}
	w := &Worker{db: gdb, keys: keys, urls: urls, bounds: b, now: now, client: &http.Client{},
		requests:   c("purge_requests_total", "PURGE requests the edges accepted."),
		errs:       c("purge_errors_total", "Rounds of purges that an edge refused or did not answer; their rows are sent again."),
		everything: c("purge_everything_total", "Times the outbox's backlog or an edge outage passed its bound, so that everything was purged once instead.")}
	reg.MustRegister(w.requests, w.errs, w.everything)
	return w
}

// Run sends the due purges once: everything, when the backlog passed its bounds, else
// up to Batch rows, each key once (requestsFor).
func (w *Worker) Run(ctx context.Context) error {
	now := w.now()
	n, oldest, err := outbox.Edge.Backlog(ctx, w.db, now)
	if err != nil || n == 0 {
		return err
	}
	limit := w.bounds.Batch
	if w.overflows(n, oldest, now) {
		limit = all
	}
	rows, err := outbox.Edge.Claim(ctx, w.db, now, now.Add(w.bounds.Lease), limit)
	if err != nil || len(rows) == 0 {
		return err
	}
	// Whoever claimed the backlog decides on it: two workers never both purge everything.
	oldest = time.UnixMilli(slices.MinFunc(rows, func(a, b outbox.Row) int { return cmp.Compare(a.CreatedMS, b.CreatedMS) }).CreatedMS)
	everything := w.overflows(len(rows), oldest, now)
	var reqs []http.Header
	if everything {
		reqs = []http.Header{{HeaderPurgeAll: {"true"}}}
	} else if reqs, err = w.requestsFor(ctx, rows); err != nil {
		return errors.Join(err, outbox.Edge.Retry(context.WithoutCancel(ctx), w.db, rows, w.now().Add(w.bounds.Retry), nil))
	}
	sendCtx, cancel := context.WithTimeout(ctx, w.bounds.Timeout)
	defer cancel()
	if err := w.send(sendCtx, reqs); err != nil {
		w.errs.Inc()
		return errors.Join(err, outbox.Edge.Retry(context.WithoutCancel(ctx), w.db, rows, w.now().Add(w.bounds.Retry), nil))
	}
	if everything {
		w.everything.Inc()
	}
	return w.sent(context.WithoutCancel(ctx), rows, everything)
}

// sent records that rows were sent: those sent before, or all of them with final, are
// done; the others are due again after Resend, for their second send.
func (w *Worker) sent(ctx context.Context, rows []outbox.Row, final bool) error {
	var first, done []outbox.Row
	for _, r := range rows {
		if r.EdgeSends == 0 && !final {
			first = append(first, r)
		} else {
			done = append(done, r)
		}
	}
	if err := outbox.Edge.Done(ctx, w.db, done); err != nil {
		return err
	}
	return outbox.Edge.Retry(ctx, w.db, first, w.now().Add(w.bounds.Resend), map[string]any{"edge_sends": 1})
}

// all is a claim's limit that takes every due row.
const all = 1 << 30

// overflows reports whether n due rows, the oldest written at oldest, pass the bounds.
func (w *Worker) overflows(n int, oldest, now time.Time) bool {
	return n > w.bounds.MaxBacklog || now.Sub(oldest) > w.bounds.OutageBound
}

// requestsFor turns rows into the headers of the requests to send: each key once, hard
// where any row wants it hard. A change of a note drops its content key, hard or soft as
// the change is, and its reference key when what links to it show changed (References);
// a change without a note drops both keys of every note of its account (accountNotes),
// hard or soft as the change is, and a change of the account's names does so soft; every
// row drops its account's author key, which the reads over the cap of note keys carry
// (package doc).
func (w *Worker) requestsFor(ctx context.Context, rows []outbox.Row) ([]http.Header, error) {
	hard, soft := map[string]bool{}, map[string]bool{}
	add := func(key string, h bool) {
		if h {
			hard[key] = true
		} else {
			soft[key] = true
		}
	}
	wide := map[string]bool{} // The accounts of rows without a note: whether one is hard.
	for _, r := range rows {
		c := r.Change()
		add(w.keys.Author(c.Account), c.Hard)
		if c.Note == "" {
			wide[c.Account] = wide[c.Account] || c.Hard
			continue
		}
		add(w.keys.Content(c.Note), c.Hard)
		if c.References {
			add(w.keys.Reference(c.Note), c.Hard)
		}
		if _, ok := wide[c.Account]; c.Names && !ok {
			wide[c.Account] = false
		}
	}
	if len(wide) > 0 {
		notes, err := accountNotes(ctx, w.db, slices.Sorted(maps.Keys(wide)))
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			add(w.keys.Content(n.CUID), wide[n.AccountCUID])
			add(w.keys.Reference(n.CUID), wide[n.AccountCUID])
		}
	}
	for k := range hard {
		delete(soft, k)
	}
	return append(w.headers(HeaderPurge, slices.Collect(maps.Keys(hard))), w.headers(HeaderSoftPurge, slices.Collect(maps.Keys(soft)))...), nil
}

// headers are the requests that carry keys in header name, MaxKeys each.
func (w *Worker) headers(name string, keys []string) []http.Header {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []http.Header
	for len(keys) > 0 {
		n := min(len(keys), w.bounds.MaxKeys)
		out = append(out, http.Header{name: {strings.Join(keys[:n], " ")}})
		keys = keys[n:]
	}
	return out
}

// send sends every request to every edge; an error when any of them failed.
func (w *Worker) send(ctx context.Context, reqs []http.Header) error {
	for _, u := range w.urls {
		for _, h := range reqs {
			if err := w.purge(ctx, u, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// purge sends one PURGE request to the edge at u. Its errors, which the purge job logs,
// name the edge as config.Redact shows it: a purge URL may carry a password or a token.
func (w *Worker) purge(ctx context.Context, u string, h http.Header) error {
	shown := config.Redact(u)
	req, err := http.NewRequestWithContext(ctx, "PURGE", strings.TrimSuffix(u, "/")+"/", nil)
	if err != nil {
		return fmt.Errorf("purge %s: %w", shown, redactURLError(err))
	}
	req.Header = h
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("purge %s: %w", shown, redactURLError(err))
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("purge %s: %s", shown, resp.Status)
	}
	w.requests.Inc()
	return nil
}

// redactURLError redacts the URL that an error of the HTTP client quotes (it hides a
// userinfo password, not a token in the query).
func redactURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = config.Redact(ue.URL)
	}
	return err
}
