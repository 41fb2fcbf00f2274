package outbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/note"
)

// Timings of the relay: it looks for rows every relayEvery besides when its own process
// wakes it (the rows of a process that died before its relay took them, or of another
// process without a relay); a claim keeps rows from other relays for relayLease, so that
// a row whose relay died is announced within relayEvery+relayLease of its commit, inside
// the change feed's second (changefeed.MaxUntrustedAge). Failures are logged at most once
// every relayLogEvery (a Redis outage fails every round).
const (
	relayEvery    = 200 * time.Millisecond
	relayLease    = 500 * time.Millisecond
	relayBatch    = 1000
	relayLogEvery = 10 * time.Second
)

// Relay announces the rows of changes on the change feed, and is the notifier of the
// changes its own process commits: note.Notifier, and account.Notifier.
type Relay struct {
	db   *gorm.DB
	feed *changefeed.Feed
	log  *slog.Logger
	wake chan struct{}

	relayed *prometheus.CounterVec
	errs    prometheus.Counter
}

// NewRelay returns the relay of the changes in gdb to feed, with its metrics registered
// on reg.
func NewRelay(gdb *gorm.DB, feed *changefeed.Feed, log *slog.Logger, reg prometheus.Registerer) *Relay {
	r := &Relay{db: gdb, feed: feed, log: log, wake: make(chan struct{}, 1),
		relayed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sharenote_changes_relayed_total",
			Help: "Changes of public reads this process's relay announced on the change feed, by who committed them: this process, or another that did not announce them itself (it died first, or an operator command)."},
			[]string{"committer"}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_changes_relay_errors_total",
			Help: "Rounds of the relay that failed (the database or Redis); their changes are taken again once the claim's lease ends."})}
	reg.MustRegister(r.relayed, r.errs)
	return r
}

// Changed tells this process's caches of ch, which its process committed, at once, and
// wakes the relay to announce it to the others (note.Notifier).
func (r *Relay) Changed(_ context.Context, ch note.Change) {
	for _, e := range events(ch) {
		r.feed.Deliver(e)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// SettingsChanged is Changed of every read of the account (account.Notifier).
func (r *Relay) SettingsChanged(ctx context.Context, accountCUID string) {
	r.Changed(ctx, note.Change{Account: accountCUID})
}

// SessionsRevoked publishes the revocation on the change feed (account.Notifier): it
// changes no public read, and is not in the table.
func (r *Relay) SessionsRevoked(_ context.Context, accountCUID string) {
	r.feed.Publish(changefeed.Event{Kind: changefeed.Sessions, ID: accountCUID})
}

// Run relays until ctx ends: when woken, and every relayEvery.
func (r *Relay) Run(ctx context.Context) {
	t := time.NewTicker(relayEvery)
	defer t.Stop()
	var logged time.Time
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayLease)
			_ = r.Once(last)
			cancel()
			return
		case <-r.wake:
		case <-t.C:
		}
		err := r.Once(ctx)
		if err != nil && ctx.Err() == nil {
			r.errs.Inc()
		}
		if err != nil && ctx.Err() == nil && time.Since(logged) >= relayLogEvery {
			logged = time.Now()
			r.log.WarnContext(ctx, "changes not relayed to the change feed yet; they are kept and tried again", "err", err)
		}
	}
}

// Once announces the due rows: it tells this process's caches of those another process
// committed, sends all of them on the feed, and records them as announced once Redis took
// them. Rows it could not send stay claimed until their lease ends, and are then taken
// again, by this relay or another.
func (r *Relay) Once(ctx context.Context) error {
	for {
		now := time.Now()
		rows, err := Feed.Claim(ctx, r.db, now, now.Add(relayLease), relayBatch)
		if err != nil || len(rows) == 0 {
			return err
		}
		var all []changefeed.Event
		mine := 0
		for _, row := range rows {
			es := events(row.Change())
			if row.Origin == r.feed.Origin() {
				mine++
			} else {
				for _, e := range es {
					r.feed.Deliver(e)
				}
			}
			all = append(all, es...)
		}
		if err := r.feed.Send(ctx, all...); err != nil {
			return err
		}
		if err := Feed.Done(context.WithoutCancel(ctx), r.db, rows); err != nil {
			return err
		}
		r.relayed.WithLabelValues("this").Add(float64(mine))
		r.relayed.WithLabelValues("other").Add(float64(len(rows) - mine))
		if len(rows) < relayBatch {
			return nil
		}
	}
}

// events are the change feed's events of c: its note's reads, and every read of its
// account when c is wide (note.Change.Wide).
func events(c note.Change) []changefeed.Event {
	var out []changefeed.Event
	if c.Note != "" {
		out = append(out, changefeed.Event{Kind: changefeed.Note, ID: c.Note})
	}
	if c.Wide() {
		out = append(out, changefeed.Event{Kind: changefeed.Account, ID: c.Account})
	}
	return out
}
