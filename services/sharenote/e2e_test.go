//go:build e2e

package sharenote_test

// The split-topology end-to-end test (`make e2e`): the five services as separate
// processes of their own binaries, on the real Postgres and Redis, behind Debian's nginx
// configured from the routes table, driven only through nginx.
//
//	cd services/sharenote && go test -count=1 -tags e2e -run E2E -v .
//
// With SHARE_E2E_UPSTREAMS set, the services are already running elsewhere (the compose
// smoke test starts them as containers) and the test starts only nginx in front of them:
//
//	SHARE_E2E_UPSTREAMS   auth=127.0.0.1:18081,publish=…,notes=…,images=…,og-renderer=…
//	SHARE_E2E_LISTEN      nginx's address, the host of the services' SHARE_PUBLIC_URL
//	SHARE_E2E_DATABASE_URL the services' database, for `sharenote licenses` and `reaper`
//	SHARE_E2E_BLOB_URL     the services' object store (SHARE_BLOB_URL), for `reaper`; its
//	                       credentials come in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/ingress"
)

// shutdownTimeout is the services' SHARE_SHUTDOWN_TIMEOUT; each must exit 0 within it
// (plus a little) after SIGTERM.
const shutdownTimeout = 5 * time.Second

// stack is the running split topology as the test sees it.
type stack struct {
	// api sends requests through nginx and validates every response against the OpenAPI
	// document, like the in-process suites.
	api *testkit.Server
	// bin is the built binary.
	bin string
	// env is the configuration of the operator commands (licenses, reaper).
	env []string
	// procs are the services started by the test (none when they run elsewhere).
	procs []*process
	nginx *process
	// databaseURL is the owner's database; roles the role each target logs in as (none
	// when the services run elsewhere).
	databaseURL string
	roles       map[string]string
}

func TestE2ESplitTopology(t *testing.T) {
	nginx := ingress.NginxBinary()
	if nginx == "" {
		t.Skip("nginx not installed: apt-get install nginx")
	}
	st := startStack(t, nginx)
	api := st.api

	t.Run("routing errors look like the API's", func(t *testing.T) {
		for _, p := range []string{"/api/nothing-here", "/api/user/settings/", "/healthz", "/metrics", "/"} {
			resp := api.Do(t, testkit.Request{Method: "GET", Path: p}).Expect(t, http.StatusNotFound, "not_found")
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("GET %s: Content-Type %q", p, ct)
			}
		}
		for _, c := range []struct{ method, path, allow string }{
			{"DELETE", "/api/user/settings", "GET, HEAD, PATCH, PUT"},
			{"GET", "/api/auth/publish", "POST"},
			{"PUT", "/api/publish", "POST"},
			{"POST", "/api/og/x.png", "GET, HEAD"},
		} {
			resp := api.Do(t, testkit.Request{Method: c.method, Path: c.path}).Expect(t, http.StatusMethodNotAllowed, "method_not_allowed")
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	})

	t.Run("forwarded headers pass through nginx", func(t *testing.T) {
		resp := api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + unknownCUID, Header: map[string]string{"X-Request-ID": "e2e-request-1"}})
		if got := resp.Header.Get("X-Request-ID"); got != "e2e-request-1" {
			t.Errorf("X-Request-ID = %q, want the client's e2e-request-1", got)
		}
		// Without one, nginx sets its own (32 hex digits; a service would make 24).
		resp = api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + unknownCUID})
		if got := resp.Header.Get("X-Request-ID"); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got) {
			t.Errorf("X-Request-ID = %q, want nginx's $request_id", got)
		}
		// nginx appends the peer to X-Forwarded-For and the services trust nginx, so the
		// client's address (here the one it claims) is what they log and limit by.
		notes := st.process("notes")
		if notes == nil {
			return // The services run elsewhere; their logs are not at hand.
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + unknownCUID,
			Header: map[string]string{"X-Request-ID": "e2e-forwarded-1", "X-Forwarded-For": "198.51.100.7"}})
		notes.waitFor(t, "logging the forwarded client", func() bool {
			b, _ := os.ReadFile(notes.log)
			return regexp.MustCompile(`"ip":"198\.51\.100\.7","request_id":"e2e-forwarded-1"`).Match(b)
		})
	})

	owner := st.login(t, "E2E Ada", "ada@example.com")

	t.Run("oversized bodies get the API's 413", func(t *testing.T) {
		// Over the service's 25,000,000-byte multipart limit, the service answers; over
		// the ingress's 26 MiB, nginx does, in the same JSON.
		for _, size := range []int{25_000_001, 27 << 20} {
			api.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: owner.Token,
				ContentType: "multipart/form-data; boundary=x", Body: make([]byte, size)}).Expect(t, 413, "payload_too_large")
		}
	})

	var mdID string
	t.Run("publish Markdown with frontmatter", func(t *testing.T) {
		var created struct{ CUID, URL string }
		api.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: owner.Token, ContentType: "text/markdown",
			Header: map[string]string{"X-Summary": "Published through nginx"},
			Body:   []byte("---\ntitle: Split topology\ntags: [e2e, nginx]\n---\n# Hello\n\nFrom five processes.\n")}).
			Expect(t, 200, "").Decode(t, &created)
		mdID = created.CUID
		if created.URL != api.URL+"/s/"+created.CUID {
			t.Fatalf("url = %q, want %s/s/%s", created.URL, api.URL, created.CUID)
		}
	})

	t.Run("each target is logged in as its own role", st.checkSessions)

	t.Run("public JSON read with ETag", func(t *testing.T) {
		resp := api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID}).Expect(t, 200, "")
		var n struct {
			Title, Summary, Content string
			ShowProperties          bool
			Properties              map[string]any
		}
		resp.Decode(t, &n)
		if n.Title != "Split topology" || n.Summary != "Published through nginx" || !strings.Contains(n.Content, "From five processes.") ||
			strings.Contains(n.Content, "tags:") || !n.ShowProperties || fmt.Sprint(n.Properties["tags"]) != "[e2e nginx]" {
			t.Errorf("note = %+v", n)
		}
		for _, key := range []string{`"publishedAt"`, `"updatedAt"`, `"showProperties"`, `"expiresAt"`, `"appearance"`} {
			if !bytes.Contains(resp.Body, []byte(key)) {
				t.Errorf("public JSON lacks %s (camelCase): %s", key, resp.Body)
			}
		}
		etag := resp.Header.Get("ETag")
		if etag == "" || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=") {
			t.Fatalf("ETag %q, Cache-Control %q", etag, resp.Header.Get("Cache-Control"))
		}
		if r := api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID, Header: map[string]string{"If-None-Match": etag}}); r.Status != 304 || len(r.Body) != 0 {
			t.Errorf("If-None-Match: %d %q, want 304 without a body", r.Status, r.Body)
		}
	})

	t.Run("note page", func(t *testing.T) {
		resp := api.Do(t, testkit.Request{Method: "GET", Path: "/s/" + mdID}).Expect(t, 200, "")
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q", ct)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		for _, want := range []string{"Split topology", "From five processes.", "/api/og/" + mdID + ".png"} {
			if !bytes.Contains(resp.Body, []byte(want)) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})

	t.Run("social preview is a 1200x630 PNG", func(t *testing.T) {
		resp := api.Do(t, testkit.Request{Method: "GET", Path: "/api/og/" + mdID + ".png"}).Expect(t, 200, "")
		cfg, err := png.DecodeConfig(bytes.NewReader(resp.Body))
		if err != nil || cfg.Width != 1200 || cfg.Height != 630 || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("OG image: %v %dx%d %s", err, cfg.Width, cfg.Height, resp.Header.Get("Content-Type"))
		}
	})

	var imgID string
	var imgURLs []string
	t.Run("publish multipart with two images", func(t *testing.T) {
		imgID, imgURLs = publishWithImages(t, api, owner.Token, map[string]string{"content": "[[one.png]] ![[two.gif]]", "title": "Pictures"})
		for _, u := range imgURLs {
			resp := api.Do(t, testkit.Request{Method: "GET", Path: u}).Expect(t, 200, "")
			if !bytes.HasPrefix(resp.Body, []byte("\x89PNG")) && !bytes.HasPrefix(resp.Body, []byte("GIF89a")) {
				t.Errorf("%s: %d bytes of %s, not the upload", u, len(resp.Body), resp.Header.Get("Content-Type"))
			}
		}
		if used := imageBytesUsed(t, api, owner.Token); used != 164 {
			t.Errorf("image_bytes_used = %v, want 164", used)
		}
	})

	t.Run("PATCH three times, then versions", func(t *testing.T) {
		for _, title := range []string{"v2", "v3", "v4"} {
			var o struct{ Title, Status string }
			api.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + mdID, Token: owner.Token, JSON: map[string]string{"title": title}}).
				Expect(t, 200, "").Decode(t, &o)
			if o.Title != title || o.Status != "active" {
				t.Fatalf("PATCH answered %+v", o)
			}
		}
		var list struct {
			Versions []struct {
				Version int
				Title   *string
			}
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID + "/versions", Token: owner.Token}).Expect(t, 200, "").Decode(t, &list)
		if len(list.Versions) != 3 || list.Versions[0].Version != 3 || list.Versions[2].Version != 1 {
			t.Fatalf("versions = %+v, want 3, 2, 1", list.Versions)
		}
		var v1 struct{ Title, Content string }
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID + "/versions/1", Token: owner.Token}).Expect(t, 200, "").Decode(t, &v1)
		if v1.Title != "Split topology" || !strings.Contains(v1.Content, "From five processes.") {
			t.Errorf("version 1 = %+v, want the published state", v1)
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID + "/versions/9", Token: owner.Token}).Expect(t, 404, "not_found")
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + mdID + "/versions/x", Token: owner.Token}).Expect(t, 400, "invalid_version")
	})

	t.Run("settings", func(t *testing.T) {
		var s struct {
			Settings struct {
				Name, Theme string
				AccentColor string `json:"accent_color"`
			}
		}
		api.Do(t, testkit.Request{Method: "PATCH", Path: "/api/user/settings", Token: owner.Token,
			JSON: map[string]any{"theme": "dark", "accent_color": "#ff6600"}}).Expect(t, 200, "").Decode(t, &s)
		if s.Settings.Theme != "dark" || s.Settings.AccentColor != "#ff6600" || s.Settings.Name != "E2E Ada" {
			t.Errorf("PATCH answered %+v", s.Settings)
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: owner.Token}).Expect(t, 200, "").Decode(t, &s)
		if s.Settings.Theme != "dark" {
			t.Errorf("GET answered %+v after PATCH", s.Settings)
		}
	})

	var expID string
	var expURLs []string
	t.Run("expiry", func(t *testing.T) {
		expires := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
		expID, expURLs = publishWithImages(t, api, owner.Token, map[string]string{"content": "[[one.png]] [[two.gif]]",
			"title": "Ephemeral", "expires_at": expires.Format("2006-01-02T15:04:05.000Z")})
		var n struct {
			Appearance struct{ Theme, AccentColor string }
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + expID}).Expect(t, 200, "").Decode(t, &n)
		if n.Appearance.Theme != "dark" || n.Appearance.AccentColor != "#ff6600" {
			t.Errorf("appearance = %+v, want the owner's new settings", n.Appearance)
		}
		api.Do(t, testkit.Request{Method: "GET", Path: expURLs[0]}).Expect(t, 200, "")
		time.Sleep(time.Until(expires) + 200*time.Millisecond) // The test's only sleep: ≤ 2.2 s.
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + expID}).Expect(t, 404, "not_found")
		for _, u := range expURLs {
			api.Do(t, testkit.Request{Method: "GET", Path: u}).Expect(t, 404, "not_found")
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/og/" + expID + ".png"}).Expect(t, 404, "not_found")
		if r := api.Do(t, testkit.Request{Method: "GET", Path: "/s/" + expID}); r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("page of an expired note: %d %s, want a 404 HTML page", r.Status, r.Header.Get("Content-Type"))
		}
		if used := imageBytesUsed(t, api, owner.Token); used != 2*164 {
			t.Errorf("image_bytes_used = %v, want %d (expired images keep their storage)", used, 2*164)
		}
	})

	t.Run("list pages with a cursor", func(t *testing.T) {
		var seen []string
		statuses := map[string]string{}
		cursor := ""
		for page := 0; ; page++ {
			if page > 5 {
				t.Fatal("the cursor never ends")
			}
			path := "/api/user/notes?limit=2"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			var l struct {
				Notes      []struct{ CUID, Status string }
				NextCursor *string `json:"next_cursor"`
			}
			api.Do(t, testkit.Request{Method: "GET", Path: path, Token: owner.Token}).Expect(t, 200, "").Decode(t, &l)
			for _, n := range l.Notes {
				seen = append(seen, n.CUID)
				statuses[n.CUID] = n.Status
			}
			if l.NextCursor == nil {
				break
			}
			cursor = *l.NextCursor
		}
		if want := []string{expID, imgID, mdID}; !slices.Equal(seen, want) {
			t.Errorf("pages = %v, want newest first %v", seen, want)
		}
		if statuses[expID] != "expired" || statuses[mdID] != "active" {
			t.Errorf("statuses = %v", statuses)
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/user/notes?cursor=forged", Token: owner.Token}).Expect(t, 400, "invalid_cursor")
	})

	t.Run("unshare releases the storage at once", func(t *testing.T) {
		for _, id := range []string{imgID, expID} {
			var u struct{ CUID, Status string }
			api.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: owner.Token, JSON: map[string]string{"cuid": id}}).
				Expect(t, 200, "").Decode(t, &u)
			if u.CUID != id || u.Status != "unpublished" {
				t.Errorf("unshare answered %+v", u)
			}
			api.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: owner.Token, JSON: map[string]string{"cuid": id}}).Expect(t, 404, "not_found")
		}
		api.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + imgID}).Expect(t, 404, "not_found")
		for _, u := range imgURLs {
			api.Do(t, testkit.Request{Method: "GET", Path: u}).Expect(t, 404, "not_found")
		}
		if used := imageBytesUsed(t, api, owner.Token); used != 0 {
			t.Errorf("image_bytes_used = %v after unsharing, want 0", used)
		}
	})

	t.Run("reaper deletes the released bytes", func(t *testing.T) {
		var r struct{ Images, Bytes, Batches int }
		st.runJSON(t, &r, "reap")
		if r.Images != 4 || r.Bytes != 2*164 {
			t.Errorf("reaper = %+v, want the 4 images (328 bytes) of the two unshared notes", r)
		}
		st.runJSON(t, &r, "reap")
		if r.Images != 0 {
			t.Errorf("second reaper run = %+v, want nothing left", r)
		}
	})

	t.Run("the mutation limit is shared by publish and notes", func(t *testing.T) {
		busy := st.login(t, "E2E Busy", "busy@example.com")
		mutations := []testkit.Request{
			{Method: "POST", Path: "/api/publish", Token: busy.Token, JSON: map[string]string{"content": "burst"}},      // publish
			{Method: "PATCH", Path: "/api/user/settings", Token: busy.Token, JSON: map[string]string{"theme": "light"}}, // notes
		}
		start := time.Now()
		allowed := 0
		var limited *testkit.Response
		for limited == nil {
			resp := api.Do(t, mutations[allowed%2])
			switch resp.Status {
			case 200:
				if allowed++; allowed > 200 {
					t.Fatal("mutations are not limited")
				}
			case 429:
				limited = resp.Expect(t, 429, "rate_limited")
			default:
				t.Fatalf("mutation %d: %d %s", allowed+1, resp.Status, resp.Body)
			}
		}
		// Separate counters per service would admit 60 on each (120) before any 429;
		// Redis's GCRA earns one mutation back per second of the run.
		if earned := int(time.Since(start) / time.Second); allowed < 60 || allowed > 60+earned+1 {
			t.Fatalf("%d mutations admitted across publish and notes in %v, want 60 (+%d earned)", allowed, time.Since(start), earned)
		}
		if ra, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After %q, want whole seconds ≥ 1", limited.Header.Get("Retry-After"))
		}
		// The other service is limited too (one refill may land in between).
		other := mutations[(allowed+1)%2]
		if r := api.Do(t, other); r.Status != 429 {
			api.Do(t, other).Expect(t, 429, "rate_limited")
		}
	})

	st.stopServices(t)
	if st.procs != nil {
		t.Run("a service that is down is the API's 503", func(t *testing.T) {
			resp, err := http.Get(api.URL + "/api/notes/" + unknownCUID)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct{ Error string }
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 503 ||
				body.Error != "service_unavailable" || resp.Header.Get("Retry-After") == "" {
				t.Errorf("%d %+v (%v), Retry-After %q: want 503 service_unavailable JSON", resp.StatusCode, body, err, resp.Header.Get("Retry-After"))
			}
		})
	}
	st.nginx.terminate(t, syscall.SIGQUIT, 10*time.Second)
}

// startStack builds the binary and starts the topology: one process per target, each
// `sharenote serve --target <target>` (unless SHARE_E2E_UPSTREAMS names running ones),
// and nginx in front of them.
func startStack(t *testing.T, nginxBin string) *stack {
	t.Helper()
	external := os.Getenv("SHARE_E2E_UPSTREAMS")
	st := &stack{bin: buildBinary(t)}
	listen := os.Getenv("SHARE_E2E_LISTEN")
	if listen == "" {
		listen = testkit.FreeAddr()
	}
	publicURL := "http://" + listen
	upstreams := map[string]string{}
	if external != "" {
		for _, kv := range strings.Split(external, ",") {
			name, addr, _ := strings.Cut(strings.TrimSpace(kv), "=")
			upstreams[name] = addr
		}
		for _, s := range routes.Targets {
			if upstreams[s] == "" {
				t.Fatalf("SHARE_E2E_UPSTREAMS lacks %s", s)
			}
		}
		if os.Getenv("SHARE_E2E_DATABASE_URL") == "" {
			t.Fatal("SHARE_E2E_UPSTREAMS needs SHARE_E2E_DATABASE_URL (the services' database)")
		}
		st.env = commandEnv(map[string]string{"SHARE_DATABASE_URL": os.Getenv("SHARE_E2E_DATABASE_URL"),
			"SHARE_BLOB_URL": os.Getenv("SHARE_E2E_BLOB_URL")})
	} else {
		// The services keep images in a bucket of a throw-away MinIO. The operator
		// commands run as the owner; each target gets only what it needs (targetConfig).
		config := maps.Clone(testkit.S3(t).Env)
		maps.Copy(config, map[string]string{
			"SHARE_DATABASE_URL":     testkit.NewPostgresDB(t),
			"SHARE_REDIS_URL":        testkit.RedisURL(t),
			"SHARE_REDIS_KEY_PREFIX": testkit.NewRedisPrefix(t),
			"SHARE_PUBLIC_URL":       publicURL,
			"SHARE_TRUSTED_PROXIES":  "127.0.0.1",
			"SHARE_SHUTDOWN_TIMEOUT": shutdownTimeout.String(),
			// nginx here stops sending at once; nothing needs the drain window.
			"SHARE_DRAIN_DELAY": "0s",
		})
		st.env = commandEnv(config)
		st.databaseURL = config["SHARE_DATABASE_URL"]
		roleURLs := st.targetRoles(t, st.databaseURL)
		for _, s := range routes.Targets {
			addr, admin := testkit.FreeAddr(), testkit.FreeAddr()
			own := targetConfig(t, s, config, roleURLs[s])
			own["SHARE_ADDR"], own["SHARE_ADMIN_ADDR"] = addr, admin
			p := startProcess(t, s, st.bin, []string{"serve", "--target", s}, commandEnv(own))
			st.procs = append(st.procs, p)
			upstreams[s] = addr
			p.waitFor(t, "ready", func() bool { return testkit.Responds("http://"+admin+"/readyz", http.StatusOK) })
		}
	}
	st.nginx = startNginx(t, nginxBin, listen, upstreams)
	st.api = &testkit.Server{URL: publicURL}
	return st
}

// startNginx runs nginx in the foreground with the routes table's configuration.
func startNginx(t *testing.T, bin, listen string, upstreams map[string]string) *process {
	t.Helper()
	// nginx's workers drop root for an unprivileged user, which must be able to enter the
	// directory of the temporary files: t.TempDir() is private to root.
	dir, err := os.MkdirTemp("", "sharenote-e2e-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := ingress.Options{Listen: listen, Addr: func(s string) string { return upstreams[s] }, Dir: dir}
	if os.Geteuid() == 0 {
		o.User = "nobody " + nobodyGroup()
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(ingress.Config(o)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, "nginx", bin, []string{"-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf}, os.Environ())
	p.extraLog = filepath.Join(dir, "error.log")
	p.waitFor(t, "listening", func() bool { return testkit.Responds("http://"+listen+"/api/nothing-here", http.StatusNotFound) })
	return p
}

// process returns the running service name, or nil when the services run elsewhere.
func (st *stack) process(name string) *process {
	for _, p := range st.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// nobodyGroup is the unprivileged group of the system (Debian: nogroup).
func nobodyGroup() string {
	if _, err := user.LookupGroup("nogroup"); err == nil {
		return "nogroup"
	}
	return "nobody"
}

// stopServices sends SIGTERM to every service the test started and requires each to exit
// 0 within the shutdown timeout: the graceful shutdown of docs/operations.md "Health and
// shutdown".
func (st *stack) stopServices(t *testing.T) {
	t.Helper()
	for _, p := range st.procs {
		p.terminate(t, syscall.SIGTERM, shutdownTimeout+5*time.Second)
	}
}

// account is a license turned into a session token through nginx.
type account struct {
	LicenseKey string `json:"license_key"`
	InstanceID string `json:"instance_id"`
	UserCUID   string `json:"user_cuid"`
	Token      string
}

// login creates a license with the operator command and exchanges it for a token.
func (st *stack) login(t *testing.T, name, email string) account {
	t.Helper()
	var a account
	st.runJSON(t, &a, "licenses", "create", "--name", name, "--email", email)
	var tok struct {
		Token    string
		UserCUID string `json:"user_cuid"`
		User     struct{ Name, Email string }
	}
	st.api.Do(t, testkit.Request{Method: "POST", Path: "/api/auth/publish",
		JSON: map[string]string{"license_key": a.LicenseKey, "instance_id": a.InstanceID}}).Expect(t, 200, "").Decode(t, &tok)
	if tok.Token == "" || tok.UserCUID != a.UserCUID || tok.User.Name != name || tok.User.Email != email {
		t.Fatalf("token response %+v for license %+v", tok, a)
	}
	a.Token = tok.Token
	return a
}

// runJSON runs a command of the built binary with the operator environment and decodes
// its stdout.
func (st *stack) runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	st.runJSONWith(t, st.env, v, args...)
}

// runJSONWith runs a command of the built binary with env and decodes its stdout.
func (st *stack) runJSONWith(t *testing.T, env []string, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(st.bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sharenote %v: %v\n%s", args, err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("sharenote %v printed %q: %v", args, out, err)
	}
}
