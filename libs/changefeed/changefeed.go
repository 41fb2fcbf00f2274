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
// it to a set of pending events (the same event pends once). One sender takes everything
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
package changefeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
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

// Publish delivers e to this process's handlers before it returns, and queues it for
// the other processes. It never blocks on Redis.
func (f *Feed) Publish(e Event) {
	f.deliver(e)
	if f.rdb == nil {
		return
	}
	f.pendingMu.Lock()
	f.queue(e)
	f.pendingMu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
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

// queue adds e to the pending events unless it, or an Everything event, is pending
// already; past maxPending the pending events become one Everything event. The caller
// holds pendingMu.
func (f *Feed) queue(e Event) {
	all := Event{Kind: Everything}
	if _, ok := f.queued[e]; ok {
		return
	}
	if _, ok := f.queued[all]; ok {
		return
	}
	if e.Kind != Everything && len(f.pending) < maxPending {
		f.pending = append(f.pending, e)
		f.queued[e] = struct{}{}
		return
	}
	if e.Kind != Everything {
		f.overflows.Inc()
		f.log.Warn("too many changes pending for the change feed; sending one that drops every cached read instead", "pending", len(f.pending))
	}
	clear(f.queued)
	f.pending = []Event{all}
	f.queued[all] = struct{}{}
}

// take returns the pending events and leaves none.
func (f *Feed) take() []Event {
	f.pendingMu.Lock()
	defer f.pendingMu.Unlock()
	p := f.pending
	f.pending = nil
	clear(f.queued)
	return p
}

// requeue makes events pending again, ahead of those queued since they were taken.
func (f *Feed) requeue(events []Event) {
	f.pendingMu.Lock()
	defer f.pendingMu.Unlock()
	later := f.pending
	f.pending = nil
	clear(f.queued)
	for _, e := range events {
		f.queue(e)
	}
	for _, e := range later {
		f.queue(e)
	}
}

// message is one message as read: the sender's origin and sequence number (0: a message
// of the release before) and its events.
type message struct {
	origin string
	seq    uint64
	events []Event
}

// batch is one message to send and the number of events it carries.
type batch struct {
	payload string
	events  int
}

// encode packs events into messages of at most maxMessage bytes (or one event), numbered
// from seq on.
func (f *Feed) encode(seq uint64, events []Event) []batch {
	var out []batch
	var b strings.Builder
	n := 0
	begin := func() {
		b.Reset()
		b.WriteString(f.origin)
		b.WriteByte('.')
		b.WriteString(strconv.FormatUint(seq+uint64(len(out)), 10))
	}
	begin()
	for _, e := range events {
		if n > 0 && b.Len()+3+len(e.ID) > maxMessage {
			out = append(out, batch{b.String(), n})
			n = 0
			begin()
		}
		b.WriteByte(' ')
		b.WriteByte(byte(e.Kind))
		b.WriteByte(':')
		b.WriteString(e.ID)
		n++
	}
	return append(out, batch{b.String(), n})
}

// decode reads a message; ok is false for one this release cannot read.
func decode(s string) (m message, ok bool) {
	head, rest, _ := strings.Cut(s, " ")
	origin, seqText, sequenced := strings.Cut(head, ".")
	if origin == "" {
		return message{}, false
	}
	if !sequenced {
		// The release before: "<origin> <kind>:<id>".
		if len(rest) < 3 || rest[1] != ':' {
			return message{}, false
		}
		return message{origin: origin, events: []Event{{Kind(rest[0]), rest[2:]}}}, true
	}
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil || seq == 0 {
		return message{}, false
	}
	m = message{origin: origin, seq: seq}
	if rest == "" {
		return m, true
	}
	for tok := range strings.SplitSeq(rest, " ") {
		if len(tok) < 2 || tok[1] != ':' {
			return message{}, false
		}
		m.events = append(m.events, Event{Kind(tok[0]), tok[2:]})
	}
	return m, true
}

// Trusts reports whether every change made since loadedAt has reached this process, so
// that an entry loaded then is still current unless an event dropped it.
func (f *Feed) Trusts(loadedAt time.Time) bool {
	since := f.trustedSince.Load()
	return since != 0 && loadedAt.UnixNano() >= since && !f.unsent.Load() &&
		time.Now().UnixNano()-f.lastSeen.Load() < int64(confirmWindow)
}

// Fresh reports whether an entry loaded at loadedAt (by the wall clock) may still be
// served: the feed vouches for it, or it is younger than MaxUntrustedAge.
func (f *Feed) Fresh(loadedAt time.Time) bool {
	return time.Since(loadedAt) < MaxUntrustedAge || f.Trusts(loadedAt)
}

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

// Flush sends the pending events now: for a process that exits right after a change and
// does not Run (an operator command). Events it could not send stay pending.
func (f *Feed) Flush(ctx context.Context) error {
	if f.rdb == nil {
		return nil
	}
	return f.send(ctx)
}

func (f *Feed) sendLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
			_ = f.send(sctx)
			cancel()
			return
		case <-f.wake:
		}
		for {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
			err := f.send(sctx)
			cancel()
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryEvery):
			}
		}
	}
}

// send publishes every pending event, in as few messages as fit, pipelined. The events
// of messages Redis did not take are pending again, and the feed distrusts its cache
// until they are sent.
func (f *Feed) send(ctx context.Context) error {
	f.sendMu.Lock()
	defer f.sendMu.Unlock()
	events := f.take()
	if len(events) == 0 {
		return nil
	}
	batches := f.encode(f.seq+1, events)
	cmds, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, b := range batches {
			p.Publish(ctx, f.channel, b.payload)
		}
		return nil
	})
	taken, sent := 0, 0
	for taken < len(batches) && taken < len(cmds) && cmds[taken].Err() == nil {
		sent += batches[taken].events
		taken++
	}
	f.seq += uint64(taken)
	f.messagesSent.Add(float64(taken))
	f.eventsSent.Add(float64(sent))
	if taken == len(batches) {
		if f.unsent.Swap(false) {
			f.log.Info("change feed: the changes kept back are published")
		}
		return nil
	}
	// The sequence number of the first message not taken is used again: a receiver that
	// got it after all sees a message sent again, not a gap.
	f.requeue(events[sent:])
	f.sendErrors.Inc()
	if err == nil {
		err = errors.New("not every message was published")
	}
	if !f.unsent.Swap(true) {
		f.log.Warn("changes not published; they are kept and sent again, and cached reads are re-checked every second until then",
			"pending", len(events)-sent, "err", err)
	}
	return fmt.Errorf("publish changes: %w", err)
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
				// What was sent before is covered by distrusting what was loaded before.
				clear(f.lastSeq)
				f.lastSeen.Store(now)
				f.trustedSince.Store(now)
				f.subscribed.Set(1)
				f.resubs.Inc()
			}
		case *redis.Message:
			f.alive(now)
			f.handle(m.Payload, now)
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

// handle delivers the events of a message received at now, and distrusts the entries
// loaded before it when it shows that a message was lost or it cannot be checked.
func (f *Feed) handle(payload string, now int64) {
	m, ok := decode(payload)
	if !ok {
		f.unreadable.Inc()
		f.distrustBefore(now)
		f.warn("unreadable", "a change feed message could not be read; cached reads are re-checked", "message", clip(payload))
		return
	}
	if m.origin == f.origin {
		return
	}
	last, known := f.lastSeq[m.origin]
	switch {
	case m.seq == 0:
		f.unreadable.Inc()
		f.distrustBefore(now)
		f.warn("unsequenced", "a change feed message without a sequence number (a process of the release before); cached reads are re-checked", "origin", m.origin)
	case known && m.seq > last+1:
		f.gaps.Inc()
		f.distrustBefore(now)
		f.log.Warn("change feed messages were lost; cached reads are re-checked", "origin", m.origin, "missed", m.seq-last-1)
	case !known && len(f.lastSeq) >= maxOrigins:
		clear(f.lastSeq)
		f.distrustBefore(now)
	}
	if m.seq > last {
		f.lastSeq[m.origin] = m.seq
	}
	for _, e := range m.events {
		if !e.Kind.known() {
			f.unreadable.Inc()
			f.distrustBefore(now)
			f.warn("kind", "a change of a kind this release does not know; cached reads are re-checked", "kind", string(e.Kind))
			continue
		}
		if e.Kind == Everything {
			f.distrustBefore(now)
		}
		f.received.Inc()
		f.deliver(e)
	}
}

// warn logs msg at most once a minute for each reason: a process of another release may
// send many such messages.
func (f *Feed) warn(reason, msg string, args ...any) {
	if t, ok := f.warned[reason]; ok && time.Since(t) < time.Minute {
		return
	}
	f.warned[reason] = time.Now()
	f.log.Warn(msg, args...)
}

// clip shortens s for a log line.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// distrustBefore makes entries loaded before now untrusted (served at most
// MaxUntrustedAge old), while the subscription goes on vouching for those loaded after.
func (f *Feed) distrustBefore(now int64) {
	for {
		since := f.trustedSince.Load()
		if since == 0 || since >= now || f.trustedSince.CompareAndSwap(since, now) {
			return
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
