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
