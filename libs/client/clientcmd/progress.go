package clientcmd

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// humanBytes shows a size in bytes, KiB or MiB.
func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// progress draws an upload's progress on a terminal, at most ten times a second.
type progress struct {
	w     io.Writer
	total int64
	mu    sync.Mutex
	sent  int64
	drawn time.Time
}

// reader counts what r gives toward the progress.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return readFunc(func(b []byte) (int, error) {
		n, err := r.Read(b)
		p.add(int64(n))
		return n, err
	})
}

func (p *progress) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent += n
	if now := time.Now(); now.Sub(p.drawn) >= 100*time.Millisecond || p.sent == p.total {
		p.drawn = now
		fmt.Fprintf(p.w, "\rUploading %s of %s (%d%%) ", humanBytes(p.sent), humanBytes(p.total), p.sent*100/max(p.total, 1))
	}
}

// done ends the progress line.
func (p *progress) done() {
	if p != nil {
		fmt.Fprintln(p.w)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(b []byte) (int, error) { return f(b) }
