package httpx_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/httpx"
)

func admin(rd httpx.Readiness, pprof bool) http.Handler {
	return httpx.Admin(httpx.AdminOptions{
		Ready:    func(context.Context) httpx.Readiness { return rd },
		Gatherer: prometheus.NewRegistry(),
		Pprof:    pprof,
	})
}

func get(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

func TestReadyz(t *testing.T) {
	cases := []struct {
		name   string
		rd     httpx.Readiness
		status int
		body   string
	}{
		{"a dependency that is down is reported, not a reason for 503",
			httpx.Readiness{Status: httpx.StatusReady, Checks: map[string]string{"redis": "down", "database": "up"}},
			http.StatusOK, `{"status":"ready","checks":{"database":"up","redis":"down"}}`},
		{"a draining process is 503",
			httpx.Readiness{Status: "draining"},
			http.StatusServiceUnavailable, `{"status":"draining"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := get(admin(tc.rd, false), "/readyz")
			if w.Code != tc.status || strings.TrimSpace(w.Body.String()) != tc.body {
				t.Errorf("/readyz = %d %s, want %d %s", w.Code, w.Body, tc.status, tc.body)
			}
			if ct, cc := w.Header().Get("Content-Type"), w.Header().Get("Cache-Control"); ct != "application/json" || cc != "no-store" {
				t.Errorf("Content-Type %q, Cache-Control %q; want application/json, no-store", ct, cc)
			}
		})
	}
}

func TestPprofIsServedOnlyWhenAskedFor(t *testing.T) {
	ready := httpx.Readiness{Status: httpx.StatusReady}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/symbol"} {
		if w := get(admin(ready, false), path); w.Code != http.StatusNotFound {
			t.Errorf("%s = %d without pprof, want 404", path, w.Code)
		}
		if w := get(admin(ready, true), path); w.Code != http.StatusOK {
			t.Errorf("%s = %d with pprof, want 200", path, w.Code)
		}
	}
}

// listen returns a listener on a random loopback port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// status sends a GET on a connection of its own and returns the status, or 0 on error.
func status(u string) int {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(u)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func TestServeDrainsThenStopsInOrder(t *testing.T) {
	const drain = 300 * time.Millisecond
	entered, release := make(chan struct{}), make(chan struct{})
	first := http.NewServeMux()
	first.HandleFunc("/", ok)
	first.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		w.WriteHeader(http.StatusOK)
	})
	a, b := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- httpx.Serve(ctx, httpx.Shutdown{Drain: drain, Timeout: 5 * time.Second},
			httpx.Listener{Name: "first", Net: a, Server: httpx.NewServer(first)},
			httpx.Listener{Name: "second", Net: b, Server: httpx.NewServer(http.HandlerFunc(ok))})
	}()
	slow := make(chan int, 1)
	go func() { slow <- status("http://" + a.Addr().String() + "/slow") }()
	<-entered
	keepAlive := &http.Client{Timeout: 5 * time.Second}
	defer keepAlive.CloseIdleConnections()
	closes := func() (bool, error) {
		resp, err := keepAlive.Get("http://" + b.Addr().String() + "/")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.Close, err
	}
	if c, err := closes(); err != nil || c {
		t.Fatalf("before the drain: %v, close %v; want a connection kept alive", err, c)
	}
	cancel()
	if got := status("http://" + a.Addr().String() + "/"); got != http.StatusNoContent {
		t.Errorf("a new request during the drain = %d, want 204", got)
	}
	// During the drain, keep-alive clients are told to reconnect.
	if c, err := closes(); err != nil || !c {
		t.Errorf("during the drain: %v, close %v; want Connection: close", err, c)
	}
	time.Sleep(drain + 100*time.Millisecond)
	if got := status("http://" + a.Addr().String() + "/"); got != 0 {
		t.Errorf("the first listener answered %d after the drain, want it closed", got)
	}
	if got := status("http://" + b.Addr().String() + "/"); got != http.StatusNoContent {
		t.Errorf("the second listener answered %d while the first waits for a request, want 204", got)
	}
	close(release)
	if got := <-slow; got != http.StatusOK {
		t.Errorf("the request in flight = %d, want 200", got)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if got := status("http://" + b.Addr().String() + "/"); got != 0 {
		t.Errorf("the second listener answered %d after Serve returned", got)
	}
}

func TestServeCutsRequestsPastTheTimeout(t *testing.T) {
	entered := make(chan struct{})
	hang := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done() // Until the connection is closed.
	})
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- httpx.Serve(ctx, httpx.Shutdown{Timeout: 200 * time.Millisecond},
			httpx.Listener{Name: "public", Net: ln, Server: httpx.NewServer(hang)})
	}()
	go status("http://" + ln.Addr().String() + "/")
	<-entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "public") {
			t.Errorf("Serve = %v, want the deadline of the public listener", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its timeout")
	}
}

func TestServeStopsEveryServerWhenOneFails(t *testing.T) {
	broken := listen(t)
	_ = broken.Close() // Serve on a closed listener fails at once.
	other := listen(t)
	done := make(chan error, 1)
	go func() {
		done <- httpx.Serve(context.Background(), httpx.Shutdown{Drain: time.Hour, Timeout: time.Second},
			httpx.Listener{Name: "public", Net: broken, Server: httpx.NewServer(http.HandlerFunc(ok))},
			httpx.Listener{Name: "admin", Net: other, Server: httpx.NewServer(http.HandlerFunc(ok))})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "public listener") {
			t.Errorf("Serve = %v, want the public listener's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return when a listener failed")
	}
	if got := status("http://" + other.Addr().String() + "/"); got != 0 {
		t.Errorf("the admin listener answered %d after Serve returned", got)
	}
}
