package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
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

func parseTiltfile(t *testing.T) *syntax.File {
	t.Helper()
	path := filepath.Join(repoRoot(t), "tilt", "Tiltfile")
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

// TestTiltfileBuildsEveryServiceAndPointsAtRealFiles reads the Tiltfile's tables and
// checks them against the repository: the five services of the routes table, packages
// that exist, the chart, its dev values and the Dockerfile it names.
func TestTiltfileBuildsEveryServiceAndPointsAtRealFiles(t *testing.T) {
	f := parseTiltfile(t)
	root := repoRoot(t)
	dicts := map[string]map[string]string{}
	strs := map[string]string{}
	for _, stmt := range f.Stmts {
		a, ok := stmt.(*syntax.AssignStmt)
		if !ok {
			continue
		}
		id, ok := a.LHS.(*syntax.Ident)
		if !ok {
			continue
		}
		switch rhs := a.RHS.(type) {
		case *syntax.DictExpr:
			m := map[string]string{}
			for _, e := range rhs.List {
				entry := e.(*syntax.DictEntry)
				k, kok := entry.Key.(*syntax.Literal)
				v, vok := entry.Value.(*syntax.Literal)
				if kok && vok {
					m[k.Value.(string)] = literalString(v)
				}
			}
			dicts[id.Name] = m
		case *syntax.Literal:
			strs[id.Name] = literalString(rhs)
		}
	}

	services := dicts["SERVICES"]
	var names []string
	for n := range services {
		names = append(names, n)
	}
	slices.Sort(names)
	want := slices.Clone(routes.Services)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("Tiltfile SERVICES %v, want the routes table's services %v", names, want)
	}
	pkgs := map[string]string{}
	for k, v := range services {
		pkgs[k] = v
	}
	for k, v := range dicts["JOB_BINARIES"] {
		pkgs[k] = v
	}
	for _, bin := range []string{"sharenote", "reaper"} {
		if pkgs[bin] == "" {
			t.Errorf("Tiltfile builds no %s binary (migration Job, reaper CronJob)", bin)
		}
	}
	for bin, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(root, pkg, "main.go")); err != nil {
			t.Errorf("binary %s: package %s has no main.go", bin, pkg)
		}
	}
	ports := dicts["PORTS"]
	if ports["notes"] != "8080" {
		t.Errorf("notes is port-forwarded to %q, want 8080", ports["notes"])
	}

	dev := render(t, renderCase{name: "dev", file: "values-dev.yaml"})
	if reg := strs["REGISTRY"]; reg != dev.str("image.registry") {
		t.Errorf("Tiltfile REGISTRY %q, values-dev image.registry %q: Tilt would not recognise its images", reg, dev.str("image.registry"))
	}
	if strs["NAMESPACE"] != devNamespace || strs["RELEASE"] != releaseName {
		t.Errorf("namespace %q release %q", strs["NAMESPACE"], strs["RELEASE"])
	}
	src, err := os.ReadFile(filepath.Join(root, "tilt", "Tiltfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"charts/sharenote", "charts/sharenote/values-dev.yaml", "k8s", "tilt/Dockerfile.dev"} {
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

func literalString(l *syntax.Literal) string {
	switch v := l.Value.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return l.Raw
	}
}
