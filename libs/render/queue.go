package render

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Renders wait for a slot in a work-conserving fair queue: a free slot goes to the
// tenants (accounts) with renders waiting in turn, so that one account's slow notes
// delay another account's render by at most the wait for one slot, however many it
// sends. There are twice as many slots as CPUs: a running render cannot be interrupted,
// so a newcomer should find a free slot and share the CPUs with the renders running
// rather than wait for one of them to end. One tenant holds at most all slots but one,
// which stays free for the others; that still lets a lone author, publishing a whole
// vault at once, use every CPU.

// queueWait bounds the wait for a slot. A render that does not get one in time is shown
// whole as text for now (reasonBusy), and the caller is told that it may try again.
const queueWait = 3 * time.Second

// slots is the process's render queue.
var slots = newQueue(2 * max(2, runtime.GOMAXPROCS(0)))

// queue hands out a fixed number of slots, fairly between tenants.
type queue struct {
	mu    sync.Mutex
	free  int
	limit int // the slots one tenant may hold
	held  map[string]int
	// waiting holds each tenant's waiters in arrival order, and turns the tenants with
	// waiters in the order they are served.
	waiting map[string][]*waiter
	turns   []string
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

func newQueue(size int) *queue {
	return &queue{free: size, limit: max(1, size-1), held: map[string]int{}, waiting: map[string][]*waiter{}}
}

// acquire waits at most wait for a slot for tenant. It returns the function that gives
// the slot back, or nil when none came in time; ctx's error when ctx ended first.
func (q *queue) acquire(ctx context.Context, tenant string, wait time.Duration) (func(), error) {
	q.mu.Lock()
	if q.free > 0 && q.held[tenant] < q.limit && len(q.waiting[tenant]) == 0 {
		q.grant(tenant)
		q.mu.Unlock()
		return q.releaser(tenant), nil
	}
	w := &waiter{ready: make(chan struct{})}
	if len(q.waiting[tenant]) == 0 {
		q.turns = append(q.turns, tenant)
	}
	q.waiting[tenant] = append(q.waiting[tenant], w)
	q.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return q.releaser(tenant), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.granted {
		// Granted while giving up: hand the slot on.
		q.release(tenant)
		return nil, err
	}
	q.remove(tenant, w)
	return nil, err
}

// releaser returns the function that gives tenant's slot back, once.
func (q *queue) releaser(tenant string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.release(tenant)
		})
	}
}

// grant gives tenant a slot; q.mu is held.
func (q *queue) grant(tenant string) {
	q.free--
	q.held[tenant]++
}

// release gives back a slot of tenant and hands free slots to the waiters whose turn it
// is; q.mu is held.
func (q *queue) release(tenant string) {
	q.free++
	if q.held[tenant]--; q.held[tenant] == 0 {
		delete(q.held, tenant)
	}
	for q.free > 0 && q.next() {
	}
}

// next grants a slot to the first waiter of the first tenant in turn that may hold one
// more, moving that tenant to the end of the turns; false when there is none.
func (q *queue) next() bool {
	for i, tenant := range q.turns {
		if q.held[tenant] >= q.limit {
			continue
		}
		w := q.waiting[tenant][0]
		q.waiting[tenant] = q.waiting[tenant][1:]
		q.turns = append(q.turns[:i], q.turns[i+1:]...)
		if len(q.waiting[tenant]) == 0 {
			delete(q.waiting, tenant)
		} else {
			q.turns = append(q.turns, tenant)
		}
		q.grant(tenant)
		w.granted = true
		close(w.ready)
		return true
	}
	return false
}

// remove takes a waiter that gave up out of the queue; q.mu is held.
func (q *queue) remove(tenant string, w *waiter) {
	ws := q.waiting[tenant]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) > 0 {
		q.waiting[tenant] = ws
		return
	}
	delete(q.waiting, tenant)
	for i, t := range q.turns {
		if t == tenant {
			q.turns = append(q.turns[:i], q.turns[i+1:]...)
			break
		}
	}
}
