package testkit

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/edge"
)

// FakeEdge is a local HTTP server that records the PURGE requests an edge (Varnish with
// xkey) would get, and can be stopped and started again on the same address, as an edge
// outage.
type FakeEdge struct {
	// URL is what SHARE_EDGE_PURGE_URLS names.
	URL  string
	addr string
	// Delay holds every answer this long (a slow edge); set before traffic.
	Delay time.Duration

	mu     sync.Mutex
	srv    *http.Server
	purges []EdgePurge
}

// EdgePurge is one PURGE request the fake edge answered.
type EdgePurge struct {
	At         time.Time
	Hard, Soft []string
	All        bool
}

// StartFakeEdge starts a fake edge on a loopback port until the test ends.
func StartFakeEdge(t *testing.T) *FakeEdge {
	t.Helper()
	l := listenLoopback(t)
	e := &FakeEdge{addr: l.Addr().String(), URL: "http://" + l.Addr().String()}
	e.serve(l)
	t.Cleanup(e.Stop)
	return e
}

func (e *FakeEdge) serve(l net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(e.record), ReadHeaderTimeout: 5 * time.Second}
	e.mu.Lock()
	e.srv = srv
	e.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

func (e *FakeEdge) record(w http.ResponseWriter, r *http.Request) {
	time.Sleep(e.Delay)
	if r.Method != "PURGE" {
		http.Error(w, "not a purge", http.StatusMethodNotAllowed)
		return
	}
	p := EdgePurge{At: time.Now(), Hard: strings.Fields(r.Header.Get(edge.HeaderPurge)),
		Soft: strings.Fields(r.Header.Get(edge.HeaderSoftPurge)), All: r.Header.Get(edge.HeaderPurgeAll) != ""}
	e.mu.Lock()
	e.purges = append(e.purges, p)
	e.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Stop closes the edge: its purges fail until Start.
func (e *FakeEdge) Stop() {
	e.mu.Lock()
	srv := e.srv
	e.srv = nil
	e.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Start serves again on the same address.
func (e *FakeEdge) Start(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	e.serve(l)
}

// Purges returns the requests recorded so far.
func (e *FakeEdge) Purges() []EdgePurge {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]EdgePurge(nil), e.purges...)
}

// Sent returns the requests since since that carried key, hard or soft, and the purges
// of everything since then.
func (e *FakeEdge) Sent(key string, since time.Time) (hard, soft, all []time.Time) {
	for _, p := range e.Purges() {
		if p.At.Before(since) {
			continue
		}
		for _, k := range p.Hard {
			if k == key {
				hard = append(hard, p.At)
			}
		}
		for _, k := range p.Soft {
			if k == key {
				soft = append(soft, p.At)
			}
		}
		if p.All {
			all = append(all, p.At)
		}
	}
	return hard, soft, all
}

// BrokenEdges returns the host:port of two edges that fail every purge: refusing answers
// 403, down answers nothing (nothing listens there). Both live until the test ends.
func BrokenEdges(t testing.TB) (refusing, down string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down = l.Addr().String()
	_ = l.Close()
	return strings.TrimPrefix(srv.URL, "http://"), down
}
