// Package changefeed tells every process of an installation about the changes that make
// cached public reads and sessions stale: a publication changed, an account's settings
// changed, an account's sessions were revoked. With Redis the events travel over one
// pub/sub channel; without it (the embedded default) they reach only the process that
// made them, and the caches fall back to trusting nothing older than MaxUntrustedAge.
//
// The feed also answers the question every cache asks before serving an entry: has every
// change made since the entry was loaded reached this process? That is true only while
// the subscription is confirmed alive (a message or a pong within confirmWindow) and has
// been so since before the entry was loaded, no message of another process was found
// missing since then, and this process has sent every change it made. Otherwise entries
// are served at most MaxUntrustedAge old until the feed is consistent again.
//
// Sending: Publish hands an event to this process's handlers before it returns and adds
// it to a set of pending events (the same event pends once); Deliver and Send do the two
// halves apart, for the relay of the outbox of changes (libs/outbox), which is how the
// changes of public reads reach the feed: the committing process Delivers at once, its
// relay Sends the rows it claimed and records them as announced once Redis took them. One sender takes everything
// pending and publishes it in as few messages as fit (maxMessage bytes each), pipelined
// in one round trip, so that a burst of one account's changes costs a round trip or two
// and does not hold back another account's change queued behind it. A set that would
// grow past maxPending events is replaced by one Everything event, which makes every
// process drop its cached reads: nothing is dropped silently. Events whose PUBLISH fails
// stay pending and are sent again; until they are, this process distrusts its own cache.
//
// Messages: "<origin>.<seq>" and then each event as " <kind>:<id>", where origin names
// the sending process (a cuid made when it starts) and seq numbers its messages from 1.
// A receiver remembers the last seq of each origin. A seq that skips one is a gap (a
// message was lost): entries loaded before it are distrusted. A seq at or below the last
// is a message sent again after a PUBLISH that seemed to fail; its events are delivered
// again, which is harmless. An origin's first message is no gap, and after a
// resubscription every origin is new (the resubscription distrusts what was loaded
// before it). The release before sent "<origin> <kind>:<id>", one event and no sequence
// number: such messages are delivered, but since they cannot show a gap they distrust
// entries loaded before them, as does anything this release cannot read (a later
// release's message, a kind it does not know), which may have carried an invalidation.
// The release before reads this release's messages of one event and ignores the others,
// so while both run (a rolling upgrade) its processes may miss a burst, as they could
// before.
//
// Files: changefeed.go holds the Feed, its events, bounds and metrics, and Run; send.go
// the sending side (Publish, the pending set, the sender and Flush); wire.go the message
// format (encode, decode); receive.go the subscription and what each message tells;
// trust.go the answer the caches ask for (Trusts, Fresh) and what moves it.
package changefeed

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/sharenote/sharenote/libs/cuid"
)

// MaxUntrustedAge is how old a cached entry may be when the feed cannot vouch for it
// (docs/api.md "Caching and invalidation": visible everywhere within one second).
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
	// Everything: anything may have changed (a sender had more changes pending than it
	// keeps apart); ID is empty. Caches drop every entry; the receiving feeds also
	// distrust what was loaded before it, for the caches that do not know the kind.
	Everything Kind = '*'
)

func (k Kind) known() bool {
	switch k {
	case Note, Account, Sessions, Everything:
		return true
	}
	return false
}

// Event is one change. IDs are cuids: they hold no spaces.
type Event struct {
	Kind Kind
	ID   string
}

// Timings of the subscription's health checks: a ping after pingEvery of silence, and
// trust only while something arrived within confirmWindow. A change missed by a silently
// dead connection is served stale for at most confirmWindow, under MaxUntrustedAge with
// room for the reload; a live connection has confirmWindow-pingEvery (600 ms) to answer a
// ping, which a busy process on a shared machine needs (400 ms was seen to lapse in CI).
// A failed PUBLISH is tried again after retryEvery.
const (
	pingEvery     = 200 * time.Millisecond
	confirmWindow = 800 * time.Millisecond
	retryEvery    = 250 * time.Millisecond
	sendTimeout   = 500 * time.Millisecond
)

// Bounds: the distinct events pending before they become one Everything event (about
// 100 bytes each), the size of one message (a burst of 5,000 changes takes three), and
// the senders whose sequence a receiver remembers (processes started since it
// subscribed; forgetting them distrusts the cache once).
const (
	maxPending = 1 << 14
	maxMessage = 64 << 10
	maxOrigins = 1024
)

// Feed publishes and receives change events.
type Feed struct {
	rdb     *redis.Client // nil: this process only.
	channel string
	// origin names this feed in its messages, so that it skips its own echoes (Publish
	// already delivered them here) and receivers can follow its sequence.
	origin string
	log    *slog.Logger

	mu       sync.RWMutex
	handlers []func(Event)

	// trustedSince is when the feed last became consistent: the current subscription was
	// confirmed, or a message found missing was noticed (Unix ns; 0: no subscription).
	trustedSince atomic.Int64
	// lastSeen is when the subscription last showed it was alive (Unix ns).
	lastSeen atomic.Int64
	// unsent is set while events whose PUBLISH failed wait to be sent again.
	unsent atomic.Bool

	// pending holds the events not yet taken by a send, each once (queued).
	pendingMu sync.Mutex
	pending   []Event
	queued    map[Event]struct{}
	wake      chan struct{}

	// sendMu lets one send run at a time, so that messages reach Redis in sequence; seq
	// is the sequence number of the last message Redis took.
	sendMu sync.Mutex
	seq    uint64

	// Used by the receive loop only: the last sequence number of each origin, and when
	// each kind of warning was last logged.
	lastSeq map[string]uint64
	warned  map[string]time.Time

	subscribed   prometheus.Gauge
	resubs       prometheus.Counter
	lapses       prometheus.Counter
	received     prometheus.Counter
	gaps         prometheus.Counter
	unreadable   prometheus.Counter
	sendErrors   prometheus.Counter
	overflows    prometheus.Counter
	messagesSent prometheus.Counter
	eventsSent   prometheus.Counter
}

// counter is the feed's counter sharenote_changefeed_<name>.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "sharenote_changefeed_" + name, Help: help})
}

// New returns a feed over rdb (nil: this process only) on the channel <prefix>changes,
// with its metrics registered on reg. Run must be running for events to travel, or Flush
// called.
func New(rdb *redis.Client, prefix string, log *slog.Logger, reg prometheus.Registerer) *Feed {
	f := &Feed{rdb: rdb, channel: prefix + "changes", origin: cuid.New(), log: log,
		queued: map[Event]struct{}{}, wake: make(chan struct{}, 1), lastSeq: map[string]uint64{}, warned: map[string]time.Time{},
		subscribed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sharenote_changefeed_subscribed",
			Help: "1 while this process receives every change made by the others (Redis subscription confirmed alive), else 0: caches then trust nothing older than 1 s."}),
		resubs:       counter("subscriptions_total", "Subscriptions confirmed: the first, and one after every lost connection."),
		lapses:       counter("lapses_total", "Times a confirmed subscription went unconfirmed for a while (no message or pong within the confirm window, as on a stalled process): cached entries older than 1 s were re-checked meanwhile."),
		received:     counter("received_total", "Change events received from other processes."),
		gaps:         counter("gaps_total", "Gaps in another process's message sequence (messages lost): cached entries loaded before were re-checked within 1 s."),
		unreadable:   counter("unreadable_total", "Messages that could not be checked or read (a release without sequence numbers, a later release, an unknown kind of change): cached entries loaded before were re-checked within 1 s."),
		sendErrors:   counter("send_errors_total", "PUBLISH round trips that failed; their events stay pending and are sent again, and this process re-checks its cached entries every second until they are."),
		overflows:    counter("overflows_total", "Times more distinct changes were pending than the feed keeps apart, so that one change that drops every cached read in every process was sent instead."),
		messagesSent: counter("messages_sent_total", "Messages published to Redis (each carries several change events when many are pending)."),
		eventsSent:   counter("events_sent_total", "Change events published to Redis."),
	}
	reg.MustRegister(f.subscribed, f.resubs, f.lapses, f.received, f.gaps, f.unreadable, f.sendErrors, f.overflows, f.messagesSent, f.eventsSent,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sharenote_changefeed_pending", Help: "Change events waiting to be published to Redis."},
			func() float64 { f.pendingMu.Lock(); defer f.pendingMu.Unlock(); return float64(len(f.pending)) }))
	return f
}

// OnChange registers fn to be called with every event, from this process or another.
// fn must be quick and must not block.
func (f *Feed) OnChange(fn func(Event)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers = append(f.handlers, fn)
}

// Deliver hands e to this process's handlers only (OnChange).
func (f *Feed) Deliver(e Event) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, fn := range f.handlers {
		fn(e)
	}
}

// Origin names this process in its messages.
func (f *Feed) Origin() string { return f.origin }

// Run subscribes and sends until ctx ends; without Redis it only waits. It returns once
// both loops have stopped, after one last try at sending what is pending.
func (f *Feed) Run(ctx context.Context) {
	if f.rdb == nil {
		<-ctx.Done()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.sendLoop(ctx) })
	f.receive(ctx)
	wg.Wait()
}
