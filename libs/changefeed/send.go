package changefeed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Publish delivers e to this process's handlers before it returns, and queues it for
// the other processes. It never blocks on Redis.
func (f *Feed) Publish(e Event) {
	f.Deliver(e)
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

// Send queues events for the other processes, without delivering them here, and sends
// everything pending at once: for the relay of changes (libs/outbox), which records a
// change as announced only once Redis took it. Without Redis it does nothing. Events it
// could not send stay pending and are sent again (Run), like those of Publish.
func (f *Feed) Send(ctx context.Context, events ...Event) error {
	if f.rdb == nil {
		return nil
	}
	f.pendingMu.Lock()
	for _, e := range events {
		f.queue(e)
	}
	f.pendingMu.Unlock()
	err := f.send(ctx)
	if err != nil {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
	return err
}

// SessionsRevoked publishes a Sessions event (account.Notifier).
func (f *Feed) SessionsRevoked(_ context.Context, accountCUID string) {
	f.Publish(Event{Sessions, accountCUID})
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
