// Package ingress generates the nginx configuration of sharenote's ingress from the routes
// table: the e2e test's nginx and the one inlined in docker-compose.yaml. Only tests and
// the compose check import it, so no binary carries it.
package ingress

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/sharenote/sharenote/libs/routes"
)

// BodyLimit is the ingress's client_max_body_size. It sits above the largest body
// limit of the table (a 25,000,000-byte multipart publish), so that the target, not
// nginx, rejects an oversized body with the API's JSON 413.
const BodyLimit = "26m"

// Bodies nginx answers itself, in the API's error format (docs/api.md "Errors"), so that an
// unknown route, a body over the ingress's limit or a target that is down look like the
// API's own answers. The messages are the ones the targets send for the same codes.
const (
	nginxNotFound    = `{"error":"not_found","message":"Not found."}`
	nginxTooLarge    = `{"error":"payload_too_large","message":"The request body is larger than the ingress allows."}`
	nginxUnavailable = `{"error":"service_unavailable","message":"The service is temporarily unavailable; retry later."}`
)

// paramSegment is a path segment with a parameter: a :param, after a literal prefix or
// alone (@:handle, :cuid).
var paramSegment = regexp.MustCompile(`^([^:*]*):[A-Za-z_][A-Za-z0-9_]*$`)

// catchAllSegment is gin's *catch-all, the last segment of a path.
var catchAllSegment = regexp.MustCompile(`^\*[A-Za-z_][A-Za-z0-9_]*$`)

// PathRegexp returns the anchored regular expression (PCRE, as nginx and most ingress
// controllers take it) that matches exactly the request paths gin matches with the table
// path p: each :param is the rest of its segment, not empty and without a slash, after
// the segment's literal prefix if it has one (/@:handle: ^/@[^/]+$); a *catch-all is
// everything from its place on, the empty rest included (/@:handle/*path:
// ^/@[^/]+/(?s:.*)$, whose (?s:) lets it take a decoded newline, as gin's does). A path
// without parameters is returned quoted and anchored as well; callers that can use an
// exact match should.
func PathRegexp(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		switch m := paramSegment.FindStringSubmatch(s); {
		case m != nil:
			segs[i] = regexp.QuoteMeta(m[1]) + "[^/]+"
		case catchAllSegment.MatchString(s) && i == len(segs)-1:
			segs[i] = "(?s:.*)"
		default:
			segs[i] = regexp.QuoteMeta(s)
		}
	}
	return "^/" + strings.Join(segs, "/") + "$"
}

// hasParams reports whether the table path p has a :param or a *catch-all anywhere, a
// parameter inside a segment (/@:handle) included.
func hasParams(p string) bool { return strings.ContainsAny(p, ":*") }

// paths returns every distinct path of the table with its owning target, in table order.
// A path owned by two targets cannot be routed by path alone; TestEveryPathHasOneTarget
// keeps the table free of that, and this panics rather than emit a wrong ingress.
func paths() []*routes.Route {
	var out []*routes.Route
	for _, r := range routes.Table {
		i := slices.IndexFunc(out, func(o *routes.Route) bool { return o.Path == r.Path })
		if i < 0 {
			out = append(out, r)
			continue
		}
		if out[i].Target != r.Target {
			panic(fmt.Sprintf("routes: path %s is owned by both %s and %s", r.Path, out[i].Target, r.Target))
		}
	}
	return out
}

// Locations returns one nginx location block per path of the table, proxying to
// upstream(target) (a proxy_pass target such as "http://sharenote_notes"), then the
// catch-all `location /` that answers the API's 404 for every other path. Fixed paths are
// exact locations (`location = /api/publish`), which nginx tries first; paths with
// parameters are anchored regular expressions (`location ~ ^/api/notes/[^/]+$`,
// `location ~ ^/@[^/]+/(?s:.*)$`) whose segments each match one path segment, so no
// request path matches two of them and their order cannot matter. Methods are not routed
// here: every method of a path reaches the owning target, which answers 405 with the
// Allow header itself. proxy_pass names the upstream only, with no URI part, so that nginx
// passes the request URI on as the client sent it, escapes and all: a site's path says
// "+" and "%2B" apart (routes.ParseSitePath), and a URI part would make nginx send its
// own re-encoding of the decoded path instead. The blocks belong in a server that sets
// the proxy headers (Server).
func Locations(upstream func(target string) string) string {
	var b strings.Builder
	for _, r := range paths() {
		if hasParams(r.Path) {
			fmt.Fprintf(&b, "location ~ %s {\n", PathRegexp(r.Path))
		} else {
			fmt.Fprintf(&b, "location = %s {\n", r.Path)
		}
		fmt.Fprintf(&b, "    proxy_pass %s;\n}\n", upstream(r.Target))
	}
	b.WriteString("location / {\n")
	b.WriteString(nginxJSON(404, nginxNotFound, ""))
	b.WriteString("}\n")
	return b.String()
}

// nginxJSON is the body of a location that answers with a JSON error itself.
func nginxJSON(status int, body, extraHeader string) string {
	s := "    default_type application/json;\n" +
		"    add_header X-Request-ID $sharenote_request_id always;\n"
	if extraHeader != "" {
		s += "    add_header " + extraHeader + " always;\n"
	}
	return s + fmt.Sprintf("    return %d '%s';\n", status, body)
}

// Upstream is the name of a target's upstream block in Server's output.
func Upstream(target string) string {
	return "sharenote_" + strings.ReplaceAll(target, "-", "_")
}

// Server returns the http-context configuration of the ingress (what a conf.d file
// holds): the request-id map, one upstream per target at addr(target) (host:port), and
// the server listening on listen with the proxy headers and Locations. The targets
// must trust the ingress's address (SHARE_TRUSTED_PROXIES) for the X-Forwarded-For it
// appends to be believed; X-Request-ID passes a client's id through or sets nginx's own,
// so the ingress's and the target's log lines of one request carry the same id.
func Server(listen string, addr func(target string) string) string {
	var b strings.Builder
	b.WriteString("# Generated from the routes table (libs/testkit/ingress): do not edit by hand.\n")
	b.WriteString("map $http_x_request_id $sharenote_request_id {\n" +
		"    default $http_x_request_id;\n" +
		"    \"\" $request_id;\n" +
		"}\n")
	for _, s := range routes.Targets {
		fmt.Fprintf(&b, "upstream %s {\n    server %s;\n    keepalive 16;\n}\n", Upstream(s), addr(s))
	}
	b.WriteString("server {\n")
	fmt.Fprintf(&b, "    listen %s;\n", listen)
	b.WriteString("    server_tokens off;\n")
	fmt.Fprintf(&b, "    client_max_body_size %s;\n", BodyLimit)
	b.WriteString("    proxy_http_version 1.1;\n" +
		"    proxy_set_header Connection \"\";\n" +
		"    proxy_set_header Host $host;\n" +
		"    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n" +
		"    proxy_set_header X-Forwarded-Proto $scheme;\n" +
		"    proxy_set_header X-Request-ID $sharenote_request_id;\n" +
		"    error_page 413 =413 @payload_too_large;\n" +
		"    error_page 502 503 504 =503 @unavailable;\n")
	locs := Locations(func(s string) string { return "http://" + Upstream(s) })
	locs += "location @payload_too_large {\n" + nginxJSON(413, nginxTooLarge, "") + "}\n"
	locs += "location @unavailable {\n" + nginxJSON(503, nginxUnavailable, "Retry-After 5") + "}\n"
	for _, line := range strings.SplitAfter(strings.TrimSuffix(locs, "\n"), "\n") {
		b.WriteString("    " + line)
	}
	b.WriteString("\n}\n")
	return b.String()
}

// Options configures a standalone nginx process (Config): the end-to-end test's
// ingress, or an operator's nginx in front of targets on one host.
type Options struct {
	// Listen is the address nginx serves on, such as "127.0.0.1:8080".
	Listen string
	// Addr returns a target's host:port.
	Addr func(target string) string
	// Dir holds the pid file, the logs and the temporary files; nginx's workers must be
	// able to enter it.
	Dir string
	// User is the workers' "user group" when the master runs as root (empty: nginx's
	// compiled-in default).
	User string
}

// Config returns a complete nginx.conf that runs in the foreground (daemon off) with
// every path it writes under o.Dir, serving Server: `nginx -p DIR -e DIR/error.log -c
// FILE` needs no other file and no root.
func Config(o Options) string {
	var b strings.Builder
	b.WriteString("daemon off;\nworker_processes 1;\n")
	if o.User != "" {
		fmt.Fprintf(&b, "user %s;\n", o.User)
	}
	fmt.Fprintf(&b, "pid %s/nginx.pid;\nerror_log %s/error.log warn;\n", o.Dir, o.Dir)
	b.WriteString("events {\n    worker_connections 512;\n}\n")
	b.WriteString("http {\n")
	fmt.Fprintf(&b, "    access_log %s/access.log;\n", o.Dir)
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "    %s_temp_path %s/%s;\n", t, o.Dir, t)
	}
	b.WriteString("    default_type application/octet-stream;\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(Server(o.Listen, o.Addr), "\n"), "\n") {
		b.WriteString("    " + line)
	}
	b.WriteString("\n}\n")
	return b.String()
}

// NginxBinary finds nginx on PATH or where Debian installs it (/usr/sbin is not on every
// user's PATH); "" when it is not installed.
func NginxBinary() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return ""
}
