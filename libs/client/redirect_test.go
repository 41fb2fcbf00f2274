package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

// recorder is a loopback server that answers every request with an empty JSON object and
// keeps a line for each: method, path, Authorization header and body.
type recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func startRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req.Method+" "+req.URL.Path+" auth="+req.Header.Get("Authorization")+" body="+string(body))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// startRedirector is a loopback server that answers every request with status and a
// Location of to plus the request's path.
func startRedirector(t *testing.T, status int, to string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		http.Redirect(w, req, to+req.URL.Path, status)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// otherHost names the recorder by another host of the loopback interface: localhost for
// 127.0.0.1, another origin on the same listener.
func otherHost(t *testing.T, r *recorder) string {
	u, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	return "http://localhost:" + u.Port()
}

// TestCredentialsAreNotSentToAnotherOrigin is the finding that a server's redirect led the
// license key (a JSON body, which Go sends again on 307 and 308) and the bearer token
// (which Go keeps on a redirect to another port of the same host) to another origin: a
// request that carries either is not redirected to another scheme, host or port.
func TestCredentialsAreNotSentToAnotherOrigin(t *testing.T) {
	const key, instance, token = "snk_secret_license", "sni_instance", "secret-token"
	login := func(c *client.Client) error {
		_, err := c.Login(context.Background(), key, instance)
		return err
	}
	list := func(c *client.Client) error {
		c.Token = token
		_, err := c.List(context.Background(), client.ListOptions{})
		return err
	}
	update := func(c *client.Client) error {
		c.Token = token
		_, err := c.Update(context.Background(), "k3v9x2m0q8w1e7r4t6y5u2i0", wire.NoteUpdate{Title: wire.Set("x")}, "")
		return err
	}
	for _, tc := range []struct {
		rule      string
		status    int
		otherHost bool
		call      func(*client.Client) error
	}{
		{"a login answered 307 to another port", http.StatusTemporaryRedirect, false, login},
		{"a login answered 308 to another host", http.StatusPermanentRedirect, true, login},
		{"a login answered 302 to another port", http.StatusFound, false, login},
		{"a token's GET answered 302 to another port", http.StatusFound, false, list},
		{"a token's GET answered 301 to another host", http.StatusMovedPermanently, true, list},
		{"a token's PATCH answered 307 to another port", http.StatusTemporaryRedirect, false, update},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			elsewhere := startRecorder(t)
			to := elsewhere.URL
			if tc.otherHost {
				to = otherHost(t, elsewhere)
			}
			c := &client.Client{BaseURL: startRedirector(t, tc.status, to)}
			err := tc.call(c)
			if got := elsewhere.requests(); len(got) != 0 {
				t.Errorf("the other origin received %q", got)
			}
			if !errors.Is(err, client.ErrCrossOriginRedirect) || !strings.Contains(err.Error(), "another origin") {
				t.Errorf("error %v, want the refused redirect named", err)
			}
		})
	}
}

// TestRedirectsThatCarryNoCredentialsAreFollowed: the rule is about credentials, not
// redirects; one to the same origin is followed, and so is a public read's.
func TestRedirectsThatCarryNoCredentialsAreFollowed(t *testing.T) {
	elsewhere := startRecorder(t)
	c := &client.Client{BaseURL: startRedirector(t, http.StatusFound, elsewhere.URL)}
	if _, err := c.Note(context.Background(), "k3v9x2m0q8w1e7r4t6y5u2i0"); err != nil {
		t.Errorf("a public read redirected to another origin: %v", err)
	}

	same := startRecorder(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/auth/publish", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	})
	mux.Handle("/moved", same.Config.Handler)
	origin := httptest.NewServer(mux)
	t.Cleanup(origin.Close)
	if _, err := (&client.Client{BaseURL: origin.URL}).Login(context.Background(), "snk_key", "sni_instance"); err != nil {
		t.Errorf("a login redirected on its own origin: %v", err)
	}
	if got := same.requests(); len(got) != 1 || !strings.Contains(got[0], "snk_key") {
		t.Errorf("the same origin received %q, want the login once", got)
	}
}
