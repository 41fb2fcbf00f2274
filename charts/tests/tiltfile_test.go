package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// tiltBuiltins are the Tiltfile API names the Tiltfile may use (docs.tilt.dev/api.html);
// resolving against them turns a misspelt call into a test failure instead of a broken
// `tilt up`.
var tiltBuiltins = []string{
	"allow_k8s_contexts", "config", "custom_build", "decode_json", "decode_yaml", "decode_yaml_stream",
	"default_registry", "docker_build", "docker_compose", "encode_json", "encode_yaml", "encode_yaml_stream",
	"fall_back_on", "helm", "include", "initial_sync", "k8s_context", "k8s_custom_deploy", "k8s_kind",
	"k8s_namespace", "k8s_resource", "k8s_yaml", "kustomize", "link", "load_dynamic", "local",
	"local_resource", "os", "port_forward", "read_file", "read_json", "read_yaml", "restart_container",
	"run", "secret_settings", "set_team", "sync", "update_settings", "v1alpha1", "watch_file",
	"watch_settings", "blob", "listdir", "probe", "http_get_action", "exec_action", "tcp_socket_action",
	"ci_settings", "enable_feature", "analytics_settings", "extension_repo", "extension",
	"TRIGGER_MODE_AUTO", "TRIGGER_MODE_MANUAL", "struct", "fail", "warn", "print",
}

// tiltFileOptions is Tilt's Starlark dialect: top-level if/for, reassigned globals, sets,
// while loops and recursion are allowed.
var tiltFileOptions = &syntax.FileOptions{
	Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true,
}

func tiltfilePath(t testing.TB) string { return filepath.Join(repoRoot(t), "tilt", "Tiltfile") }

func parseTiltfile(t *testing.T) *syntax.File {
	t.Helper()
	path := tiltfilePath(t)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tiltFileOptions.Parse(path, src, 0)
	if err != nil {
		t.Fatalf("Tiltfile: %v", err)
	}
	return f
}

func TestTiltfileParsesAndResolves(t *testing.T) {
	f := parseTiltfile(t)
	builtins := map[string]bool{}
	for _, n := range tiltBuiltins {
		builtins[n] = true
	}
	err := resolve.File(f, func(name string) bool { return builtins[name] }, func(name string) bool {
		_, ok := starlark.Universe[name]
		return ok
	})
	if err != nil {
		t.Fatalf("Tiltfile: %v", err)
	}
}

// tiltCall is one call of a Tilt builtin, its arguments by parameter name.
type tiltCall struct {
	fn   string
	args map[string]any
}

func (c tiltCall) str(name string) string { s, _ := c.args[name].(string); return s }

func (c tiltCall) strs(name string) []string {
	var out []string
	switch v := c.args[name].(type) {
	case string:
		out = []string{v}
	case []any:
		for _, e := range v {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// tiltParams names the positional parameters of the builtins whose calls are checked
// (docs.tilt.dev/api.html), so that a call reads the same with or without keywords.
var tiltParams = map[string][]string{
	"local_resource":     {"name", "cmd", "deps", "trigger_mode", "resource_deps", "ignore", "auto_init", "serve_cmd"},
	"k8s_resource":       {"workload", "new_name", "port_forwards", "extra_pod_selectors", "trigger_mode", "resource_deps", "objects"},
	"docker_build":       {"ref", "context", "build_args", "dockerfile", "dockerfile_contents", "live_update"},
	"custom_build":       {"ref", "command", "deps"},
	"port_forward":       {"local_port", "container_port", "name"},
	"sync":               {"local_path", "remote_path"},
	"run":                {"cmd", "trigger"},
	"link":               {"url", "name"},
	"helm":               {"paths", "name", "namespace", "values", "set"},
	"kustomize":          {"paths"},
	"k8s_yaml":           {"yaml"},
	"read_yaml":          {"paths", "default"},
	"read_file":          {"paths", "default"},
	"local":              {"command", "quiet"},
	"allow_k8s_contexts": {"contexts"},
	"analytics_settings": {"enable"},
}

// tiltRun is what one execution of the Tiltfile did, through stand-ins of Tilt's API that
// record every call: helm, kustomize and read_yaml do the real work on the repository's
// files (with helm's and kustomize's Go packages), so the YAML the Tiltfile deploys is
// the chart's and k8s/'s own.
type tiltRun struct {
	calls   []tiltCall
	globals starlark.StringDict
	root    string // the repository root
}

func (r *tiltRun) all(fn string) []tiltCall {
	var out []tiltCall
	for _, c := range r.calls {
		if c.fn == fn {
			out = append(out, c)
		}
	}
	return out
}

// runTiltfile executes tilt/Tiltfile as `tilt SUBCOMMAND -f tilt/Tiltfile -- ARGS` would
// (subcommand "up" or "ci"), with flags the values of its config.parse(). Its local()
// commands are not run: they print nothing, as `docker info` does where no Docker daemon
// answers.
func runTiltfile(t *testing.T, subcommand string, flags map[string]string) *tiltRun {
	t.Helper()
	run := &tiltRun{root: repoRoot(t)}
	tiltDir := filepath.Join(run.root, "tilt")
	var fns map[string]func(c tiltCall) (starlark.Value, error)

	builtin := func(name string) *starlark.Builtin {
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			c := tiltCall{fn: name, args: map[string]any{}}
			params := tiltParams[name]
			for i, a := range args {
				key := "_" + strconv.Itoa(i)
				if i < len(params) {
					key = params[i]
				}
				c.args[key] = fromStarlark(a)
			}
			for _, kv := range kwargs {
				c.args[string(kv[0].(starlark.String))] = fromStarlark(kv[1])
			}
			run.calls = append(run.calls, c)
			if fn, ok := fns[name]; ok {
				v, err := fn(c)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				return v, nil
			}
			// The call's arguments as a struct: what port_forward, sync and link return is
			// only ever passed to another call.
			d := starlark.StringDict{}
			for k, v := range c.args {
				d[k] = toStarlark(v)
			}
			return starlarkstruct.FromStringDict(starlark.String(name), d), nil
		})
	}
	// A path as Tilt resolves it: relative to the Tiltfile's directory.
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(tiltDir, p)
		}
		return filepath.Clean(p)
	}
	readYAML := func(c tiltCall) (starlark.Value, error) {
		raw, err := os.ReadFile(abs(c.str("paths")))
		if err != nil {
			return nil, err
		}
		var v any
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return toStarlark(v), nil
	}
	fns = map[string]func(c tiltCall) (starlark.Value, error){
		"local":     func(tiltCall) (starlark.Value, error) { return starlark.String(""), nil },
		"read_yaml": readYAML,
		"read_file": func(c tiltCall) (starlark.Value, error) {
			raw, err := os.ReadFile(abs(c.str("paths")))
			return starlark.String(raw), err
		},
		"kustomize": func(c tiltCall) (starlark.Value, error) {
			return starlark.String(kustomizeYAML(t, abs(c.str("paths")))), nil
		},
		"helm": func(c tiltCall) (starlark.Value, error) {
			if abs(c.str("paths")) != chartDir(t) {
				return nil, fmt.Errorf("chart %s, want %s", c.str("paths"), chartDir(t))
			}
			vals := map[string]any{}
			for _, f := range c.strs("values") {
				v, err := chartutil.ReadValuesFile(abs(f))
				if err != nil {
					return nil, err
				}
				vals = mergeValues(vals, v.AsMap())
			}
			for _, s := range c.strs("set") {
				if err := strvals.ParseInto(s, vals); err != nil {
					return nil, err
				}
			}
			stream, err := templateStream(t, vals, c.str("name"), c.str("namespace"))
			return starlark.String(stream), err
		},
		"decode_yaml_stream": func(c tiltCall) (starlark.Value, error) {
			var objs []any
			for _, doc := range splitYAML(c.str("_0")) {
				var v any
				if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
					return nil, err
				}
				if v != nil {
					objs = append(objs, v)
				}
			}
			return toStarlark(objs), nil
		},
		"encode_yaml_stream": func(c tiltCall) (starlark.Value, error) {
			objs, _ := c.args["_0"].([]any)
			var docs []string
			for _, o := range objs {
				b, err := sigsyaml.Marshal(o)
				if err != nil {
					return nil, err
				}
				docs = append(docs, string(b))
			}
			return starlark.String(strings.Join(docs, "---\n")), nil
		},
	}

	predeclared := starlark.StringDict{}
	for _, n := range tiltBuiltins {
		predeclared[n] = builtin(n)
	}
	osPath := &starlarkstruct.Module{Name: "path", Members: starlark.StringDict{
		"join": starlark.NewBuiltin("join", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			var parts []string
			for _, a := range args {
				parts = append(parts, string(a.(starlark.String)))
			}
			return starlark.String(filepath.Join(parts...)), nil
		}),
		"dirname": starlark.NewBuiltin("dirname", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(filepath.Dir(string(args[0].(starlark.String)))), nil
		}),
		"basename": starlark.NewBuiltin("basename", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(filepath.Base(string(args[0].(starlark.String)))), nil
		}),
		"exists": starlark.NewBuiltin("exists", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			_, err := os.Stat(abs(string(args[0].(starlark.String))))
			return starlark.Bool(err == nil), nil
		}),
	}}
	predeclared["os"] = &starlarkstruct.Module{Name: "os", Members: starlark.StringDict{"path": osPath}}
	cfg := starlark.NewDict(len(flags))
	for k, v := range flags {
		_ = cfg.SetKey(starlark.String(k), starlark.String(v))
	}
	predeclared["config"] = &starlarkstruct.Module{Name: "config", Members: starlark.StringDict{
		"main_dir":           starlark.String(tiltDir),
		"main_path":          starlark.String(tiltfilePath(t)),
		"tilt_subcommand":    starlark.String(subcommand),
		"define_string":      builtin("config.define_string"),
		"define_bool":        builtin("config.define_bool"),
		"define_string_list": builtin("config.define_string_list"),
		"parse": starlark.NewBuiltin("parse", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return cfg, nil
		}),
	}}

	thread := &starlark.Thread{
		Name:  "Tiltfile",
		Print: func(_ *starlark.Thread, msg string) { t.Logf("Tiltfile: %s", msg) },
		Load: func(_ *starlark.Thread, module string) (starlark.StringDict, error) {
			// Tilt clones an ext:// extension from GitHub when it is loaded: the Tiltfile
			// may depend on nothing fetched at run time.
			return nil, fmt.Errorf("load(%q): the Tiltfile may load nothing (extensions are downloaded)", module)
		},
	}
	src, err := os.ReadFile(tiltfilePath(t))
	if err != nil {
		t.Fatal(err)
	}
	globals, err := starlark.ExecFileOptions(tiltFileOptions, thread, tiltfilePath(t), src, predeclared)
	if err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatalf("Tiltfile: %s", ee.Backtrace())
		}
		t.Fatalf("Tiltfile: %v", err)
	}
	run.globals = globals
	return run
}

// imageRepository is an image reference without its tag (what Tilt matches its builds by).
func imageRepository(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// mergeValues merges src over dst key by key, as helm merges its -f files.
func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if m, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(d, m)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// splitYAML splits a YAML stream into its documents.
func splitYAML(stream string) []string {
	var docs []string
	for _, d := range strings.Split("\n"+stream, "\n---") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

// toStarlark converts decoded YAML (maps, lists, scalars) into Starlark values.
func toStarlark(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case starlark.Value:
		return v
	case string:
		return starlark.String(v)
	case bool:
		return starlark.Bool(v)
	case int:
		return starlark.MakeInt(v)
	case int64:
		return starlark.MakeInt64(v)
	case float64:
		return starlark.Float(v)
	case []any:
		l := make([]starlark.Value, len(v))
		for i, e := range v {
			l[i] = toStarlark(e)
		}
		return starlark.NewList(l)
	case map[string]any:
		d := starlark.NewDict(len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			_ = d.SetKey(starlark.String(k), toStarlark(v[k]))
		}
		return d
	default:
		return starlark.String(fmt.Sprint(v))
	}
}

// fromStarlark converts a Starlark value into plain Go values (structs become maps).
func fromStarlark(v starlark.Value) any {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil
	case starlark.String:
		return string(v)
	case starlark.Bool:
		return bool(v)
	case starlark.Int:
		n, _ := v.Int64()
		return n
	case starlark.Float:
		return float64(v)
	case *starlark.List:
		out := make([]any, v.Len())
		for i := range v.Len() {
			out[i] = fromStarlark(v.Index(i))
		}
		return out
	case starlark.Tuple:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fromStarlark(e)
		}
		return out
	case *starlark.Dict:
		out := map[string]any{}
		for _, kv := range v.Items() {
			out[fmt.Sprint(fromStarlark(kv[0]))] = fromStarlark(kv[1])
		}
		return out
	case *starlarkstruct.Struct:
		out := map[string]any{}
		for _, n := range v.AttrNames() {
			a, _ := v.Attr(n)
			out[n] = fromStarlark(a)
		}
		return out
	default:
		return v.String()
	}
}

// TestTiltfileRunsTheOneImageForEveryTarget executes the Tiltfile under `tilt up` with and
// without its --ingress flag, with either builder, and under `tilt ci`, and checks what it
// would do against the repository: one binary compiled from the package services/Dockerfile
// builds, one image (values-dev.yaml's) holding it, built by Docker or podman, which every
// pod of the dev release runs and whose process live update restarts; one resource per
// target of libs/routes with distinct port forwards (none under `tilt ci`); and resources
// and dependencies that name real objects.
func TestTiltfileRunsTheOneImageForEveryTarget(t *testing.T) {
	for name, tc := range map[string]struct {
		subcommand string
		flags      map[string]string
		builder    string // what builds the image
	}{
		// No --builder, and local('docker info') prints nothing: podman.
		"up":         {"up", map[string]string{}, "podman"},
		"up docker":  {"up", map[string]string{"builder": "docker"}, "docker"},
		"up ingress": {"up", map[string]string{"builder": "docker", "ingress": "ingress-nginx/ingress-nginx-controller"}, "docker"},
		// make k8s-e2e's Tilt stage.
		"ci podman": {"ci", map[string]string{"builder": "podman"}, "podman"},
	} {
		t.Run(name, func(t *testing.T) {
			run := runTiltfile(t, tc.subcommand, tc.flags)
			root := run.root
			dev := render(t, renderCase{name: "dev", file: "values-dev.yaml"})

			// The targets, read at run time, are libs/routes'.
			var targets []string
			if l, ok := fromStarlark(run.globals["TARGETS"]).([]any); ok {
				for _, e := range l {
					targets = append(targets, fmt.Sprint(e))
				}
			}
			if want := slices.Sorted(slices.Values(routes.Targets)); !slices.Equal(targets, want) {
				t.Errorf("Tiltfile TARGETS %v, want routes.Targets %v", targets, want)
			}

			// One binary: the production image's package, for linux, without cgo.
			var compiles []tiltCall
			for _, c := range run.all("local_resource") {
				if strings.Contains(c.str("cmd"), "go build") {
					compiles = append(compiles, c)
				}
			}
			if len(compiles) != 1 {
				t.Fatalf("%d local_resources run `go build`, want 1 (the one binary)", len(compiles))
			}
			compile := compiles[0]
			cmd := strings.Fields(compile.str("cmd"))
			for _, want := range []string{"CGO_ENABLED=0", "GOOS=linux"} {
				if !slices.Contains(cmd, want) {
					t.Errorf("compile %q lacks %s", compile.str("cmd"), want)
				}
			}
			pkg := cmd[len(cmd)-1]
			if _, err := os.Stat(filepath.Join(root, pkg, "main.go")); err != nil {
				t.Errorf("compile package %s: %v", pkg, err)
			}
			if df, err := os.ReadFile(filepath.Join(root, "services", "Dockerfile")); err != nil || !strings.Contains(string(df), pkg) {
				t.Errorf("services/Dockerfile does not build %s, the package Tilt compiles (%v)", pkg, err)
			}
			i := slices.Index(cmd, "-o")
			if i < 0 || i+1 >= len(cmd) {
				t.Fatalf("compile %q names no output (-o)", compile.str("cmd"))
			}
			binary := filepath.Join(root, cmd[i+1])
			if !strings.HasPrefix(cmd[i+1], "tilt/.build/") {
				t.Errorf("the binary goes to %s, want tilt/.build/ (ignored by tilt/.gitignore)", cmd[i+1])
			}

			// One image, values-dev.yaml's, around that binary, restarted by live update.
			img := checkTiltImage(t, run, tc.builder, binary, dev.str("image.repository"))

			// What Tilt deploys: k8s/ and the chart.
			var objects []object
			for _, c := range run.all("k8s_yaml") {
				for _, doc := range splitYAML(c.str("yaml")) {
					o, err := decodeStrict(doc)
					if err != nil {
						t.Fatalf("k8s_yaml: %v", err)
					}
					objects = append(objects, o)
				}
			}
			workloads := map[string]object{}
			others := map[string]bool{}
			for _, o := range objects {
				// The chart's `helm test` Pod probes the targets once, after an install; Tilt
				// would apply it with everything else, before the targets are up.
				if o.Meta.Annotations["helm.sh/hook"] == "test" {
					t.Errorf("Tilt deploys %s %s, a helm test hook", o.Kind, o.Name)
				}
				switch o.Typed.(type) {
				case *appsv1.Deployment, *appsv1.StatefulSet, *batchv1.Job, *batchv1.CronJob:
					workloads[o.Name] = o
				default:
					others[o.Name+":"+strings.ToLower(o.Kind)] = true
				}
			}
			chartPods := 0
			for _, o := range objects {
				// The chart's objects (k8s/'s Postgres and Redis are part of sharenote too),
				// but for the bundled MinIO's, which run MinIO's images.
				if o.Meta.Labels["app.kubernetes.io/name"] != "sharenote" || o.Meta.Labels["app.kubernetes.io/managed-by"] != "Helm" ||
					objectStorePod(o.Meta.Labels) {
					continue
				}
				var pod *corev1.PodSpec
				switch w := o.Typed.(type) {
				case *appsv1.Deployment:
					pod = &w.Spec.Template.Spec
					for _, c := range pod.Containers {
						if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || *c.SecurityContext.ReadOnlyRootFilesystem {
							t.Errorf("Deployment %s/%s: the root filesystem stays read-only; live update cannot write the binary", o.Name, c.Name)
						}
					}
				case *batchv1.Job:
					pod = &w.Spec.Template.Spec
				case *batchv1.CronJob:
					pod = &w.Spec.JobTemplate.Spec.Template.Spec
				default:
					continue
				}
				chartPods++
				for _, c := range pod.Containers {
					if repo := imageRepository(c.Image); repo != img.str("ref") {
						t.Errorf("%s %s/%s runs %s, not the image Tilt builds (%s)", o.Kind, o.Name, c.Name, c.Image, img.str("ref"))
					}
				}
			}
			if want := len(routes.Targets) + 2; chartPods != want {
				t.Errorf("the dev release has %d pod templates, want %d (the targets, the migration, the reaper)", chartPods, want)
			}

			// Resources: every workload has one, and every name they use exists.
			resources := map[string]tiltCall{}
			for _, c := range run.all("k8s_resource") {
				name := c.str("workload")
				if name != "" {
					if _, ok := workloads[name]; !ok {
						t.Errorf("k8s_resource(%q): no such workload in k8s_yaml", name)
					}
				}
				if n := c.str("new_name"); n != "" {
					name = n
				}
				resources[name] = c
				for _, ref := range c.strs("objects") {
					if !others[ref] {
						t.Errorf("k8s_resource(%q): object %s is not deployed", name, ref)
					}
					// Tilt applies the objects of no resource (its "uncategorized") before
					// any resource's: a Namespace must stay there, or resources are applied
					// into a namespace that does not exist yet.
					if strings.HasSuffix(ref, ":namespace") {
						t.Errorf("k8s_resource(%q) takes the Namespace %s: leave it uncategorized", name, ref)
					}
				}
			}
			for name := range workloads {
				if _, ok := resources[name]; !ok {
					t.Errorf("workload %s has no k8s_resource (no labels, no dependencies)", name)
				}
			}
			locals := map[string]bool{}
			for _, c := range run.all("local_resource") {
				locals[c.str("name")] = true
			}
			for _, c := range append(run.all("k8s_resource"), run.all("local_resource")...) {
				for _, dep := range c.strs("resource_deps") {
					if _, ok := resources[dep]; !ok && !locals[dep] {
						t.Errorf("%s(%q): resource_deps %q is no resource", c.fn, c.str("workload")+c.str("new_name")+c.str("name"), dep)
					}
				}
			}

			// Under `tilt ci` nothing is forwarded: nothing would use it, and under kwok
			// nothing answers.
			if tc.subcommand == "ci" {
				for name, c := range resources {
					if forwards, _ := c.args["port_forwards"].([]any); len(forwards) > 0 {
						t.Errorf("tilt ci: %s forwards ports %v", name, forwards)
					}
				}
			}
			// One resource per target, on distinct local ports; notes on publicURL's 8080.
			ports := map[int64]string{}
			for name, c := range resources {
				forwards, _ := c.args["port_forwards"].([]any)
				for _, f := range forwards {
					var local int64
					switch f := f.(type) {
					case map[string]any:
						local, _ = f["local_port"].(int64)
					case string:
						local, _ = strconv.ParseInt(strings.Split(f, ":")[0], 10, 64)
					}
					if other, ok := ports[local]; ok {
						t.Errorf("local port %d forwarded by %s and %s", local, other, name)
					}
					ports[local] = name
				}
			}
			for _, target := range routes.Targets {
				name := releaseName + "-" + target
				c, ok := resources[name]
				if !ok {
					t.Errorf("no k8s_resource for target %s (%s)", target, name)
					continue
				}
				if !slices.Contains(c.strs("resource_deps"), compile.str("name")) {
					t.Errorf("%s does not wait for %s", name, compile.str("name"))
				}
				if tc.subcommand == "ci" {
					continue
				}
				var api map[string]any
				for _, f := range c.args["port_forwards"].([]any) {
					if m, ok := f.(map[string]any); ok && m["name"] == "api" {
						api = m
					}
				}
				if api == nil || api["container_port"] != int64(httpPort) {
					t.Errorf("%s: api port forward %v, want one to container port %d", name, api, httpPort)
				}
				if target == routes.Notes && (api == nil || api["local_port"] != int64(8080)) {
					t.Errorf("notes is port-forwarded from %v, want 8080 (values-dev.yaml publicURL)", api)
				}
			}
			for _, job := range []string{releaseName + "-migrate", releaseName + "-reaper"} {
				if c, ok := resources[job]; !ok || !slices.Contains(c.strs("resource_deps"), compile.str("name")) {
					t.Errorf("%s does not wait for %s", job, compile.str("name"))
				}
			}
			// The bundled MinIO of values-dev.yaml: the migration (which copies older image
			// bytes into it) waits for it, the targets for its bucket.
			if dev.str("objectStore.type") != "bundled" {
				t.Errorf("values-dev.yaml's object store is %q, want the bundled MinIO", dev.str("objectStore.type"))
			}
			minio, bucket := fullname(minioComponent), fullname(minioBucketComponent)
			for _, name := range []string{minio, bucket} {
				if _, ok := workloads[name]; !ok {
					t.Errorf("the dev release has no %s", name)
				}
			}
			if c := resources[bucket]; !slices.Contains(c.strs("resource_deps"), minio) {
				t.Errorf("%s does not wait for %s", bucket, minio)
			}
			if c := resources[releaseName+"-migrate"]; !slices.Contains(c.strs("resource_deps"), minio) {
				t.Errorf("the migration does not wait for %s", minio)
			}
			for _, target := range routes.Targets {
				if c := resources[releaseName+"-"+target]; !slices.Contains(c.strs("resource_deps"), bucket) {
					t.Errorf("%s does not wait for %s", target, bucket)
				}
			}

			if _, ok := tc.flags["ingress"]; (ok && tc.subcommand == "up") != locals["ingress-forward"] {
				t.Errorf("%s --ingress=%v but ingress-forward defined: %v", tc.subcommand, ok, locals["ingress-forward"])
			}

			// The compile watches the module's files.
			deps := compile.strs("deps")
			for _, want := range []string{"go.mod", "go.sum", "libs", "services"} {
				if !slices.Contains(deps, filepath.Join(root, want)) {
					t.Errorf("compile deps %v lack %s", deps, want)
				}
			}
			for _, d := range deps {
				if _, err := os.Stat(d); err != nil {
					t.Errorf("compile dep %s: %v", d, err)
				}
			}
		})
	}
}

func TestTiltfileConstantsAndFiles(t *testing.T) {
	run := runTiltfile(t, "up", nil)
	root := repoRoot(t)
	if ns, rel := fromStarlark(run.globals["NAMESPACE"]), fromStarlark(run.globals["RELEASE"]); ns != devNamespace || rel != releaseName {
		t.Errorf("namespace %q release %q, want %q %q", ns, rel, devNamespace, releaseName)
	}
	helms := run.all("helm")
	if len(helms) != 1 || helms[0].str("namespace") != devNamespace || helms[0].str("name") != releaseName ||
		!slices.Equal(helms[0].strs("values"), []string{filepath.Join(chartDir(t), "values-dev.yaml")}) {
		t.Errorf("helm calls %+v, want the chart with values-dev.yaml as %s in %s", helms, releaseName, devNamespace)
	}
	src, err := os.ReadFile(tiltfilePath(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"charts/sharenote", "charts/sharenote/values-dev.yaml", "k8s", "services/Dockerfile"} {
		if _, err := os.Stat(filepath.Join(root, ref)); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
		if !strings.Contains(string(src), filepath.Base(ref)) {
			t.Errorf("the Tiltfile does not use %s", ref)
		}
	}
	gi, err := os.ReadFile(filepath.Join(root, "tilt", ".gitignore"))
	if err != nil || !strings.Contains(string(gi), ".build/") {
		t.Errorf("tilt/.gitignore must ignore .build/ (%v)", err)
	}
}

// tiltE2EContext is the kubeconfig context of make k8s-e2e's throw-away cluster, which the
// Tiltfile allows Tilt to deploy to (tilt_e2e_test.go).
const tiltE2EContext = "sharenote-k8se2e"

// checkTiltImage checks the Tiltfile's one image build and returns it: built by the
// builder expected (docker_build, or custom_build running podman-build.sh), named as
// values-dev.yaml's image (wantRef), from the stage dev of services/Dockerfile (the one
// Dockerfile) in the context tilt/, into which tilt/.dockerignore lets exactly what that
// stage copies; the image runs the binary under dev-entrypoint.sh, and live update syncs
// the binary there, then creates the marker on which dev-entrypoint.sh restarts it.
func checkTiltImage(t *testing.T, run *tiltRun, builder, binary, wantRef string) tiltCall {
	t.Helper()
	tiltDir := filepath.Join(run.root, "tilt")
	dockerfilePath := filepath.Join(run.root, "services", "Dockerfile")
	dockerBuilds, customBuilds := run.all("docker_build"), run.all("custom_build")
	if len(dockerBuilds)+len(customBuilds) != 1 {
		t.Fatalf("%d docker_build and %d custom_build, want one image build: every pod runs the one image", len(dockerBuilds), len(customBuilds))
	}
	var img tiltCall
	switch builder {
	case "docker":
		if len(dockerBuilds) != 1 {
			t.Fatalf("custom_build %v, want docker_build", customBuilds[0].args)
		}
		img = dockerBuilds[0]
		if filepath.Clean(img.str("context")) != tiltDir {
			t.Errorf("build context %s, want %s", img.str("context"), tiltDir)
		}
		if img.str("dockerfile") != dockerfilePath || img.str("target") != devStage {
			t.Errorf("dockerfile %s, target %q, want services/Dockerfile's stage %s", img.str("dockerfile"), img.str("target"), devStage)
		}
	case "podman":
		if len(customBuilds) != 1 {
			t.Fatalf("docker_build %v, want custom_build with podman", dockerBuilds[0].args)
		}
		img = customBuilds[0]
		script := filepath.Join(tiltDir, "podman-build.sh")
		if cmd := img.strs("command"); !slices.Equal(cmd, []string{script}) {
			t.Errorf("custom_build command %v, want %s", cmd, script)
		}
		if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not an executable file (%v)", script, err)
		}
		if src, err := os.ReadFile(script); err != nil || !strings.Contains(string(src), "-f ../services/Dockerfile --target "+devStage+" ") {
			t.Errorf("%s does not build services/Dockerfile's stage %s (%v)", script, devStage, err)
		}
		// podman's image is not in Docker, and under kwok nothing pulls it: Tilt must
		// neither look for it in Docker nor push it.
		if img.args["skips_local_docker"] != true {
			t.Errorf("custom_build skips_local_docker=%v, want true", img.args["skips_local_docker"])
		}
		deps := img.strs("deps")
		for _, want := range []string{binary, filepath.Join(tiltDir, "dev-entrypoint.sh"), dockerfilePath} {
			if !slices.Contains(deps, want) {
				t.Errorf("custom_build deps %v lack %s", deps, want)
			}
		}
	default:
		t.Fatalf("builder %q", builder)
	}
	if img.str("ref") != wantRef {
		t.Errorf("Tilt builds %q, values-dev.yaml runs %q: Tilt would not recognise its image", img.str("ref"), wantRef)
	}

	// The stage copies the binary and the entrypoint into /app, and runs the binary under
	// the entrypoint with the busybox shell of its base.
	dockerfile, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	stage := dockerfileStage(t, string(dockerfile), devStage)
	relBinary, err := filepath.Rel(tiltDir, binary)
	if err != nil {
		t.Fatal(err)
	}
	appBinary := "/app/" + filepath.Base(binary)
	copies := map[string]string{}
	var entrypoint []string
	for _, line := range strings.Split(stage, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "COPY":
			copies[f[len(f)-2]] = f[len(f)-1]
		case len(f) >= 2 && f[0] == "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "ENTRYPOINT")), &entrypoint); err != nil {
				t.Fatalf("stage %s ENTRYPOINT: %v", devStage, err)
			}
		}
	}
	want := map[string]string{relBinary: appBinary, "dev-entrypoint.sh": "/app/dev-entrypoint.sh"}
	if !maps.Equal(copies, want) {
		t.Errorf("stage %s copies %v, want %v", devStage, copies, want)
	}
	if !slices.Equal(entrypoint, []string{"/busybox/sh", "/app/dev-entrypoint.sh", appBinary}) {
		t.Errorf("ENTRYPOINT %q, want the binary under dev-entrypoint.sh (the chart's args follow)", entrypoint)
	}
	// What .dockerignore lets in (Docker and podman read it) is what the stage copies,
	// and docker_build's only says the same.
	ignore, err := os.ReadFile(filepath.Join(tiltDir, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line == "*" {
			in = nil
			continue
		}
		if !strings.HasPrefix(line, "!") {
			t.Errorf(".dockerignore: %q after *: want only exceptions", line)
			continue
		}
		in = append(in, strings.TrimPrefix(line, "!"))
	}
	if got, want := slices.Sorted(slices.Values(in)), slices.Sorted(maps.Keys(copies)); !slices.Equal(got, want) {
		t.Errorf(".dockerignore lets in %v, stage %s copies %v", got, devStage, want)
	}
	if builder == "docker" {
		if only := slices.Sorted(slices.Values(img.strs("only"))); !slices.Equal(only, slices.Sorted(maps.Keys(copies))) {
			t.Errorf("docker_build only %v, want %v", only, slices.Sorted(maps.Keys(copies)))
		}
	}

	// Live update: the binary to where the image has it, then the marker dev-entrypoint.sh
	// restarts on.
	script, err := os.ReadFile(filepath.Join(tiltDir, "dev-entrypoint.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^marker=\$\{RESTART_MARKER:-(/[^}]+)\}$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("dev-entrypoint.sh sets no default marker (marker=${RESTART_MARKER:-/…})")
	}
	marker := string(m[1])
	steps, _ := img.args["live_update"].([]any)
	var got []string
	for _, step := range steps {
		s, _ := step.(map[string]any)
		switch {
		case s["local_path"] != nil:
			got = append(got, fmt.Sprintf("sync %v %v", s["local_path"], s["remote_path"]))
		case s["cmd"] != nil:
			got = append(got, fmt.Sprintf("run %v", s["cmd"]))
		default:
			got = append(got, fmt.Sprint(s))
		}
	}
	if wantSteps := []string{"sync " + binary + " " + appBinary, fmt.Sprintf("run %v", []any{"/busybox/touch", marker})}; !slices.Equal(got, wantSteps) {
		t.Errorf("live_update %q, want %q", got, wantSteps)
	}
	return img
}

// devStage is the stage of services/Dockerfile that Tilt builds.
const devStage = "dev"

// dockerfileStage returns the lines of the Dockerfile's stage name, from its FROM to the
// next FROM, and fails unless there is one such stage before the last: a build without
// --target (make images, compose) makes the production image, and skips this stage.
func dockerfileStage(t *testing.T, dockerfile, name string) string {
	t.Helper()
	var stages [][]string
	var names []string
	for _, line := range strings.Split(dockerfile, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.EqualFold(f[0], "FROM") {
			stage := ""
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				stage = f[3]
			}
			names = append(names, stage)
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], line)
		}
	}
	i := slices.Index(names, name)
	if i < 0 || slices.Index(names[i+1:], name) >= 0 {
		t.Fatalf("services/Dockerfile has stages %q, want one named %s", names, name)
	}
	if i == len(names)-1 {
		t.Fatalf("services/Dockerfile's last stage is %s: a build without --target would make the dev image", name)
	}
	return strings.Join(stages[i], "\n")
}

// TestTiltfileIsSelfContained: no usage statistics, no deployment to any cluster but local
// ones and make k8s-e2e's, and nothing fetched at run time (runTiltfile refuses load()).
func TestTiltfileIsSelfContained(t *testing.T) {
	run := runTiltfile(t, "ci", map[string]string{"builder": "podman"})
	if a := run.all("analytics_settings"); len(a) != 1 || a[0].args["enable"] != false {
		t.Errorf("analytics_settings calls %v, want analytics_settings(False)", a)
	}
	var allowed []string
	for _, c := range run.all("allow_k8s_contexts") {
		allowed = append(allowed, c.strs("contexts")...)
	}
	if !slices.Equal(allowed, []string{tiltE2EContext}) {
		t.Errorf("allow_k8s_contexts %v, want just %s (Tilt allows the local clusters itself)", allowed, tiltE2EContext)
	}
}

// TestDevEntrypointRestartsItsChild runs tilt/dev-entrypoint.sh with busybox's shell, as the
// dev image does: the marker restarts the child in place, SIGTERM ends child and script,
// and a child that exits by itself ends the script with its status.
func TestDevEntrypointRestartsItsChild(t *testing.T) {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on PATH (apt-get install busybox-static), the dev image's shell")
	}
	script := filepath.Join(repoRoot(t), "tilt", "dev-entrypoint.sh")
	dir := t.TempDir()
	marker, pidFile := filepath.Join(dir, "restart"), filepath.Join(dir, "pids")
	env := append(os.Environ(), "RESTART_MARKER="+marker, "RESTART_POLL=0.05", "PIDS="+pidFile, "BUSYBOX="+busybox)

	cmd := exec.Command(busybox, "sh", script, busybox, "sh", "-c", `echo $$ >>"$PIDS"; exec "$BUSYBOX" sleep 60`)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
	}()
	pids := func(n int) []int {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			b, _ := os.ReadFile(pidFile)
			if f := strings.Fields(string(b)); len(f) >= n {
				var out []int
				for _, s := range f {
					p, _ := strconv.Atoi(s)
					out = append(out, p)
				}
				return out
			}
		}
		b, _ := os.ReadFile(pidFile)
		t.Fatalf("%d starts of the child, want %d; output:\n%s", len(strings.Fields(string(b))), n, out.String())
		return nil
	}
	gone := func(pid int) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				return true
			}
		}
		return false
	}
	first := pids(1)[0]
	for n := 2; n <= 3; n++ {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		all := pids(n)
		if prev := all[n-2]; !gone(prev) {
			t.Errorf("restart %d: the previous child %d still runs", n-1, prev)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("restart %d: the marker is still there (%v)", n-1, err)
		}
	}
	last := pids(3)[2]
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("after SIGTERM the script ended with %v, want the child's status 143", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the script did not end on SIGTERM; output:\n%s", out.String())
	}
	if !gone(last) {
		t.Errorf("the child %d outlived the script", last)
	}
	if !strings.Contains(out.String(), "dev-entrypoint: live update: restarting") {
		t.Errorf("no restart message; output:\n%s", out.String())
	}
	t.Logf("child %d restarted twice on the marker, ended by SIGTERM with the script", first)

	exit := exec.Command(busybox, "sh", script, busybox, "sh", "-c", "exit 3")
	exit.Env = env
	if err := exit.Run(); err == nil || exit.ProcessState.ExitCode() != 3 {
		t.Errorf("a child exiting 3 ends the script with %v, want exit status 3", err)
	}
}
