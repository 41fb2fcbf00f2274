// Package changefeed tells every process of an installation about the changes that make
// cached public reads and sessions stale: a publication changed, an account's settings
// changed, an account's sessions were revoked. With Redis the events travel over one
// pub/sub channel; without it (the embedded default) they reach only the process that
// made them, and the caches fall back to trusting nothing older than MaxUntrustedAge.
//
// The feed also answers the question every cache asks before serving an entry: has every
// change made since the entry was loaded reached this process? That is true only while
// the subscription is confirmed alive (a message or a pong within confirmWindow) and has
// been so since before the entry was loaded. A process that lost its subscription thus
// serves entries at most MaxUntrustedAge old until it has resubscribed.
package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/sharenote/sharenote/libs/cuid"
)

// MaxUntrustedAge is how old a cached entry may be when the feed cannot vouch for it
// (CONTRACT.md "Caching and invalidation": visible everywhere within one second).
const MaxUntrustedAge = time.Second

// Kind is what changed.
type Kind byte

// The kinds of change.
const (
	// Note: a publication changed (published, updated, unpublished); ID is its cuid.
	Note Kind = 'n'
	// Account: an account's settings changed; ID is the account cuid.
	Account Kind = 'a'
	// Sessions: an account's sessions were revoked (license deactivated); ID is the
	// account cuid.
	Sessions Kind = 's'
)

// Event is one change.
type Event struct {
	Kind Kind
	ID   string
}

// encode writes e as a message from the feed named origin: "<origin> <kind>:<id>".
func (e Event) encode(origin string) string { return origin + " " + string(e.Kind) + ":" + e.ID }

// decode reads a message; ok is false for a malformed one.
func decode(s string) (origin string, e Event, ok bool) {
	origin, rest, found := strings.Cut(s, " ")
	if !found || len(rest) < 3 || rest[1] != ':' {
		return "", Event{}, false
	}
	return origin, Event{Kind: Kind(rest[0]), ID: rest[2:]}, true
}

// Timings of the subscription's health checks: a ping after pingEvery of silence, and
// trust only while something arrived within confirmWindow. A change missed by a silently
// dead connection is served stale for at most confirmWindow, under MaxUntrustedAge with
// room for the reload; a live connection has confirmWindow-pingEvery (600 ms) to answer a
// ping, which a busy process on a shared machine needs (400 ms was seen to lapse in CI).
const (
	pingEvery     = 200 * time.Millisecond
	confirmWindow = 800 * time.Millisecond
	retryEvery    = 250 * time.Millisecond
	sendTimeout   = 500 * time.Millisecond
	queueSize     = 4096
)

// Feed publishes and receives change events.
type Feed struct {
	rdb     *redis.Client // nil: this process only.
	channel string
	// origin names this feed in its messages, so that it skips its own echoes: Publish
	// already delivered them here.
	origin string
	log    *slog.Logger

	mu       sync.RWMutex
	handlers []func(Event)

	// trustedSince is when the current subscription was confirmed (Unix ns; 0: none).
	trustedSince atomic.Int64
	// lastSeen is when the subscription last showed it was alive (Unix ns).
	lastSeen atomic.Int64
	outbox   chan Event

	subscribed prometheus.Gauge
	resubs     prometheus.Counter
	lapses     prometheus.Counter
	received   prometheus.Counter
	sendErrors prometheus.Counter
	dropped    prometheus.Counter
}

// counter is the feed's counter sharenote_changefeed_<name>.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_changefeed_" + name, Help: help})
}

// New returns a feed over rdb (nil: this process only) on the channel <prefix>changes,
// with its metrics registered on reg. Run must be running for events to travel.
func New(rdb *redis.Client, prefix string, log *slog.Logger, reg prometheus.Registerer) *Feed {
	f := &Feed{rdb: rdb, channel: prefix + "changes", origin: cuid.New(), log: log, outbox: make(chan Event, queueSize),
		subscribed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharenote_changefeed_subscribed",
			Help: "1 while this process receives every change made by the others (Redis subscription confirmed alive), else 0: caches then trust nothing older than 1 s."}),
		resubs:     counter("subscriptions_total", "Subscriptions confirmed: the first, and one after every lost connection."),
		lapses:     counter("lapses_total", "Times a confirmed subscription went unconfirmed for a while (no message or pong within the confirm window, as on a stalled process): cached entries older than 1 s were re-checked meanwhile."),
		received:   counter("received_total", "Change events received from other processes."),
		sendErrors: counter("send_errors_total", "Change events that could not be published to Redis."),
		dropped:    counter("dropped_total", "Change events not published because the outgoing queue was full."),
	}
	reg.MustRegister(f.subscribed, f.resubs, f.lapses, f.received, f.sendErrors, f.dropped)
	return f
}

// OnChange registers fn to be called with every event, from this process or another.
// fn must be quick and must not block.
func (f *Feed) OnChange(fn func(Event)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers = append(f.handlers, fn)
}

// Publish delivers e to this process's handlers before it returns, and queues it for
// the other processes. It never blocks on Redis.
func (f *Feed) Publish(e Event) {
	f.deliver(e)
	if f.rdb == nil {
		return
	}
	select {
	case f.outbox <- e:
	default:
		f.dropped.Inc()
	}
}

// NoteChanged publishes a Note event (note.Notifier).
func (f *Feed) NoteChanged(_ context.Context, cuid string) { f.Publish(Event{Note, cuid}) }

// SettingsChanged publishes an Account event (account.Notifier).
func (f *Feed) SettingsChanged(_ context.Context, accountCUID string) {
	f.Publish(Event{Account, accountCUID})
}

// LinksChanged publishes an Account event (note.Notifier): what an account's note links
// lead to may have changed, so every cached read of its notes is dropped.
func (f *Feed) LinksChanged(_ context.Context, accountCUID string) {
	f.Publish(Event{Account, accountCUID})
}

// SessionsRevoked publishes a Sessions event (account.Notifier).
func (f *Feed) SessionsRevoked(_ context.Context, accountCUID string) {
	f.Publish(Event{Sessions, accountCUID})
}

func (f *Feed) deliver(e Event) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, fn := range f.handlers {
		fn(e)
	}
}

// Trusts reports whether every change made since loadedAt has reached this process, so
// that an entry loaded then is still current unless an event dropped it.
func (f *Feed) Trusts(loadedAt time.Time) bool {
	since := f.trustedSince.Load()
	return since != 0 && loadedAt.UnixNano() >= since && time.Now().UnixNano()-f.lastSeen.Load() < int64(confirmWindow)
}

// Fresh reports whether an entry loaded at loadedAt (by the wall clock) may still be
// served: the feed vouches for it, or it is younger than MaxUntrustedAge.
func (f *Feed) Fresh(loadedAt time.Time) bool {
	return time.Since(loadedAt) < MaxUntrustedAge || f.Trusts(loadedAt)
}

// Run subscribes and sends until ctx ends; without Redis it only waits. It returns once
// both loops have stopped, with the outgoing queue sent as far as Redis allowed.
func (f *Feed) Run(ctx context.Context) {
	if f.rdb == nil {
		<-ctx.Done()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.send(ctx) })
	f.receive(ctx)
	wg.Wait()
}

// Flush sends the queued events to Redis now: for a process that exits right after a
// change and does not Run (an operator command).
func (f *Feed) Flush(ctx context.Context) error {
	var errList []error
	for {
		select {
		case e := <-f.outbox:
			errList = append(errList, f.rdb.Publish(ctx, f.channel, e.encode(f.origin)).Err())
		default:
			return errors.Join(errList...)
		}
	}
}

func (f *Feed) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-f.outbox:
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
			err := f.rdb.Publish(sctx, f.channel, e.encode(f.origin)).Err()
			cancel()
			if err != nil {
				f.sendErrors.Inc()
				f.log.Warn("change not published", "kind", string(e.Kind), "err", err)
			}
		}
	}
}

func (f *Feed) receive(ctx context.Context) {
	ps := f.rdb.Subscribe(ctx, f.channel)
	defer func() { _ = ps.Close() }()
	defer f.untrust()
	for ctx.Err() == nil {
		msg, err := ps.ReceiveTimeout(ctx, pingEvery)
		now := time.Now().UnixNano()
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				f.lastSeen.Store(now)
				f.trustedSince.Store(now)
				f.subscribed.Set(1)
				f.resubs.Inc()
			}
		case *redis.Message:
			f.alive(now)
			if origin, e, ok := decode(m.Payload); ok && origin != f.origin {
				f.received.Inc()
				f.deliver(e)
			}
		case *redis.Pong:
			f.alive(now)
		}
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// Silence: ask for a pong, which also shows a dead connection.
			if perr := ps.Ping(ctx); perr == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		f.untrust()
		select {
		case <-ctx.Done():
		case <-time.After(retryEvery):
		}
	}
}

// alive records a sign of life of the subscription at now, and counts a lapse when the
// previous one was a confirm window or more before: Trusts was false in between.
func (f *Feed) alive(now int64) {
	if prev := f.lastSeen.Swap(now); f.trustedSince.Load() != 0 && now-prev >= int64(confirmWindow) {
		f.lapses.Inc()
	}
}

func (f *Feed) untrust() {
	if f.trustedSince.Swap(0) != 0 {
		f.subscribed.Set(0)
		f.log.Warn("change feed subscription lost; cached reads are re-checked every second until it is back")
	}
}
