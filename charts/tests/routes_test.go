package tests

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/sharenote"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// routesTemplateFile is the chart's generated list of Ingress paths, relative to the chart.
var routesTemplateFile = filepath.Join("templates", "_routes.tpl")

// ingressRule is one path of the chart's Ingress: the "sharenote.routes" list that
// templates/ingress.yaml ranges over.
type ingressRule struct {
	Path     string
	PathType string // "Exact", "Prefix" or "ImplementationSpecific"
	Target   string
}

// implementationSpecific is the pathType of a rule that is a plain string prefix: what
// ingress-nginx (a prefix location), Traefik (PathPrefix) and HAProxy Ingress ("begin")
// make of it, and what matchIngress simulates.
const implementationSpecific = "ImplementationSpecific"

// ingressRules derives the Ingress paths from a routes table, one rule per distinct rule
// in table order:
//
//   - a fixed path (no :param) is an Exact rule of its own;
//   - a parameterised path is a Prefix rule of its elements before the first :param
//     (/api/notes/:cuid/versions → Prefix /api/notes), shared by every route under it;
//   - a path whose first parameter sits inside an element, after a literal
//     (/@:handle/*path, /@:handle), is an ImplementationSpecific rule up to the parameter
//     (/@), a plain string prefix: Kubernetes Prefix matches whole elements, so Prefix /@
//     never matches /@alice/, and no portable rule can.
//
// Kubernetes picks the longest matching path, Exact before a Prefix of the same length, so
// a fixed path of one target under another target's Prefix still reaches its own target,
// as gin prefers a static route to a parameter. What these rules cannot express is an
// error, never a wrong Ingress: a parameter that is a whole first element (its Prefix would
// be /, the catch-all), one rule claimed by two targets, a Prefix of one target that would
// take requests of another target's parameterised route by being longer (/api/x/:id of A
// and /api/x/y/:z of B: /api/x/y is A's, but Prefix /api/x/y is B's), and a string prefix
// that requests of another target's route may start with (/@:handle of A and /@admin of
// B), which would depend on how a controller ranks the two.
func ingressRules(table []*routes.Route) ([]ingressRule, error) {
	var rules []ingressRule
	add := func(r ingressRule, from *routes.Route) error {
		for _, o := range rules {
			if o.Path == r.Path && o.PathType == r.PathType {
				if o.Target != r.Target {
					return fmt.Errorf("%s %s of %s: %s %s is also %s's; Ingress rules cannot route it", from.Method, from.Path, from.Target, r.PathType, r.Path, o.Target)
				}
				return nil
			}
		}
		rules = append(rules, r)
		return nil
	}
	for _, rt := range table {
		if !strings.HasPrefix(rt.Path, "/") {
			return nil, fmt.Errorf("%s %s: the path does not start with /", rt.Method, rt.Path)
		}
		segs := strings.Split(rt.Path[1:], "/")
		i := slices.IndexFunc(segs, isParamElement)
		r := ingressRule{Path: rt.Path, PathType: "Exact", Target: rt.Target}
		if i >= 0 {
			literal, _, _ := strings.Cut(segs[i], ":")
			switch {
			case literal != "" && !strings.HasPrefix(literal, "*"):
				r = ingressRule{Path: "/" + strings.Join(append(slices.Clone(segs[:i]), literal), "/"), PathType: implementationSpecific, Target: rt.Target}
			case i == 0:
				return nil, fmt.Errorf("%s %s: a parameter as the first path element would make its Prefix rule /, the catch-all", rt.Method, rt.Path)
			default:
				r = ingressRule{Path: "/" + strings.Join(segs[:i], "/"), PathType: "Prefix", Target: rt.Target}
			}
		}
		if err := add(r, rt); err != nil {
			return nil, err
		}
	}
	// A longer Prefix of another target must not match a request of a parameterised route.
	for _, rt := range table {
		own := prefixRule(rt.Path)
		if own == "" {
			continue
		}
		pattern := strings.Split(rt.Path[1:], "/")
		for _, q := range rules {
			if q.PathType != "Prefix" || q.Target == rt.Target || len(q.Path) <= len(own) {
				continue
			}
			elems := strings.Split(q.Path[1:], "/")
			if len(elems) > len(pattern) {
				continue
			}
			shadows := true
			for j, e := range elems {
				if p := pattern[j]; !isParamElement(p) && p != e {
					shadows = false
				}
			}
			if shadows {
				return nil, fmt.Errorf("%s %s of %s: requests such as %s go to %s through Prefix %s", rt.Method, rt.Path, rt.Target, q.Path, q.Target, q.Path)
			}
		}
	}
	// No request of another target's route may start with a string prefix.
	for _, q := range rules {
		if q.PathType != implementationSpecific {
			continue
		}
		for _, rt := range table {
			fixed, _, param := strings.Cut(strings.Replace(rt.Path, "*", ":", 1), ":")
			if rt.Target != q.Target && (strings.HasPrefix(fixed, q.Path) || param && strings.HasPrefix(q.Path, fixed)) {
				return nil, fmt.Errorf("%s %s of %s: its requests may start with %s, which %s %s sends to %s", rt.Method, rt.Path, rt.Target, q.Path, q.PathType, q.Path, q.Target)
			}
		}
	}
	return rules, nil
}

// isParamElement reports whether a path element of a gin pattern holds a parameter: a
// :param, alone or after a literal (@:handle), or a *catch-all.
func isParamElement(s string) bool { return strings.Contains(s, ":") || strings.HasPrefix(s, "*") }

// prefixRule is the Prefix path of a parameterised pattern, "" for a fixed one and for one
// whose rule is not a Prefix.
func prefixRule(pattern string) string {
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	i := slices.IndexFunc(segs, isParamElement)
	if i <= 0 || !strings.HasPrefix(segs[i], ":") && !strings.HasPrefix(segs[i], "*") {
		return ""
	}
	return "/" + strings.Join(segs[:i], "/")
}

// plainYAML is what a YAML flow mapping takes unquoted.
var plainYAML = regexp.MustCompile(`^[A-Za-z0-9/._~-]+$`)

func yamlScalar(s string) string {
	if plainYAML.MatchString(s) {
		return s
	}
	b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
	return string(b)
}

// routesTemplate returns the content of templates/_routes.tpl for the targets and the
// routes table.
func routesTemplate(targets []string, table []*routes.Route) (string, error) {
	rules, err := ingressRules(table)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`{{/*
Generated from libs/routes by charts/tests (go test -run Routes -update): do not edit by hand.

The Ingress paths of the API's endpoint table (libs/routes.Table), in its order, each to the
target that serves it: Exact for a fixed path, Prefix for a parameterised one, up to its
first parameter (Kubernetes Prefix matches whole path elements, and the longest match
wins, Exact before Prefix). The sites' /@:handle has its parameter inside the first
element, which neither Prefix nor Exact can express (Prefix /@ never matches /@alice/):
it is ImplementationSpecific /@, which ingress-nginx, Traefik and HAProxy Ingress match as
a plain string prefix, and no other route's path starts with /@ (docs/deployment.md,
"The Ingress"). charts/tests proves every route of the table reaches its target through
these rules and that no rule is unused.
*/}}
{{- define "sharenote.routes" -}}
`)
	for _, r := range rules {
		fmt.Fprintf(&b, "- {path: %s, pathType: %s, target: %s}\n", yamlScalar(r.Path), r.PathType, yamlScalar(r.Target))
	}
	b.WriteString("{{- end -}}\n")
	b.WriteString(`
{{/*
The targets (libs/routes.Targets), in deployment order: one Deployment each in split mode.
*/}}
{{- define "sharenote.targets" -}}
`)
	for _, t := range targets {
		fmt.Fprintf(&b, "- %s\n", yamlScalar(t))
	}
	b.WriteString("{{- end -}}\n")
	return b.String(), nil
}

// needsTemplate returns the part of templates/_routes.tpl that lists what each target
// needs (app.Target.Needs), of which a workload gets the credentials and the egress: edge
// is whether its jobs include the purge (app.JobPurge), which sends PURGE requests to the
// edge.
func needsTemplate(targets []app.Target) string {
	var b strings.Builder
	b.WriteString(`
{{/*
What each target needs (app.Target.Needs; ` + "`sharenote routes --needs`" + `): a workload is given the
credentials of these only. edge: its background jobs include purge, which sends PURGE
requests to edge.purgeURLs.
*/}}
{{- define "sharenote.needs" -}}
`)
	for _, t := range targets {
		fmt.Fprintf(&b, "%s: {database: %s, redis: %t, objectStore: %t, edge: %t}\n", yamlScalar(t.Name), t.Needs.Database,
			t.Needs.Redis, t.Needs.ObjectStore, slices.Contains(t.Needs.Jobs, app.JobPurge))
	}
	b.WriteString("{{- end -}}\n")
	return b.String()
}

// TestRoutesTemplateIsGeneratedFromTheTable keeps the chart's Ingress paths the routes
// table's, and its targets' needs the code's: the committed _routes.tpl must be the
// generators' output. `go test -run Routes -update` rewrites it (and, as the flag is
// shared, the compose nginx of the same table).
func TestRoutesTemplateIsGeneratedFromTheTable(t *testing.T) {
	want, err := routesTemplate(routes.Targets, routes.Table)
	if err != nil {
		t.Fatalf("the routes table cannot be routed by an Ingress: %v", err)
	}
	want += needsTemplate(sharenote.Program.Targets)
	file := filepath.Join(chartDir(t), routesTemplateFile)
	got, err := os.ReadFile(file)
	if *update && string(got) != want {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", file)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("charts/sharenote/%s is not the routes table's; run `go test -run Routes -update` in charts/tests.\n--- got\n%s\n--- want\n%s",
			routesTemplateFile, got, want)
	}
	// The list is only a partial: nothing else may define it.
	for _, f := range loadChart(t).Templates {
		if f.Name != filepath.ToSlash(routesTemplateFile) && strings.Contains(string(f.Data), `define "sharenote.routes"`) {
			t.Errorf("%s defines sharenote.routes too", f.Name)
		}
	}
}

func TestIngressRulesOfTheTable(t *testing.T) {
	rules, err := ingressRules(routes.Table)
	if err != nil {
		t.Fatal(err)
	}
	// Every target of the table is reachable, and every rule names a target.
	var targets []string
	for _, r := range rules {
		if !slices.Contains(routes.Targets, r.Target) {
			t.Errorf("rule %+v: %s is not in routes.Targets", r, r.Target)
		}
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
	}
	for _, tg := range routes.Targets {
		if len(routes.ForTarget(tg)) > 0 && !slices.Contains(targets, tg) {
			t.Errorf("target %s serves routes but no Ingress rule reaches it", tg)
		}
	}
}

func TestIngressRulesGenerator(t *testing.T) {
	rt := func(path, target string) *routes.Route {
		return &routes.Route{Method: "GET", Path: path, Target: target}
	}
	rules, err := ingressRules([]*routes.Route{
		rt("/api/a", "x"), rt("/api/b/:id", "y"), rt("/api/b/:id/more", "y"), rt("/api/b/fixed", "z"),
		rt("/api/c/:id", "z"), rt("/api/a", "x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ingressRule{
		{"/api/a", "Exact", "x"}, {"/api/b", "Prefix", "y"}, {"/api/b/fixed", "Exact", "z"}, {"/api/c", "Prefix", "z"},
	}
	if !slices.Equal(rules, want) {
		t.Errorf("rules %+v, want %+v", rules, want)
	}

	// A parameter inside an element: one string prefix up to it, for the page and the bare
	// address alike, beside the other rules.
	rules, err = ingressRules([]*routes.Route{
		rt("/s/:cuid", "n"), rt("/@:handle/*path", "n"), rt("/@:handle", "n"), rt("/api/a/:id", "x"), rt("/api/v@:id", "x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []ingressRule{{"/s", "Prefix", "n"}, {"/@", "ImplementationSpecific", "n"}, {"/api/a", "Prefix", "x"}, {"/api/v@", "ImplementationSpecific", "x"}}
	if !slices.Equal(rules, want) {
		t.Errorf("rules %+v, want %+v", rules, want)
	}

	for name, table := range map[string][]*routes.Route{
		"a parameter first":                            {rt("/:page", "x")},
		"a catch-all first":                            {rt("/*all", "x")},
		"one Prefix, two targets":                      {rt("/api/b/:id", "x"), rt("/api/b/:id/more", "y")},
		"a longer Prefix takes a param":                {rt("/api/x/:id", "a"), rt("/api/x/y/:z", "b")},
		"a relative path":                              {rt("api/a", "x")},
		"a string prefix takes a fixed path":           {rt("/@:handle", "a"), rt("/@admin", "b")},
		"a string prefix takes a Prefix":               {rt("/@:handle/*path", "a"), rt("/@x/:id", "b")},
		"a string prefix takes a longer one":           {rt("/@:handle", "a"), rt("/@@:other", "b")},
		"a string prefix takes another's param values": {rt("/api/@:handle", "a"), rt("/api/:id", "b")},
	} {
		if _, err := ingressRules(table); err == nil {
			t.Errorf("%s: no error", name)
		}
	}

	// Paths that YAML would misread are quoted.
	s, err := routesTemplate([]string{"x"}, []*routes.Route{rt("/api/a b,{c}", "x")})
	if err != nil || !strings.Contains(s, `path: "/api/a b,{c}"`) {
		t.Errorf("routesTemplate = %q, %v", s, err)
	}
}

// TestChartServicesAreTheTargets keeps the chart's per-target settings, the schema's list
// of allowed keys and the targets of libs/routes one list: every target gets a Deployment,
// and no Deployment runs a target the binary does not have.
// TestChartServicesAreTheTargets checks that the chart deploys the targets of the
// generated list whatever the values say of them: services only overrides settings of a
// target (with none at all, every target still gets its Deployment), and a services key
// that is no target fails the render.
func TestChartServicesAreTheTargets(t *testing.T) {
	for _, f := range []string{"values.yaml", "values-dev.yaml", "values-prod.yaml"} {
		if m, ok := readValues(t, f)["services"].(map[string]any); ok {
			for k := range m {
				if !slices.Contains(routes.Targets, k) {
					t.Errorf("%s: services.%s is not a target", f, k)
				}
			}
		}
	}
	r, err := renderErr(t, map[string]any{"services": nil})
	if err != nil {
		t.Fatal(err)
	}
	var deployed []string
	for _, d := range all[appsv1.Deployment](r) {
		deployed = append(deployed, d.Labels["app.kubernetes.io/component"])
	}
	if want := slices.Sorted(slices.Values(routes.Targets)); !slices.Equal(slices.Sorted(slices.Values(deployed)), want) {
		t.Errorf("with no services values, Deployments of %v, want one per target %v", deployed, want)
	}
	for _, typo := range []string{"note", "authh", "reaper"} {
		if _, err := renderErr(t, map[string]any{"services": map[string]any{typo: map[string]any{}}}); err == nil ||
			!strings.Contains(err.Error(), "services."+typo+" is not a target") {
			t.Errorf("services.%s: %v, want a failed render naming it", typo, err)
		}
	}
}

// podTemplates returns every pod of sharenote's image the install may run, by the name
// of its owner: not the bundled object store's, which run MinIO's images
// (objectstore_test.go checks those).
func podTemplates(r *rendered) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for _, d := range all[appsv1.Deployment](r) {
		out["Deployment/"+d.Name] = d.Spec.Template.Spec
	}
	for _, j := range all[batchv1.Job](r) {
		if !objectStorePod(j.Spec.Template.Labels) {
			out["Job/"+j.Name] = j.Spec.Template.Spec
		}
	}
	for _, cj := range all[batchv1.CronJob](r) {
		out["CronJob/"+cj.Name] = cj.Spec.JobTemplate.Spec.Template.Spec
	}
	return out
}

// TestEveryPodRunsTheOneImage proves the chart's one-image model: every container of every
// Deployment, Job and CronJob runs image.repository:image.tag with the image's own
// entrypoint, each Deployment `serve --target` its name, the Jobs `migrate` and `reap`.
func TestEveryPodRunsTheOneImage(t *testing.T) {
	cases := append(slices.Clone(renderCases),
		renderCase{name: "own registry and reaper args", file: "values.yaml", set: map[string]any{
			"image.repository": "registry.internal:5000/mirror/sharenote", "image.tag": "v1.2.3-rc.1",
			"reaper.args": []any{"--batch", "200"},
		}})
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			r := render(t, rc)
			image := oneImage(t, r)
			if !strings.HasPrefix(image, r.str("image.repository")+":") || strings.Contains(image, "sharenote-") {
				t.Errorf("the one image %q", image)
			}
			args := map[string][]string{}
			pods := podTemplates(r)
			for owner, pod := range pods {
				for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
					if c.Image != image {
						t.Errorf("%s/%s: image %q, want %q", owner, c.Name, c.Image, image)
					}
					if len(c.Command) != 0 {
						t.Errorf("%s/%s: command %v overrides the image's entrypoint", owner, c.Name, c.Command)
					}
					if c.ImagePullPolicy != corev1.PullPolicy(r.str("image.pullPolicy")) {
						t.Errorf("%s/%s: imagePullPolicy %q, want image.pullPolicy", owner, c.Name, c.ImagePullPolicy)
					}
					args[owner] = c.Args
				}
				var secrets []string
				for _, s := range pod.ImagePullSecrets {
					secrets = append(secrets, s.Name)
				}
				var want []string
				if l, ok := r.val("image.pullSecrets").([]any); ok {
					for _, s := range l {
						want = append(want, fmt.Sprint(s))
					}
				}
				if !slices.Equal(secrets, want) {
					t.Errorf("%s: imagePullSecrets %v, want image.pullSecrets %v", owner, secrets, want)
				}
			}
			for _, w := range r.workloads() {
				if got, want := args["Deployment/"+fullname(w)], serveArgs(w); !slices.Equal(got, want) {
					t.Errorf("Deployment %s: args %v, want %v", fullname(w), got, want)
				}
			}
			if got := args["Job/"+fullname("migrate")]; !slices.Equal(got, []string{"migrate"}) {
				t.Errorf("migration Job args %v, want [migrate]", got)
			}
			wantReap := []string{"reap"}
			if rc.set["reaper.args"] != nil {
				wantReap = append(wantReap, "--batch", "200")
			}
			if got := args["CronJob/"+fullname("reaper")]; !slices.Equal(got, wantReap) {
				t.Errorf("reaper CronJob args %v, want %v", got, wantReap)
			}
			if want := len(r.workloads()) + 2; len(pods) != want {
				t.Errorf("%d pod templates %v, want %d: the workloads, the migration and the reaper", len(pods), slices.Sorted(maps.Keys(pods)), want)
			}
		})
	}
}
