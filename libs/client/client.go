// Package client is a Go client of the Share API (docs/api.md, and the OpenAPI document
// in libs/openapi): one method per operation, typed requests and answers, and
// errors that carry the API's code. The `sharenote` client commands are built on it.
//
// Rate limits and transient failures: a GET answered 429 or 503, or whose connection was
// reset, closed before the answer or timed out, is sent again after its Retry-After (else
// an exponential backoff), with jitter, at most 3 times and after at most 60 seconds of waiting
// in all; every other method is never sent twice, since a repeated publish creates another
// publication and a repeated update another version snapshot. A Client with a Budget
// waits before a mutation while the account's budget of mutations is spent (the
// RateLimit-* headers of the last answer, or a 429's Retry-After), so that it meets no 429.
//
// Redirects: a request that carries credentials (Login's license key, or the Token) is
// never redirected to another origin (scheme, host and port): such a redirect fails with
// ErrCrossOriginRedirect and nothing is sent there. net/http alone would send the login's
// JSON body again on a 307 or 308 to any host, and keep the Authorization header on a
// redirect to another port of the same host. Redirects within the origin, and those of
// requests that carry nothing secret (Note without a Token), are followed as usual.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sharenote/sharenote/libs/wire"
)

// Client calls one server of the API. Its fields are read on every call and must not
// change while calls are running.
type Client struct {
	// BaseURL is the server's {base_url}, such as http://127.0.0.1:8080.
	BaseURL string
	// Token is the bearer token of Login; empty for public reads.
	Token string
	// HTTP sends the requests; nil means http.DefaultClient. Its CheckRedirect is kept,
	// and is asked only about redirects within the origin for requests with credentials.
	HTTP *http.Client
	// Budget, when not nil, paces the mutations (publish, update, unshare, settings): each
	// waits while the budget the server's RateLimit-* headers told is spent, and after a
	// 429 until its Retry-After. Its Last method tells the budget of the last answer.
	Budget *Budget
}

// The GET retry policy of the package comment.
const (
	maxRetries = 3
	maxWait    = 60 * time.Second
)

// Error is an error answer of the API.
type Error struct {
	Status int
	// Code is the machine-readable code of docs/api.md "Errors" ("not_found",
	// "rate_limited", …); empty when the body was not the API's error body (a proxy's
	// page, say).
	Code    string
	Message string
	// RetryAfter is the Retry-After header's wait, zero when absent.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d %s)", e.Message, e.Status, e.Code)
}

// Login exchanges a license key and the instance (activation) id of a device for a
// two-hour session token (POST /api/auth/publish). Put its Token in Client.Token.
func (c *Client) Login(ctx context.Context, licenseKey, instanceID string) (*wire.Token, error) {
	var out wire.Token
	return &out, c.do(ctx, http.MethodPost, loginPath, nil, nil, wire.TokenRequest{LicenseKey: licenseKey, InstanceID: instanceID}, &out)
}

// loginPath is the call whose body is a credential.
const loginPath = "/api/auth/publish"

// Publish creates a publication (POST /api/publish): as JSON, or with images as one
// multipart/form-data request whose images are streamed from their readers, read once.
// It is never retried, since a repeated publish creates another publication; after an
// error that is not an *Error (a dropped connection) the note may or may not have been
// published.
func (c *Client) Publish(ctx context.Context, p wire.PublishRequest, images []Image) (*wire.PublishResponse, error) {
	var out wire.PublishResponse
	if len(images) == 0 {
		return &out, c.do(ctx, http.MethodPost, "/api/publish", nil, nil, p, &out)
	}
	return &out, c.sendMultipart(ctx, http.MethodPost, "/api/publish", nil, p, images, &out)
}

// Note reads a public note (GET /api/notes/:cuid); it needs no token.
func (c *Client) Note(ctx context.Context, cuid string) (*wire.PublicNote, error) {
	var out wire.PublicNote
	return &out, c.do(ctx, http.MethodGet, notePath(cuid), nil, nil, nil, &out)
}

// Update changes the fields set in u (PATCH /api/notes/:cuid). With ifMatch (the ETag of an
// earlier answer) the server refuses with 412 precondition_failed when the publication
// has changed since; "" updates whatever state it is in.
func (c *Client) Update(ctx context.Context, cuid string, u wire.NoteUpdate, ifMatch string) (*wire.OwnerNote, error) {
	var out wire.OwnerNote
	return &out, c.do(ctx, http.MethodPatch, notePath(cuid), nil, ifMatchHeader(ifMatch), u, &out)
}

// UpdateWithImages is Update as one multipart/form-data request that also adds images, or
// replaces the publication's images of the same names; `[[name]]` in a new Content
// resolves against all the note's images. A form field cannot be null, so a Clear in u is
// refused before anything is sent. The images are streamed, read once, and never sent
// twice: the request is not retried.
func (c *Client) UpdateWithImages(ctx context.Context, cuid string, u wire.NoteUpdate, images []Image, ifMatch string) (*wire.OwnerNote, error) {
	var out wire.OwnerNote
	return &out, c.sendMultipart(ctx, http.MethodPatch, notePath(cuid), ifMatchHeader(ifMatch), u, images, &out)
}

func ifMatchHeader(etag string) http.Header {
	if etag == "" {
		return nil
	}
	return http.Header{"If-Match": {strconv.Quote(etag)}}
}

// Versions lists the kept snapshots of a publication, newest first.
func (c *Client) Versions(ctx context.Context, cuid string) (*wire.VersionList, error) {
	var out wire.VersionList
	return &out, c.do(ctx, http.MethodGet, notePath(cuid)+"/versions", nil, nil, nil, &out)
}

// Version reads snapshot n of a publication.
func (c *Client) Version(ctx context.Context, cuid string, n int) (*wire.Version, error) {
	var out wire.Version
	return &out, c.do(ctx, http.MethodGet, notePath(cuid)+"/versions/"+strconv.Itoa(n), nil, nil, nil, &out)
}

// Unshare unpublishes a publication (POST /api/unshare).
func (c *Client) Unshare(ctx context.Context, cuid string) (*wire.Unshared, error) {
	var out wire.Unshared
	return &out, c.do(ctx, http.MethodPost, "/api/unshare", nil, nil, wire.UnshareRequest{Cuid: cuid}, &out)
}

// ListOptions select a page of List.
type ListOptions struct {
	// Limit is the page size, 1 to 100; 0 means the server's default (50).
	Limit int
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
}

// List reads one page of the caller's publications, newest first (GET /api/user/notes).
func (c *Client) List(ctx context.Context, o ListOptions) (*wire.NoteList, error) {
	q := url.Values{}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	var out wire.NoteList
	return &out, c.do(ctx, http.MethodGet, "/api/user/notes", q, nil, nil, &out)
}

// Pages iterates over every page of the caller's publications, following the cursor; it
// stops after the first error.
func (c *Client) Pages(ctx context.Context, limit int) iter.Seq2[*wire.NoteList, error] {
	return func(yield func(*wire.NoteList, error) bool) {
		o := ListOptions{Limit: limit}
		for {
			page, err := c.List(ctx, o)
			if !yield(page, err) || err != nil || page.NextCursor == nil {
				return
			}
			o.Cursor = *page.NextCursor
		}
	}
}

// Settings reads the sharing settings and the image storage use.
func (c *Client) Settings(ctx context.Context) (*wire.Profile, error) {
	var out wire.Profile
	return &out, c.do(ctx, http.MethodGet, "/api/user/settings", nil, nil, nil, &out)
}

// ReplaceSettings replaces every setting (PUT): fields left nil reset to their defaults.
func (c *Client) ReplaceSettings(ctx context.Context, s wire.SettingsInput) (*wire.Profile, error) {
	var out wire.Profile
	return &out, c.do(ctx, http.MethodPut, "/api/user/settings", nil, nil, s, &out)
}

// UpdateSettings changes the settings that are not nil in s (PATCH).
func (c *Client) UpdateSettings(ctx context.Context, s wire.SettingsInput) (*wire.Profile, error) {
	var out wire.Profile
	return &out, c.do(ctx, http.MethodPatch, "/api/user/settings", nil, nil, s, &out)
}

// Site reads the site settings.
func (c *Client) Site(ctx context.Context) (*wire.Site, error) {
	var out wire.Site
	return &out, c.do(ctx, http.MethodGet, "/api/user/site", nil, nil, nil, &out)
}

// UpdateSite changes the site fields s gives (PATCH); with dryRun it changes nothing and
// answers the site as the change would make it, with the notes it would list.
func (c *Client) UpdateSite(ctx context.Context, s wire.SiteInput, dryRun bool) (*wire.Site, error) {
	var query url.Values
	if dryRun {
		query = url.Values{"dry_run": {"true"}}
	}
	var out wire.Site
	return &out, c.do(ctx, http.MethodPatch, "/api/user/site", query, nil, s, &out)
}

func notePath(cuid string) string { return "/api/notes/" + url.PathEscape(cuid) }

// do sends one call with a JSON body (none when body is nil) and decodes its 2xx answer
// into out; a GET is sent again per the retry policy.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, header http.Header, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		var r io.Reader
		if payload != nil {
			r = bytes.NewReader(payload)
		}
		err := c.send(ctx, method, path, query, header, r, "application/json", out)
		retryAfter, transient := transient(err)
		if method != http.MethodGet || attempt == maxRetries || !transient || ctx.Err() != nil {
			return err
		}
		d := backoff(attempt, retryAfter)
		if waited+d > maxWait {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		waited += d
	}
}

// transient reports whether a GET that failed with err may succeed if sent again, and
// after how long the server asked for: an answer 429 or 503, or a connection that was
// reset or closed before the answer, or that timed out.
func transient(err error) (retryAfter time.Duration, ok bool) {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.RetryAfter, apiErr.Status == http.StatusTooManyRequests || apiErr.Status == http.StatusServiceUnavailable
	}
	var netErr net.Error
	return 0, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr) && netErr.Timeout()
}

// backoff is the wait before retry attempt+1: the server's Retry-After, else 1 s doubling
// with each attempt; plus up to a quarter more, so that clients limited together do not
// come back together.
func backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := retryAfter
	if d <= 0 {
		d = time.Second << attempt
	}
	return d + rand.N(d/4+1)
}

// send makes one request; body, when not nil, is sent with contentType.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, header http.Header, body io.Reader, contentType string, out any) error {
	req, err := c.request(ctx, method, path, query, header, body, contentType)
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	if c.Token != "" || path == loginPath {
		hc = sameOriginOnly(hc)
	}
	budget := c.Budget
	if !paced(method, path) {
		budget = nil
	}
	if budget != nil {
		if err := budget.wait(ctx); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	resp, err := hc.Do(req)
	if rerr := (*redirectError)(nil); errors.As(err, &rerr) {
		// Said as the refusal, rather than as a failed request to the refused URL.
		return fmt.Errorf("%s %s: %w", method, path, rerr)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if budget != nil {
		budget.observe(resp)
	}
	if resp.StatusCode >= 300 {
		return readError(resp)
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// request builds one request of send, with the client's headers and credentials.
func (c *Client) request(ctx context.Context, method, path string, query url.Values, header http.Header, body io.Reader, contentType string) (*http.Request, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "sharenote-client")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// readError turns an error answer into an *Error.
func readError(resp *http.Response) error {
	e := &Error{Status: resp.StatusCode}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	var body struct{ Error, Message string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err == nil {
		e.Code, e.Message = body.Error, body.Message
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}
