package logging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/logging"
)

// stalled is a writer that blocks until released, as a stderr nobody reads.
type stalled struct {
	release chan struct{}
	mu      sync.Mutex
	got     bytes.Buffer
	writes  int
}

func (s *stalled) Write(p []byte) (int, error) {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.got.Write(p)
}

// Lines never wait for a stalled writer: those that find room in the buffer are written
// once it moves again, in order and whole, many to a write; the others are dropped and
// counted.
func TestAWriterNeverBlocksAndDropsWhatDoesNotFit(t *testing.T) {
	out := &stalled{release: make(chan struct{})}
	line := func(i int) string { return fmt.Sprintf(`{"msg":"request","n":%05d}`+"\n", i) }
	w := logging.NewWriter(out, 100*len(line(0)))
	for i := range 1000 {
		if n, err := w.Write([]byte(line(i))); err != nil || n != len(line(i)) {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	// The goroutine holds the first line or lines in its stalled write; the buffer holds
	// at most 100 more.
	if d := w.Dropped(); d < 800 || d > 900 {
		t.Errorf("%d lines dropped, want about 900", d)
	}
	close(out.release)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.got.String(), "\n"), "\n")
	if len(lines)+int(w.Dropped()) != 1000 {
		t.Errorf("%d lines written and %d dropped, want 1,000 in all", len(lines), w.Dropped())
	}
	last := -1
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, `{"msg":"request","n":%d}`, &n); err != nil || l+"\n" != line(n) || n <= last {
			t.Fatalf("line %q after line %d: want whole lines, in order", l, last)
		}
		last = n
	}
	if out.writes >= len(lines) {
		t.Errorf("%d writes for %d lines, want them batched", out.writes, len(lines))
	}
	// A stalled writer does not hold up Close past its context.
	stuck := logging.NewWriter(&stalled{release: make(chan struct{})}, 1<<10)
	_, _ = stuck.Write([]byte(line(0)))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := stuck.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a stalled writer: %v, want the context's error", err)
	}
	// After Close, lines go straight through.
	if _, err := w.Write([]byte(line(1000))); err != nil || !strings.HasSuffix(out.got.String(), line(1000)) {
		t.Errorf("a line after Close was not written: %v", err)
	}
}

// counting is a writer that counts its writes.
type counting struct {
	mu     sync.Mutex
	got    bytes.Buffer
	writes int
}

func (c *counting) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.got.Write(p)
}

func (c *counting) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got.String()
}

// Lines that keep coming are written at most once per FlushInterval, however many there
// are, so that a busy server neither makes a system call per line nor wakes the
// writer's goroutine for each; a line after a quiet spell is written at once.
func TestAWriterWritesABusyStreamOncePerInterval(t *testing.T) {
	out := &counting{}
	w := logging.NewWriter(out, logging.DefaultBuffer)
	start, lines := time.Now(), 0
	for time.Since(start) < 100*time.Millisecond {
		_, _ = fmt.Fprintf(w, `{"msg":"request","n":%d}`+"\n", lines)
		lines++
		time.Sleep(20 * time.Microsecond)
	}
	elapsed := time.Since(start)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n"); got != lines {
		t.Fatalf("%d of %d lines written", got, lines)
	}
	if most := int(elapsed/logging.FlushInterval) + 2; out.writes > most {
		t.Errorf("%d writes for %d lines in %v, want at most one per %v (%d)", out.writes, lines, elapsed, logging.FlushInterval, most)
	}

	quiet := &counting{}
	w = logging.NewWriter(quiet, logging.DefaultBuffer)
	defer func() { _ = w.Close(context.Background()) }()
	_, _ = w.Write([]byte(`{"msg":"alone"}` + "\n"))
	for deadline := time.Now().Add(time.Second); quiet.String() == ""; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a lone line was not written within a second")
		}
	}
}
