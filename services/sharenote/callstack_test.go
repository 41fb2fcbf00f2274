package sharenote_test

import (
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
)

// module is the prefix of the project's packages in a frame's function name.
const module = "github.com/sharenote/sharenote/"

// stackConn records the call stack of every write to the connection it wraps.
type stackConn struct {
	net.Conn
	rec *stacks
}

func (c stackConn) Write(p []byte) (int, error) {
	pc := make([]uintptr, 128)
	c.rec.add(pc[:runtime.Callers(2, pc)])
	return c.Conn.Write(p)
}

// stacks are the recorded stacks, each the project packages it passes through from the
// outermost frame in, as the functions' names give them.
type stacks struct {
	mu  sync.Mutex
	all [][]string
}

func (s *stacks) add(pc []uintptr) {
	var pkgs []string
	frames := runtime.CallersFrames(pc)
	for {
		f, more := frames.Next()
		if name, ok := strings.CutPrefix(f.Function, module); ok {
			// libs/noteapi.(*Public).Serve, services/notes.(*api).Page.func1 → its package.
			pkg, _, _ := strings.Cut(name, ".")
			pkgs = append(pkgs, pkg)
		}
		if !more {
			break
		}
	}
	slices.Reverse(pkgs)
	s.mu.Lock()
	s.all = append(s.all, pkgs)
	s.mu.Unlock()
}

// deepest returns the stack that passes through the most project frames, and forgets
// them all.
func (s *stacks) deepest() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.all {
		if len(st) > len(out) {
			out = st
		}
	}
	s.all = nil
	return out
}

type stackListener struct {
	net.Listener
	rec *stacks
}

func (l stackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return stackConn{Conn: c, rec: l.rec}, nil
}

// A reader can follow a public read through the code: where it writes its body, the
// stack passes through at most 4 project packages from the route's handler in, and
// enters none of them twice (issue 34: it crossed 8 and came back 11 times). The
// middleware every route runs (recovery, limits, tracing: libs/app's router) comes before
// the handler and is not counted. A body over net/http's buffers is written to the
// connection from within the handler, so the connection sees the whole stack.
func TestAPublicReadIsShallow(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		rec := &stacks{}
		s := start(t, b, testkit.WithListener(func(l net.Listener) net.Listener { return stackListener{Listener: l, rec: rec} }))
		acc := s.NewAccount(t, "ada")
		body := strings.Repeat("A paragraph long enough to be written in more than one piece. ", 2000)
		cuid := publishJSON(t, s, acc.Token, map[string]any{"content": body})
		for _, path := range []string{"/s/" + cuid, "/api/notes/" + cuid} {
			for _, read := range []string{"the first read", "a cached read"} {
				rec.deepest()
				s.Do(t, testkit.Request{Method: "GET", Path: path, Header: map[string]string{"Accept-Encoding": "identity"}}).
					Expect(t, http.StatusOK, "")
				all := rec.deepest()
				pkgs := fromHandler(all)
				t.Logf("%s of %s: %v", read, path, slices.Compact(all))
				checkShallow(t, read+" of "+path, pkgs)
			}
		}
	})
}

// fromHandler is the part of a stack from the route's handler in: after the last frame
// of the router's middleware.
func fromHandler(pkgs []string) []string {
	last := -1
	for i, p := range pkgs {
		if p == "libs/app" || p == "libs/httpx" || p == "libs/telemetry" || p == "libs/ratelimit" || p == "libs/authn" {
			last = i
		}
	}
	return pkgs[last+1:]
}

// checkShallow fails the test when pkgs (a stack's project packages from the handler
// in) pass through more than 4 packages or enter one twice.
func checkShallow(t *testing.T, what string, pkgs []string) {
	t.Helper()
	if len(pkgs) == 0 {
		t.Errorf("%s: no stack passed through the handler", what)
		return
	}
	entered := slices.Compact(slices.Clone(pkgs))
	distinct := slices.Clone(entered)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	if len(distinct) > 4 {
		t.Errorf("%s passes through %d project packages, more than 4: %v", what, len(distinct), entered)
	}
	if len(entered) != len(distinct) {
		t.Errorf("%s enters a package twice: %v", what, entered)
	}
}
