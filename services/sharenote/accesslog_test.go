package sharenote_test

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/testkit"
)

// A server whose stderr nobody reads (a stalled log collector) still answers every
// request: its log lines wait in a bounded buffer, and those that do not fit are dropped
// and counted in sharenote_log_lines_dropped_total, never held in memory without bound.
func TestAStalledLogNeverHoldsUpRequests(t *testing.T) {
	r, w, err := os.Pipe() // a pipe holds 64 KiB; nothing reads this one until the end
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	b := testkit.SQLiteBackend(t)
	s := start(t, b, testkit.WithLogs(w), testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"))
	// Read at the end, before the server stops (cleanups run last first), so that its
	// last lines find a reader.
	t.Cleanup(func() { go func() { _, _ = io.Copy(io.Discard, r) }() })
	// Each request logs an access line of about 250 bytes: 8,000 of them are twice what
	// the pipe and the buffer hold.
	const requests = 8000
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < requests; i += 8 {
				from := map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.%d.%d", i/256, i%256)}
				s.Do(t, testkit.Request{Method: "GET", Path: "/s/nosuchnote00000000000000", Header: from}).Expect(t, 404, "")
			}
		})
	}
	wg.Wait()
	dropped := metric(t, s, "sharenote_log_lines_dropped_total")
	// What was not dropped is in the pipe or the buffer: at most their size in lines.
	kept := requests - dropped
	if dropped == 0 || kept*200 > float64(logging.DefaultBuffer+64<<10)*1.5 {
		t.Errorf("%v of %d lines dropped: want the lines beyond the pipe and the buffer dropped", dropped, requests)
	}
}
