package logging

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBuffer is the most a Writer holds of lines not yet written: about 4,000 access
// log lines, 100 ms of 40,000 requests a second, many times FlushInterval.
const DefaultBuffer = 1 << 20

// FlushInterval is the least time between two writes of a Writer, and so the longest a
// line waits while lines keep coming.
const FlushInterval = 5 * time.Millisecond

// Writer stands in front of a writer that may be slow or stall (a process's stderr, read
// by a container runtime): a Write never waits for it. Each line is appended to a buffer
// of at most limit bytes, and one goroutine writes all that has gathered with one call,
// at most one call per FlushInterval: a busy server makes one system call per batch of
// lines, not one per line, and wakes that goroutine as seldom. A line after a quiet
// FlushInterval is written at once. A line that does not fit is dropped and counted
// (Dropped): the memory a stall costs is bounded, and requests are never held up by
// their log lines.
type Writer struct {
	out   io.Writer
	limit int
	wake  chan struct{} // one pending signal that lines wait
	done  chan struct{} // closed when the goroutine has ended

	mu      sync.Mutex
	buf     []byte // lines waiting, whole
	closed  bool
	dropped atomic.Uint64
}

// NewWriter starts a Writer in front of out holding at most limit bytes; Close stops it.
func NewWriter(out io.Writer, limit int) *Writer {
	w := &Writer{out: out, limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// Write queues p, one whole line as slog writes it, or drops it when the buffer has no
// room for it. It never fails and never blocks on the writer behind. After Close it
// writes p straight through.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.out.Write(p)
	}
	if len(w.buf)+len(p) > w.limit {
		w.mu.Unlock()
		w.dropped.Add(1)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	select { // under the lock, so that Close cannot close wake meanwhile
	case w.wake <- struct{}{}:
	default:
	}
	w.mu.Unlock()
	return len(p), nil
}

// Dropped is how many lines were dropped for want of room.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// run writes the lines as they gather, each batch with one Write and at most one Write
// per FlushInterval, until Close; then what is left.
func (w *Writer) run() {
	defer close(w.done)
	var spare []byte
	var last time.Time
	for range w.wake {
		if wait := FlushInterval - time.Since(last); wait > 0 {
			time.Sleep(wait)
		}
		spare = w.flush(spare)
		last = time.Now()
	}
	w.flush(spare)
}

// flush writes the waiting lines, giving the buffer spare to the lines that come
// meanwhile, and returns the written buffer for the next flush.
func (w *Writer) flush(spare []byte) []byte {
	w.mu.Lock()
	batch := w.buf
	w.buf = spare[:0]
	w.mu.Unlock()
	if len(batch) > 0 {
		_, _ = w.out.Write(batch) // a log line that cannot be written has nowhere to go
	}
	return batch
}

// Close stops the goroutine once it has written the lines that wait, or when ctx is
// done, whichever comes first: a stalled writer behind does not hold up a shutdown
// (ctx.Err() says the lines were not all written). Later writes go straight through.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.wake)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
