package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrCrossOriginRedirect is the error of a request with credentials that the server
// redirected to another origin: the redirect was not followed, and nothing was sent there.
// A server that moved is given by its new URL instead.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// redirectError is ErrCrossOriginRedirect with the two origins.
type redirectError struct{ from, to *url.URL }

func (e *redirectError) Error() string {
	return fmt.Sprintf("the server redirected to %s://%s, another origin than %s://%s; the license key and token are sent only to the server's own origin, so the redirect was not followed",
		e.to.Scheme, e.to.Host, e.from.Scheme, e.from.Host)
}

func (e *redirectError) Unwrap() error { return ErrCrossOriginRedirect }

// sameOriginOnly returns a copy of hc (sharing its Transport, hence its connections)
// whose redirects stay within the origin of the first request; hc's own CheckRedirect,
// else the default limit of 10 redirects, decides about those.
func sameOriginOnly(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; origin(req.URL) != origin(first) {
			return &redirectError{from: first, to: req.URL}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// origin is u's scheme://host:port in lowercase, the port spelt out when it is the
// scheme's default, so that http://Example.com and http://example.com:80 are one origin.
func origin(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}
