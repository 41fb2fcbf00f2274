package tests

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit/ingress"
)

var update = flag.Bool("update", false, "rewrite the nginx configuration inlined in docker-compose.yaml")

type composeFile struct {
	Services map[string]composeService
	Volumes  map[string]any
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
	Entrypoint  []string
	Environment map[string]string
	Volumes     []string
	Healthcheck struct{ Test []string }
	DependsOn   yaml.Node `yaml:"depends_on"`
	Profiles    []string
	Restart     string
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
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yaml"))
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
	return ingress.Server("8080", func(target string) string { return target + ":8080" })
}

// The lines that open and close compose's generated services, one per target.
const (
	targetsBegin = "  # One service per target: generated from libs/routes.Targets (charts/tests,\n" +
		"  # `go test -run Compose -update`); nothing to edit by hand down to the end marker.\n"
	targetsEnd = "  # (end of the targets)\n"
)

// composeTargets is the generated block of compose services: one per target, each the one
// image serving its target.
func composeTargets() string {
	var b strings.Builder
	for _, target := range routes.Targets {
		fmt.Fprintf(&b, "  %s:\n    <<: *sharenote\n    command: [\"serve\", \"--target\", %q]\n\n", target, target)
	}
	return b.String()
}

// composeDependsOn is nginx's generated depends_on line: it resolves every target's
// address when it starts.
func composeDependsOn() string {
	return "    depends_on: [" + strings.Join(routes.Targets, ", ") + "]\n"
}

// TestComposeServicesAreTheTargets keeps compose's target services and nginx's
// dependencies the generator's output; -update rewrites them.
func TestComposeServicesAreTheTargets(t *testing.T) {
	_, raw := loadCompose(t)
	text := string(raw)
	begin, end := strings.Index(text, targetsBegin), strings.Index(text, targetsEnd)
	if begin < 0 || end < begin {
		t.Fatal("docker-compose.yaml lacks the markers of its generated target services")
	}
	got := text[begin+len(targetsBegin) : end]
	deps := regexp.MustCompile(`(?m)^    depends_on: \[.*\]\n`)
	want := "  #\n" + composeTargets()
	if *update {
		text = text[:begin+len(targetsBegin)] + want + text[end:]
		text = deps.ReplaceAllLiteralString(text, composeDependsOn())
		if err := os.WriteFile(filepath.Join(repoRoot(t), "docker-compose.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docker-compose.yaml's target services are not routes.Targets'; run `go test -run Compose -update` in charts/tests.\n--- got\n%s--- want\n%s", got, want)
	}
	if lines := deps.FindAllString(text, -1); len(lines) != 1 || lines[0] != composeDependsOn() {
		t.Errorf("nginx's depends_on %q, want %q", lines, composeDependsOn())
	}
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
			"run `go test -run Compose -update` in charts/tests.\n--- got\n%s\n--- want\n%s", got, want)
	}
	if !slices.Contains(nginx.Ports, "8080:8080") {
		t.Errorf("nginx ports = %v, want 8080:8080 (the API on http://localhost:8080)", nginx.Ports)
	}
	deps := nginx.dependsOn(t)
	for _, s := range routes.Targets {
		if _, ok := deps[s]; !ok {
			t.Errorf("nginx does not depend on %s (it resolves the upstreams at start)", s)
		}
	}
}

func TestComposeRunsEveryTargetFromTheOneImage(t *testing.T) {
	c, _ := loadCompose(t)
	nginxIP, edgeIP := c.Services["nginx"].Networks["default"].IPv4Address, c.Services["edge"].Networks["default"].IPv4Address
	if nginxIP == "" {
		t.Fatal("nginx has no fixed address for SHARE_TRUSTED_PROXIES")
	}
	if edgeIP == "" {
		t.Fatal("the edge has no fixed address for SHARE_EDGE_ADDRESSES")
	}
	commands := map[string][]string{"migrate": {"migrate"}, "reaper": {"reap", "--every", "10m"}}
	for _, target := range routes.Targets {
		commands[target] = []string{"serve", "--target", target}
	}
	for name, want := range commands {
		t.Run(name, func(t *testing.T) {
			s, ok := c.Services[name]
			if !ok {
				t.Fatalf("docker-compose.yaml has no %s service", name)
			}
			if s.Image != "sharenote:latest" || s.Build.Context != "." || s.Build.Dockerfile != "services/Dockerfile" || len(s.Build.Args) != 0 {
				t.Errorf("image %q built from %s with %s %v, want sharenote:latest from context . and services/Dockerfile",
					s.Image, s.Build.Context, s.Build.Dockerfile, s.Build.Args)
			}
			if !slices.Equal(s.Command, want) {
				t.Errorf("command %q, want %q", s.Command, want)
			}
			if !s.ReadOnly || s.User != "65532:65532" || !slices.Contains(s.CapDrop, "ALL") {
				t.Errorf("read_only=%v user=%q cap_drop=%v, want a read-only root, 65532:65532 and no capabilities", s.ReadOnly, s.User, s.CapDrop)
			}
			env := s.Environment
			if !strings.HasPrefix(env["SHARE_DATABASE_URL"], "postgres://") || !strings.HasPrefix(env["SHARE_REDIS_URL"], "redis://") {
				t.Errorf("environment does not point at the compose Postgres and Redis: %v", env)
			}
			// nginx, and the optional edge in front of it, whose reads alone get surrogate keys.
			if env["SHARE_TRUSTED_PROXIES"] != nginxIP+","+edgeIP || env["SHARE_EDGE_ADDRESSES"] != edgeIP {
				t.Errorf("SHARE_TRUSTED_PROXIES = %q, SHARE_EDGE_ADDRESSES = %q; want nginx's address %s and the edge's %s, and the edge's",
					env["SHARE_TRUSTED_PROXIES"], env["SHARE_EDGE_ADDRESSES"], nginxIP, edgeIP)
			}
		})
	}
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, "sharenote") && commands[name] == nil {
			t.Errorf("service %s runs the sharenote image but is not a target of routes.Targets, migrate or reaper", name)
		}
	}
	if c.Services["migrate"].dependsOn(t)["postgres"] != "service_healthy" {
		t.Error("migrate does not wait for a healthy postgres")
	}
	for _, s := range append([]string{"reaper"}, routes.Targets...) {
		if c.Services[s].dependsOn(t)["migrate"] != "service_completed_successfully" {
			t.Errorf("%s does not wait for the migration to complete", s)
		}
	}
	// One service reaps on a schedule; no target carries the reap beside its own work.
	for _, target := range routes.Targets {
		if iv := c.Services[target].Environment["SHARE_REAP_INTERVAL"]; iv != "" && iv != "0" {
			t.Errorf("%s SHARE_REAP_INTERVAL = %q: a target reaps beside the reaper service", target, iv)
		}
	}
	if r := c.Services["reaper"]; len(r.Profiles) != 0 || r.Restart != "unless-stopped" {
		t.Errorf("the reaper has profiles %v and restart %q: it must run on `compose up` and come back after a failure", r.Profiles, r.Restart)
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

// TestComposeRunsMinIOAndItsBucket checks compose's object store: a pinned MinIO on a
// volume, a one-shot mc that creates the bucket SHARE_BLOB_URL names, and every sharenote
// service (the targets, the migration that copies older image bytes, the reaper) pointed
// at that bucket with MinIO's own credentials, starting only once the bucket exists.
func TestComposeRunsMinIOAndItsBucket(t *testing.T) {
	c, _ := loadCompose(t)
	minio, ok := c.Services["minio"]
	if !ok {
		t.Fatal("docker-compose.yaml has no minio service")
	}
	pinned := regexp.MustCompile(`^quay\.io/minio/(minio|mc):RELEASE\.[0-9TZ-]+$`)
	if !pinned.MatchString(minio.Image) || !strings.HasPrefix(minio.Image, "quay.io/minio/minio:") {
		t.Errorf("minio image %q, want quay.io/minio/minio pinned to a RELEASE tag", minio.Image)
	}
	if _, named := c.Volumes["minio"]; !slices.Equal(minio.Command, []string{"server", "/data"}) ||
		!slices.Contains(minio.Volumes, "minio:/data") || !named {
		t.Errorf("minio runs %q with volumes %v, want `server /data` on the named volume minio", minio.Command, minio.Volumes)
	}
	if !slices.ContainsFunc(minio.Healthcheck.Test, func(s string) bool { return strings.Contains(s, "/minio/health/") }) {
		t.Errorf("minio healthcheck %v does not ask /minio/health/", minio.Healthcheck.Test)
	}
	user, password := minio.Environment["MINIO_ROOT_USER"], minio.Environment["MINIO_ROOT_PASSWORD"]
	// Dev-only defaults, overridable from the environment.
	if !strings.HasPrefix(user, "${MINIO_ROOT_USER:-") || !strings.HasPrefix(password, "${MINIO_ROOT_PASSWORD:-") {
		t.Errorf("MinIO's credentials %q / %q are not overridable by MINIO_ROOT_USER / MINIO_ROOT_PASSWORD", user, password)
	}

	bucket, ok := c.Services["minio-bucket"]
	if !ok {
		t.Fatal("docker-compose.yaml has no minio-bucket service")
	}
	if !pinned.MatchString(bucket.Image) || !strings.HasPrefix(bucket.Image, "quay.io/minio/mc:") {
		t.Errorf("minio-bucket image %q, want quay.io/minio/mc pinned to a RELEASE tag", bucket.Image)
	}
	if bucket.dependsOn(t)["minio"] != "service_healthy" {
		t.Error("minio-bucket does not wait for a healthy minio")
	}
	if bucket.Environment["AWS_ACCESS_KEY_ID"] != user || bucket.Environment["AWS_SECRET_ACCESS_KEY"] != password {
		t.Error("minio-bucket does not use MinIO's credentials")
	}
	script := strings.Join(append(slices.Clone(bucket.Entrypoint), bucket.Command...), " ")

	sharenote := append([]string{"migrate", "reaper"}, routes.Targets...)
	for _, name := range sharenote {
		s := c.Services[name]
		raw := s.Environment["SHARE_BLOB_URL"]
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "s3" {
			t.Errorf("%s: SHARE_BLOB_URL = %q, want s3://…", name, raw)
			continue
		}
		if _, err := blobstore.Open(context.Background(), raw, func(k string) string { return sampleAWSKeys[k] }); err != nil {
			t.Errorf("%s: the service refuses SHARE_BLOB_URL: %v", name, err)
		}
		endpoint := u.Query().Get("endpoint")
		if endpoint != "minio:9000" || u.Query().Get("tls") != "false" {
			t.Errorf("%s: SHARE_BLOB_URL %q does not name the minio service (minio:9000, tls=false)", name, raw)
		}
		for _, want := range []string{"mc alias set minio http://" + endpoint + " ", "mc mb --ignore-existing minio/" + u.Host} {
			if !strings.Contains(script, want) {
				t.Errorf("minio-bucket runs %q, which lacks %q (%s's SHARE_BLOB_URL)", script, want, name)
			}
		}
		if s.Environment["AWS_ACCESS_KEY_ID"] != user || s.Environment["AWS_SECRET_ACCESS_KEY"] != password {
			t.Errorf("%s: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are not MinIO's credentials", name)
		}
		if s.dependsOn(t)["minio-bucket"] != "service_completed_successfully" {
			t.Errorf("%s does not wait for the bucket", name)
		}
	}
}

// TestComposeEdgeRewritesTheShippedVCL runs the edge service's rewrite of the shipped VCL
// (its entrypoint's script up to `&&`) on a copy of deploy/varnish/sharenote.vcl: the
// backend's host must become nginx and the purge ACL the compose network's subnet, with
// every other line unchanged. The service itself is not run here (its image comes from a
// registry); with varnishd on PATH, the rewritten VCL is compiled too.
func TestComposeEdgeRewritesTheShippedVCL(t *testing.T) {
	c, _ := loadCompose(t)
	edge, ok := c.Services["edge"]
	if !ok {
		t.Fatal("docker-compose.yaml has no edge service")
	}
	if len(edge.Entrypoint) != 3 || edge.Entrypoint[0] != "/bin/sh" || edge.Entrypoint[1] != "-c" {
		t.Fatalf("edge entrypoint %q, want /bin/sh -c SCRIPT", edge.Entrypoint)
	}
	const mounted, rewritten = "/etc/varnish/sharenote.vcl", "/tmp/sharenote.vcl"
	if !slices.Contains(edge.Volumes, "./deploy/varnish/sharenote.vcl:"+mounted+":ro") {
		t.Errorf("edge volumes %v do not mount the shipped VCL at %s", edge.Volumes, mounted)
	}
	rewrite, serve, ok := strings.Cut(edge.Entrypoint[2], "&&")
	if !ok || !strings.Contains(rewrite, mounted) || !strings.Contains(rewrite, rewritten) || !strings.Contains(serve, "-f "+rewritten) {
		t.Fatalf("the edge's script %q does not rewrite %s into %s and then serve that", edge.Entrypoint[2], mounted, rewritten)
	}
	subnets := c.Networks["default"].IPAM.Config
	if len(subnets) != 1 {
		t.Fatalf("the default network has subnets %v, want the one the purge ACL names", subnets)
	}
	subnet, err := netip.ParsePrefix(subnets[0].Subnet)
	if err != nil {
		t.Fatal(err)
	}
	hostLine, aclLine := `    .host = "nginx";`, fmt.Sprintf("    %q/%d;", subnet.Addr().String(), subnet.Bits())

	shipped, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "varnish", "sharenote.vcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "mounted.vcl"), filepath.Join(dir, "rewritten.vcl")
	if err := os.WriteFile(in, shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer(mounted, "'"+in+"'", rewritten, "'"+out+"'").Replace(rewrite)
	if b, err := exec.Command(edge.Entrypoint[0], edge.Entrypoint[1], script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	before, after := strings.Split(string(shipped), "\n"), strings.Split(string(got), "\n")
	if len(after) != len(before) {
		t.Fatalf("the rewrite turned the VCL's %d lines into %d", len(before), len(after))
	}
	// Each rewritten line, and the block it must be in.
	want := map[string]string{hostLine: "backend default {", aclLine: "acl purgers {"}
	for i, line := range after {
		if line == before[i] {
			continue
		}
		if block, ok := want[line]; !ok || vclBlock(after[:i]) != block {
			t.Errorf("line %d: %q became %q, which is not the one rewrite of the backend's host or the purge ACL", i+1, before[i], line)
			continue
		}
		delete(want, line)
	}
	for line, block := range want {
		t.Errorf("the rewrite leaves no %q in %s: the edge's sed, the VCL and the compose network disagree", line, block)
	}
	for i, line := range after {
		if strings.Contains(line, "127.0.0.1") {
			t.Errorf("line %d of the rewritten VCL still names 127.0.0.1: %q", i+1, line)
		}
	}

	varnishd, err := exec.LookPath("varnishd")
	if err != nil {
		t.Log("varnishd not installed (apt-get install varnish varnish-modules): the rewritten VCL is not compiled")
		return
	}
	// varnishd resolves a backend's host when it compiles, and nginx is a name only on the
	// compose network: the compiled copy has the backend's host back at 127.0.0.1, so that
	// what varnishd checks is the rest of the rewrite, the ACL's subnet.
	local := filepath.Join(dir, "local.vcl")
	if err := os.WriteFile(local, []byte(strings.Replace(string(got), hostLine, `    .host = "127.0.0.1";`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// -j none keeps varnishd (as root) from switching to the varnish user, who cannot read
	// the test's private temporary directory; -n gives it a writable working directory.
	cmd := exec.Command(varnishd, "-C", "-j", "none", "-n", filepath.Join(dir, "varnish"), "-f", local)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
}

// vclBlock returns the line that opens the top-level VCL block the lines end in.
func vclBlock(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; strings.HasSuffix(l, "{") && !strings.HasPrefix(l, " ") {
			return l
		}
	}
	return ""
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
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

// rewriteComposeNginx replaces the NGINX_CONF block of docker-compose.yaml with the
// generator's output (-update).
func rewriteComposeNginx(t *testing.T) {
	t.Helper()
	file := filepath.Join(repoRoot(t), "docker-compose.yaml")
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
