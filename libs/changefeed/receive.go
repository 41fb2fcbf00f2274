package changefeed

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

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
		f.Deliver(e)
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
