package httpx_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/httpx"
)

// TestClientIPsAnswerAsGin holds ClientIPs to gin's ClientIP configured as the router
// once was (X-Forwarded-For believed from the trusted proxies), on every combination of
// trusted networks, peers and forwarded chains below: spoofed hops, addresses that do
// not parse, several header lines, IPv6 and IPv4 written as IPv6.
func TestClientIPsAnswerAsGin(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	peers := []string{"127.0.0.1:1", "10.1.2.3:2", "[::1]:3", "[::ffff:127.0.0.1]:4", "[::ffff:203.0.113.9]:4",
		"[2001:db8::1]:5", "198.51.100.7:6", "no port", "[fe80::1%eth0]:7", "bad:8"}
	chains := [][]string{
		nil, {""}, {"203.0.113.7"}, {"203.0.113.7, 10.0.0.2"}, {"10.0.0.3, 10.0.0.2"}, {"junk, 203.0.113.7"},
		{"203.0.113.7, junk"}, {" 2001:db8::2 "}, {"203.0.113.1", "10.0.0.5, 198.51.100.2"}, {"", "10.0.0.1"},
		{"::ffff:10.0.0.1, ::ffff:203.0.113.3"}, {"fe80::1%eth0"}, {"203.0.113.7,10.9.9.9,127.0.0.1"}, {",,"},
		{"10.0.0.1", "10.0.0.2"}, {"01.2.3.4"}, {"203.0.113.7 , ::1"},
	}
	for _, trusted := range [][]string{nil, {"127.0.0.1/32"}, {"127.0.0.1/32", "10.0.0.0/8", "::1/128"}, {"0.0.0.0/0", "::/0"}} {
		e := gin.New()
		e.ForwardedByClientIP = true
		e.RemoteIPHeaders = []string{"X-Forwarded-For"}
		if err := e.SetTrustedProxies(trusted); err != nil {
			t.Fatal(err)
		}
		var prefixes []netip.Prefix
		for _, s := range trusted {
			prefixes = append(prefixes, netip.MustParsePrefix(s))
		}
		ips := httpx.NewClientIPs(prefixes)
		for _, peer := range peers {
			for _, chain := range chains {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = peer
				for _, line := range chain {
					r.Header.Add("X-Forwarded-For", line)
				}
				c := gin.CreateTestContextOnly(httptest.NewRecorder(), e)
				c.Request = r
				if got, want := ips.Of(r), c.ClientIP(); got != want {
					t.Errorf("trusted %v, peer %q, X-Forwarded-For %q: %q, gin says %q", trusted, peer, chain, got, want)
				}
			}
		}
	}
}

func TestClientIPsAllocateNothing(t *testing.T) {
	ips := httpx.NewClientIPs([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.7, 127.0.0.2")
	if n := testing.AllocsPerRun(100, func() { ips.Of(r) }); n != 0 {
		t.Fatalf("%v allocations a call, want 0", n)
	}
}

// TestThroughTheEdge: a request came through the edge when its peer is an edge address,
// or when an edge address is among the X-Forwarded-For entries that trusted proxies put
// there; what a reader writes in the header, or a reader who calls the ingress directly,
// never counts.
func TestThroughTheEdge(t *testing.T) {
	ips := httpx.NewClientIPs([]netip.Prefix{netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.9.0.0/24")})
	edges := []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       bool
	}{
		{"the edge as the peer", "10.9.0.5:1234", nil, true},
		{"the edge as the peer, IPv4 in IPv6", "[::ffff:10.9.0.5]:1234", nil, true},
		{"the edge behind the ingress", "10.0.0.1:1234", []string{"203.0.113.9, 10.9.0.5"}, true},
		{"the edge behind the ingress, headers split", "10.0.0.1:1234", []string{"203.0.113.9", "10.9.0.5"}, true},
		{"a reader at the ingress", "10.0.0.1:1234", []string{"203.0.113.9"}, false},
		{"a reader at the ingress naming the edge", "10.0.0.1:1234", []string{"10.9.0.5, 203.0.113.9"}, false},
		{"a reader at the ingress with nothing forwarded", "10.0.0.1:1234", nil, false},
		{"a reader at a replica naming the edge", "203.0.113.9:1234", []string{"10.9.0.5"}, false},
		{"a forwarded entry that does not parse", "10.0.0.1:1234", []string{"10.9.0.5, junk"}, false},
	} {
		r := &http.Request{RemoteAddr: c.peer, Header: http.Header{}}
		if c.xff != nil {
			r.Header["X-Forwarded-For"] = c.xff
		}
		if got := ips.Through(r, edges); got != c.want {
			t.Errorf("%s: Through = %t, want %t", c.name, got, c.want)
		}
		if ips.Through(r, nil) {
			t.Errorf("%s: through an edge when none is configured", c.name)
		}
	}
	r := &http.Request{RemoteAddr: "10.0.0.1:1234", Header: http.Header{"X-Forwarded-For": {"203.0.113.9, 10.9.0.5"}}}
	if n := testing.AllocsPerRun(100, func() { ips.Through(r, edges) }); n != 0 {
		t.Errorf("Through allocates %v times, want 0", n)
	}
}
