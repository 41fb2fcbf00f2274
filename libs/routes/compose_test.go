package routes_test

import (
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/routes"
)

var update = flag.Bool("update", false, "rewrite the nginx configuration inlined in docker-compose.yaml")

// repoRoot is the repository root, two levels above this package.
const repoRoot = "../.."

type composeFile struct {
	Services map[string]composeService
	Networks map[string]struct {
		IPAM struct {
			Config []struct{ Subnet string }
		}
	}
}

type composeService struct {
	Image string
	Build struct {
		Context    string
		Dockerfile string
		Args       map[string]string
	}
	Command     []string
	Environment map[string]string
	DependsOn   yaml.Node `yaml:"depends_on"`
	Profiles    []string
	ReadOnly    bool `yaml:"read_only"`
	User        string
	CapDrop     []string `yaml:"cap_drop"`
	Ports       []string
	Networks    map[string]struct {
		IPv4Address string `yaml:"ipv4_address"`
	}
}

// dependsOn returns the services s waits for, from either form of depends_on, with the
// condition of each ("service_started" for the list form).
func (s composeService) dependsOn(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch s.DependsOn.Kind {
	case 0:
	case yaml.SequenceNode:
		var names []string
		if err := s.DependsOn.Decode(&names); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out[n] = "service_started"
		}
	default:
		var m map[string]struct{ Condition string }
		if err := s.DependsOn.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for n, c := range m {
			out[n] = c.Condition
		}
	}
	return out
}

func loadCompose(t *testing.T) (composeFile, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	return c, raw
}

// composeNginx is the ingress configuration the compose stack must run: the services are
// reached by their compose names on the images' port.
func composeNginx() string {
	return routes.NginxServer("8080", func(s string) string { return s + ":8080" })
}

func TestComposeIngressIsTheRoutesTable(t *testing.T) {
	if *update {
		rewriteComposeNginx(t)
	}
	c, _ := loadCompose(t)
	nginx, ok := c.Services["nginx"]
	if !ok {
		t.Fatal("docker-compose.yaml has no nginx service")
	}
	// Compose reads `$$` as a literal `$`, which nginx's variables need.
	got := strings.ReplaceAll(nginx.Environment["NGINX_CONF"], "$$", "$")
	if want := composeNginx(); got != want {
		t.Fatalf("the nginx configuration in docker-compose.yaml is not the routes table's; "+
			"run `go test ./routes -run Compose -update` in libs/.\n--- got\n%s\n--- want\n%s", got, want)
	}
	if !slices.Contains(nginx.Ports, "8080:8080") {
		t.Errorf("nginx ports = %v, want 8080:8080 (the API on http://localhost:8080)", nginx.Ports)
	}
	deps := nginx.dependsOn(t)
	for _, s := range routes.Services {
		if _, ok := deps[s]; !ok {
			t.Errorf("nginx does not depend on %s (it resolves the upstreams at start)", s)
		}
	}
}

func TestComposeRunsEveryServiceFromTheOneDockerfile(t *testing.T) {
	c, _ := loadCompose(t)
	nginxIP := c.Services["nginx"].Networks["default"].IPv4Address
	if nginxIP == "" {
		t.Fatal("nginx has no fixed address for SHARE_TRUSTED_PROXIES")
	}
	built := append([]string{"migrate", "reaper"}, routes.Services...)
	bins := makefileBinaries(t)
	for _, name := range built {
		t.Run(name, func(t *testing.T) {
			s, ok := c.Services[name]
			if !ok {
				t.Fatalf("docker-compose.yaml has no %s service", name)
			}
			bin := s.Build.Args["BIN"]
			if s.Build.Context != "." || s.Build.Dockerfile != "services/Dockerfile" {
				t.Errorf("build = %s with %s, want context . and services/Dockerfile", s.Build.Context, s.Build.Dockerfile)
			}
			if s.Image != "sharenote-"+bin {
				t.Errorf("image %q, want sharenote-%s", s.Image, bin)
			}
			if pkg, ok := bins[bin]; !ok || pkg != s.Build.Args["CMD"] {
				t.Errorf("build args CMD=%s BIN=%s are not the Makefile's %s=%s", s.Build.Args["CMD"], bin, bin, pkg)
			}
			if !s.ReadOnly || s.User != "65532:65532" || !slices.Contains(s.CapDrop, "ALL") {
				t.Errorf("read_only=%v user=%q cap_drop=%v, want a read-only root, 65532:65532 and no capabilities", s.ReadOnly, s.User, s.CapDrop)
			}
			env := s.Environment
			if !strings.HasPrefix(env["SHARE_DATABASE_URL"], "postgres://") || !strings.HasPrefix(env["SHARE_REDIS_URL"], "redis://") {
				t.Errorf("environment does not point at the compose Postgres and Redis: %v", env)
			}
			if env["SHARE_TRUSTED_PROXIES"] != nginxIP {
				t.Errorf("SHARE_TRUSTED_PROXIES = %q, want nginx's address %s", env["SHARE_TRUSTED_PROXIES"], nginxIP)
			}
		})
	}
	if got := c.Services["migrate"].Command; !slices.Equal(got, []string{"migrate"}) || c.Services["migrate"].Build.Args["BIN"] != "sharenote" {
		t.Errorf("migrate runs %v of %s, want `sharenote migrate`", got, c.Services["migrate"].Build.Args["BIN"])
	}
	if c.Services["migrate"].dependsOn(t)["postgres"] != "service_healthy" {
		t.Error("migrate does not wait for a healthy postgres")
	}
	for _, s := range append([]string{"reaper"}, routes.Services...) {
		if c.Services[s].dependsOn(t)["migrate"] != "service_completed_successfully" {
			t.Errorf("%s does not wait for the migration to complete", s)
		}
	}
	if iv := c.Services["images"].Environment["SHARE_REAP_INTERVAL"]; iv == "" || iv == "0" {
		t.Errorf("images SHARE_REAP_INTERVAL = %q: nothing reaps on a schedule", iv)
	}
	if !slices.Contains(c.Services["reaper"].Profiles, "tools") {
		t.Error("the one-shot reaper would run (and exit) on every `compose up`: give it a profile")
	}
	subnets := c.Networks["default"].IPAM.Config
	if len(subnets) != 1 {
		t.Fatalf("the default network has subnets %v, want one that holds nginx's address", subnets)
	}
	prefix, err := netip.ParsePrefix(subnets[0].Subnet)
	if addr, err2 := netip.ParseAddr(nginxIP); err != nil || err2 != nil || !prefix.Contains(addr) {
		t.Errorf("nginx's address %s is not in the default network's subnet %s", nginxIP, subnets[0].Subnet)
	}
}

// makefileBinaries reads BINARIES (name=package) from the Makefile, the list `make build`
// and `make images` build.
func makefileBinaries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([a-z-]+)=(\./services/\S+)`).FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = m[2]
	}
	if len(out) == 0 {
		t.Fatal("no BINARIES in the Makefile")
	}
	return out
}

func TestDockerfileCopiesEveryWorkspaceModule(t *testing.T) {
	work, err := os.ReadFile(filepath.Join(repoRoot, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(repoRoot, "services", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// The images build the modules of libs/ and services/; the workspace's other modules
	// (tests with heavy dependencies) stay out of them.
	mods := regexp.MustCompile(`(?m)^\s*\./((?:libs|services/[^/\s]+))\s*$`).FindAllStringSubmatch(string(work), -1)
	if len(mods) < 2 {
		t.Fatal("no libs and service modules in go.work")
	}
	for _, m := range mods {
		want := "COPY " + m[1] + "/go.mod " + m[1] + "/go.sum " + m[1] + "/\n"
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("services/Dockerfile's dependency layer lacks %q", strings.TrimSpace(want))
		}
	}
}

// TestComposeFileIsValid asks Debian's docker-compose (v1, `apt-get install docker-compose`)
// or Docker's compose plugin, whichever is installed, to validate the file.
func TestComposeFileIsValid(t *testing.T) {
	var cmd *exec.Cmd
	if p, err := exec.LookPath("docker-compose"); err == nil {
		cmd = exec.Command(p, "-f", "docker-compose.yaml", "config", "-q")
	} else if p, err := exec.LookPath("docker"); err == nil && exec.Command(p, "compose", "version").Run() == nil {
		cmd = exec.Command(p, "compose", "-f", "docker-compose.yaml", "config", "-q")
	} else {
		t.Skip("docker-compose not installed: apt-get install docker-compose")
	}
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

// rewriteComposeNginx replaces the NGINX_CONF block of docker-compose.yaml with the
// generator's output (-update).
func rewriteComposeNginx(t *testing.T) {
	t.Helper()
	file := filepath.Join(repoRoot, "docker-compose.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "NGINX_CONF: |" })
	if start < 0 {
		t.Fatal("docker-compose.yaml has no `NGINX_CONF: |` block")
	}
	indent := len(lines[start]) - len(strings.TrimLeft(lines[start], " "))
	end := start + 1
	for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent) {
		end++
	}
	// Keep the blank lines that separate the block from the next key.
	for end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	var block []string
	for _, l := range strings.SplitAfter(strings.TrimSuffix(composeNginx(), "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			block = append(block, "\n")
			continue
		}
		block = append(block, strings.Repeat(" ", indent+2)+strings.ReplaceAll(l, "$", "$$"))
	}
	block[len(block)-1] += "\n"
	out := slices.Concat(lines[:start+1], block, lines[end:])
	if err := os.WriteFile(file, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}
