//go:build chaos

package sharenote_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// TestChaosChangeOfAKilledProcess: a change that one replica committed and could not
// announce before it was killed (its Redis connection cut, then SIGKILL) reaches another
// replica's cache within a second of the kill, through the outbox of changes that the
// commit wrote and the other replica's relay took (libs/outbox). Before the outbox the
// change lived only in the killed process's memory, and the other replica, whose
// subscription stayed confirmed, served the old text for as long as it kept it cached.
func TestChaosChangeOfAKilledProcess(t *testing.T) {
	dbURL := testkit.NewPostgresDB(t)
	redis := testkit.StartRedis(t)
	u, err := url.Parse(redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	cut := startTCPProxy(t, u.Host)
	bin := buildBinary(t)
	start := func(name, redisURL string) (*chaosServer, []string) {
		addr, admin := testkit.FreeAddr(), testkit.FreeAddr()
		env := commandEnv(map[string]string{
			"SHARE_ADDR": addr, "SHARE_ADMIN_ADDR": admin, "SHARE_PUBLIC_URL": "http://" + addr,
			"SHARE_DATABASE_URL": dbURL, "SHARE_REDIS_URL": redisURL, "SHARE_REDIS_KEY_PREFIX": "relay:",
			"SHARE_TRUSTED_PROXIES": "127.0.0.1/32", "SHARE_LOG_LEVEL": "warn", "SHARE_DATA_DIR": t.TempDir(),
		})
		s := &chaosServer{url: "http://" + addr, admin: "http://" + admin, client: chaosClient}
		s.process = startProcess(t, name, bin, []string{"serve"}, env)
		s.waitFor(t, "readiness", func() bool { code, _ := s.readyz(t); return code == http.StatusOK })
		return s, env
	}
	a, _ := start("replica-a", "redis://"+cut.addr)
	b, env := start("replica-b", redis.URL)
	token := b.login(t, bin, env, 0)

	body, _ := json.Marshal(map[string]any{"content": "# Before\n\nthe text before"})
	resp, out := b.do(newTally(), "POST", "/api/publish", token, body, "application/json")
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("publish: %v %s", resp, out)
	}
	var created struct{ CUID string }
	_ = json.Unmarshal(out, &created)
	read := func() string {
		resp, out := b.do(newTally(), "GET", "/api/notes/"+created.CUID, "", nil, "")
		if resp == nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("read from replica b: %v %s", resp, out)
		}
		return string(out)
	}
	// Replica b caches the read, and its confirmed subscription vouches for it.
	time.Sleep(time.Second)
	for range 3 {
		if got := read(); !strings.Contains(got, "the text before") {
			t.Fatalf("replica b reads %s, want the text before", got)
		}
	}

	cut.cut()
	body, _ = json.Marshal(map[string]any{"content": "# After\n\nthe text after"})
	if resp, out := a.do(newTally(), "PATCH", "/api/notes/"+created.CUID, token, body, "application/json"); resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH on replica a with its Redis cut: %v %s", resp, out)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	killed := time.Now()
	for !strings.Contains(read(), "the text after") {
		if time.Since(killed) > 2*time.Second {
			t.Fatalf("replica b still serves the text before the change 2 s after the process that committed it was killed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("replica b serves the change %v after the process that committed it was killed", time.Since(killed).Round(time.Millisecond))
}

// tcpProxy forwards connections to an address until cut, which closes its listener and
// every connection it carries: the process behind it then finds that address refusing.
type tcpProxy struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// startTCPProxy starts a proxy to target on a loopback port, closed when the test ends.
func startTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(p.cut)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return p
}

// cut stops forwarding.
func (p *tcpProxy) cut() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}
