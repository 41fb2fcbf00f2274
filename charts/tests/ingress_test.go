package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// samplePath turns a gin pattern of the routes table into a request path, with a
// plausible value for each parameter (after its element's literal, as in /@:handle) and
// a note's path with escapes for a catch-all.
func samplePath(pattern string) string {
	samples := map[string]string{
		"file":     "k3v9x2m7q4w8e1r5t6y0u2i3.png",
		"filename": "diagram%20one.png",
		"version":  "3",
		"handle":   "alice",
	}
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if literal, name, ok := strings.Cut(s, ":"); ok {
			v, ok := samples[name]
			if !ok {
				v = "k3v9x2m7q4w8e1r5t6y0u2i3"
			}
			segs[i] = literal + v
		} else if strings.HasPrefix(s, "*") {
			segs[i] = "Folder/C%2B%2B+notes"
		}
	}
	return strings.Join(segs, "/")
}

// elements splits a path into its non-empty elements, as Kubernetes Prefix matching does
// (a trailing slash is ignored).
func elements(p string) []string {
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// matchIngress picks the rule an Ingress applies to a request path, with Kubernetes
// semantics: Exact matches the whole path; Prefix matches whole path elements; the
// longest matching path wins, and Exact wins over Prefix of the same length.
// ImplementationSpecific is what the chart means by it (_routes.tpl) and ingress-nginx,
// Traefik and HAProxy Ingress do with it: a plain string prefix, ranked by its length
// like the others.
func matchIngress(paths []networkingv1.HTTPIngressPath, req string) *networkingv1.HTTPIngressPath {
	var best *networkingv1.HTTPIngressPath
	better := func(p *networkingv1.HTTPIngressPath) bool {
		if best == nil || len(p.Path) > len(best.Path) {
			return true
		}
		return len(p.Path) == len(best.Path) && *p.PathType == networkingv1.PathTypeExact && *best.PathType != networkingv1.PathTypeExact
	}
	for i := range paths {
		p := &paths[i]
		matched := false
		switch *p.PathType {
		case networkingv1.PathTypeExact:
			matched = p.Path == req
		case networkingv1.PathTypePrefix:
			rule, path := elements(p.Path), elements(req)
			matched = len(rule) <= len(path)
			for j := 0; matched && j < len(rule); j++ {
				matched = rule[j] == path[j]
			}
		case networkingv1.PathTypeImplementationSpecific:
			matched = strings.HasPrefix(req, p.Path)
		}
		if matched && better(p) {
			best = p
		}
	}
	return best
}

func TestMatchIngressFollowsKubernetesSemantics(t *testing.T) {
	exact, prefix, specific := networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific
	rule := func(path string, pt networkingv1.PathType, svc string) networkingv1.HTTPIngressPath {
		return networkingv1.HTTPIngressPath{Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: svc}}}
	}
	paths := []networkingv1.HTTPIngressPath{
		rule("/", prefix, "root"), rule("/foo", prefix, "foo"), rule("/foo", exact, "foo-exact"),
		rule("/foo/bar", prefix, "bar"), rule("/aaa/bb", prefix, "bb"), rule("/@", specific, "at"),
		rule("/x@", specific, "x-at"), rule("/x@y/z", exact, "x-at-exact"),
	}
	for req, want := range map[string]string{
		"/foo": "foo-exact", "/foo/": "foo", "/foo/baz": "foo", "/foobar": "root", "/foo/bar/baz": "bar",
		"/aaa/bbb": "root", "/aaa/bb/": "bb", "/": "root", "/x/y": "root",
		// A string prefix matches inside an element, where Prefix cannot.
		"/@alice/": "at", "/@alice": "at", "/@alice/a/b": "at", "/@/x": "at", "/a/@b": "root",
		"/x@y": "x-at", "/x@y/z": "x-at-exact", "/x@y/z/": "x-at",
	} {
		got := matchIngress(paths, req)
		if got == nil || got.Backend.Service.Name != want {
			t.Errorf("%s → %v, want %s", req, got, want)
		}
	}
}

func ingressPaths(t *testing.T, r *rendered) (*networkingv1.Ingress, []networkingv1.HTTPIngressPath) {
	t.Helper()
	ing := one[networkingv1.Ingress](t, r, releaseName)
	if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].HTTP == nil {
		t.Fatalf("Ingress rules %+v, want one HTTP rule", ing.Spec.Rules)
	}
	return ing, ing.Spec.Rules[0].HTTP.Paths
}

func TestIngressRoutesEveryRouteOfTheTableToItsTarget(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		ing, paths := ingressPaths(t, r)
		used := map[string]bool{}
		for _, rt := range routes.Table {
			req := samplePath(rt.Path)
			if !routes.Match(rt.Path, req) {
				t.Fatalf("sample %s does not match its own pattern %s", req, rt.Path)
			}
			want := fullname(rt.Target)
			if r.allInOne() {
				want = fullname("all-in-one")
			}
			p := matchIngress(paths, req)
			switch {
			case p == nil:
				t.Errorf("%s %s (%s): no Ingress path matches %s", rt.Method, rt.Path, rt.Target, req)
			case p.Backend.Service == nil || p.Backend.Service.Name != want:
				t.Errorf("%s %s: %s goes to %+v via %s %s, want Service %s", rt.Method, rt.Path, req, p.Backend.Service, *p.PathType, p.Path, want)
			default:
				used[string(*p.PathType)+":"+p.Path] = true
			}
			if p != nil && p.Path == "/" {
				t.Errorf("%s %s reaches its target only through the catch-all", rt.Method, rt.Path)
			}
		}
		for _, p := range paths {
			switch *p.PathType {
			case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
			case networkingv1.PathTypeImplementationSpecific:
				// Only where no portable rule can route: a parameter inside an element.
				if !slices.ContainsFunc(routes.Table, func(rt *routes.Route) bool { return strings.HasPrefix(rt.Path, p.Path+":") }) {
					t.Errorf("path %s: ImplementationSpecific, but no route has a parameter right after it; want Exact or Prefix (portable semantics)", p.Path)
				}
			default:
				t.Errorf("path %s: pathType %s", p.Path, *p.PathType)
			}
			if p.Path != "/" && !used[string(*p.PathType)+":"+p.Path] {
				t.Errorf("Ingress path %s %s routes no route of the table", *p.PathType, p.Path)
			}
			// Every backend is a rendered Service's public port; the admin port never is.
			b := p.Backend.Service
			if b == nil {
				t.Errorf("path %s has no Service backend", p.Path)
				continue
			}
			svc := one[corev1.Service](t, r, b.Name)
			if b.Port.Name != "http" || servicePort(svc, "http") == nil {
				t.Errorf("path %s → %s port %+v, want the Service's http port", p.Path, b.Name, b.Port)
			}
		}
		// The sites' string prefix takes every site path, escapes and views included, and
		// nothing of the other routes.
		for req, target := range map[string]string{
			"/@alice/": routes.Notes, "/@alice": routes.Notes, "/@Alice/x": routes.Notes, "/@h/a/C%2B%2B": routes.Notes,
			"/@h/a/C++": routes.Notes, "/@h/-/tags/x": routes.Notes, "/@h/%2D/x": routes.Notes,
			"/assets/x": routes.Notes, "/s/x": routes.Notes, "/api/notes/x": routes.Notes, "/api/user/site": routes.Notes,
			"/api/images/u/n/@x.png": routes.Images, "/api/og/x.png": routes.OGRenderer, "/api/auth/publish": routes.Auth,
			"/api/publish": routes.Publish,
		} {
			want := fullname(target)
			if r.allInOne() {
				want = fullname("all-in-one")
			}
			p := matchIngress(paths, req)
			switch {
			case p == nil || p.Backend.Service.Name != want:
				t.Errorf("%s → %v, want %s", req, p, want)
			case (*p.PathType == networkingv1.PathTypeImplementationSpecific) != strings.HasPrefix(req, "/@"):
				t.Errorf("%s goes through %s %s: only site paths may take the sites' rule, and all of them", req, *p.PathType, p.Path)
			}
		}

		if ing.Spec.DefaultBackend != nil {
			t.Errorf("defaultBackend %+v: unknown paths go through the catch-all rule", ing.Spec.DefaultBackend)
		}

		// Unknown paths get the API's JSON 404 from the notes target (or the all-in-one).
		if r.val("ingress.catchAll") == true {
			want := fullname("notes")
			if r.allInOne() {
				want = fullname("all-in-one")
			}
			for _, req := range []string{"/", "/nope", "/api", "/api/unknown", "/api/publishx", "/apix/notes/1"} {
				if p := matchIngress(paths, req); p == nil || p.Backend.Service.Name != want {
					t.Errorf("unknown path %s → %v, want %s", req, p, want)
				}
			}
		}
	})
}

func TestIngressClassHostTLSAndBodySize(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		ing, _ := ingressPaths(t, r)
		if cls := r.str("ingress.className"); cls != "" && (ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != cls) {
			t.Errorf("ingressClassName %v, want %s", ing.Spec.IngressClassName, cls)
		}
		host := r.str("ingress.host")
		if ing.Spec.Rules[0].Host != host {
			t.Errorf("host %q, want %q", ing.Spec.Rules[0].Host, host)
		}
		if r.val("ingress.tls.enabled") == true {
			if len(ing.Spec.TLS) != 1 || len(ing.Spec.TLS[0].Hosts) != 1 || ing.Spec.TLS[0].Hosts[0] != host || ing.Spec.TLS[0].SecretName == "" {
				t.Errorf("tls %+v, want host %s with a Secret", ing.Spec.TLS, host)
			}
			if s := r.str("ingress.tls.secretName"); s != "" && ing.Spec.TLS[0].SecretName != s {
				t.Errorf("tls secret %s, want %s", ing.Spec.TLS[0].SecretName, s)
			}
		} else if len(ing.Spec.TLS) > 0 {
			t.Errorf("tls %+v while disabled", ing.Spec.TLS)
		}

		// A publish is up to 25 MB of multipart: the controller must let it through.
		v, ok := ing.Annotations["nginx.ingress.kubernetes.io/proxy-body-size"]
		if !ok {
			t.Fatal("no nginx.ingress.kubernetes.io/proxy-body-size annotation")
		}
		size, err := nginxSize(v)
		if err != nil {
			t.Fatal(err)
		}
		if size < 25<<20 || size <= routes.MultipartLimit {
			t.Errorf("proxy-body-size %s = %d bytes, want ≥ 25m and > the %d-byte multipart limit", v, size, routes.MultipartLimit)
		}
	})
}

// nginxSize parses an nginx size ("26m", "1g", "512k", "1048576").
func nginxSize(s string) (int64, error) {
	mult := int64(1)
	switch strings.ToLower(s[len(s)-1:]) {
	case "k":
		mult, s = 1<<10, s[:len(s)-1]
	case "m":
		mult, s = 1<<20, s[:len(s)-1]
	case "g":
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("nginx size %q: %w", s, err)
	}
	return n * mult, nil
}

func TestNginxSize(t *testing.T) {
	for s, want := range map[string]int64{"26m": 26 << 20, "1G": 1 << 30, "512k": 512 << 10, "1000": 1000} {
		if got, err := nginxSize(s); err != nil || got != want {
			t.Errorf("nginxSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
}
