//go:build k8se2e

package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// The chart's life on a real API server, step by step, for every values file.
var lifecycle = []string{"install", "upgrade", "rollback", "test", "uninstall"}

// helmTimeout bounds each helm step; under kwok a step takes seconds.
const helmTimeout = 3 * time.Minute

// TestK8sE2E installs the chart on a real, throw-away kube-apiserver (etcd, the controller
// manager, the scheduler, and kwok in place of kubelets: pods become Running and Ready,
// Jobs' pods Succeeded, claims Bound, but no container runs). For every values file it
// installs, upgrades with a changed value, rolls back, runs `helm test` and uninstalls,
// with helm's own Go packages as the helm CLI uses them, and requires that the server
// accepts every object without a single warning (an unknown field is only a warning). It
// then dry-runs k8s/ on the server (kubectl apply --dry-run=server -k), and breaks the
// chart in three ways that strict static decoding accepts, to show the server refusing
// each with its own message. `make k8s-e2e` builds the binaries and runs it; its output
// ends with one summary line.
func TestK8sE2E(t *testing.T) {
	began := time.Now()
	bin := binariesFromEnv(t)
	where := sandbox(t)

	warnings := &warningLog{}
	rest.SetDefaultWarningHandler(warnings)
	sum := &tally{files: len(valuesFiles), misspelt: "not tried"}
	defer func() { sum.print(t, warnings, time.Since(began)) }()

	t0 := time.Now()
	cp := startControlPlane(t, bin)
	t.Logf("control plane up in %s on 127.0.0.1, in %s", time.Since(t0).Round(100*time.Millisecond), where)

	// values-prod.yaml enables the ServiceMonitor, whose CRD a cluster with
	// prometheus-operator has.
	crd, err := os.ReadFile(filepath.Join("testdata", "crds", "servicemonitors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	warnings.begin("setup")
	cp.kubectl(t, string(crd), "apply", "-f", "-")
	cp.kubectl(t, "", "wait", "--for", "condition=Established", "--timeout", "60s", "crd/servicemonitors.monitoring.coreos.com")

	for _, file := range valuesFiles {
		t.Run(file, func(t *testing.T) { chartLifecycle(t, cp, warnings, sum, file) })
	}
	t.Run("k8s server dry-run", func(t *testing.T) { sum.dryRun = kustomizeDryRun(t, cp, warnings) })
	t.Run("the server refuses what the static check accepts", func(t *testing.T) { brokenCharts(t, cp, warnings, sum) })
	t.Run("a misspelt field is only a warning", func(t *testing.T) { misspeltField(t, cp, warnings, sum) })
	t.Run("the schema agrees with the API server", func(t *testing.T) { schemaAgrees(t, cp, warnings, sum) })
	// The Tilt stage (tilt_e2e_test.go): `tilt ci -f tilt/Tiltfile` on this cluster.
	sum.tilt = "skipped"
	if !t.Run("tilt ci", func(t *testing.T) { sum.tilt = tiltCI(t, cp) }) {
		sum.tilt = "FAILED"
	}
}

// tally counts what passed, for the summary line.
type tally struct {
	files, passed   int
	dryRun          bool
	breaks, refused int
	misspelt        string // what became of the misspelt field
	probes, agreed  int    // samples of the schema's API rules the server judged alike
	tilt            string // what became of the Tilt stage
}

func (s *tally) print(t *testing.T, w *warningLog, took time.Duration) {
	verdict := "passed"
	if t.Failed() {
		verdict = "FAILED"
	}
	dry := "failed"
	if s.dryRun {
		dry = "passed"
	}
	line := fmt.Sprintf("k8s-e2e %s: %d values files × %d steps (%s): %d passed; k8s/ server dry-run %s; %d of %d broken charts refused by the server, a misspelt field %s; schema and server agree on %d of %d samples; tilt ci %s; warnings %d; %s",
		verdict, s.files, len(lifecycle), strings.Join(lifecycle, ", "), s.passed, dry, s.refused, s.breaks, s.misspelt, s.agreed, s.probes, s.tilt, w.count(), took.Round(100*time.Millisecond))
	printSummary(line)
}

// printSummary adds a stage's summary line to the file `make k8s-e2e` prints at the end
// (SHARE_K8SE2E_SUMMARY; the stages' lines in the order they ran), or prints it.
func printSummary(line string) {
	if path := os.Getenv("SHARE_K8SE2E_SUMMARY"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			if cerr := f.Close(); err == nil && cerr == nil {
				return
			}
		}
	}
	fmt.Println(line)
}

// warningLog collects every warning the API server sends (client-go hands each Warning
// header to it), labelled with the step that drew it, and kubectl's "Warning:" lines.
type warningLog struct {
	mu   sync.Mutex
	step string
	all  []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, text string) { w.add(text) }

func (w *warningLog) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, w.step+": "+text)
}

// begin labels the warnings that follow and returns a mark for since.
func (w *warningLog) begin(step string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.step = step
	return len(w.all)
}

func (w *warningLog) since(mark int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.all[mark:])
}

// take removes the warnings since mark, which a step expected, and returns them.
func (w *warningLog) take(mark int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.all[mark:])
	w.all = w.all[:mark]
	return out
}

func (w *warningLog) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.all)
}

// step runs one step, fails the test on its error or on any warning it drew, and logs
// its time.
func step(t *testing.T, w *warningLog, name string, run func() (string, error)) bool {
	t.Helper()
	mark := w.begin(t.Name() + " " + name)
	began := time.Now()
	detail, err := run()
	took := time.Since(began).Round(10 * time.Millisecond)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return false
	}
	if ws := w.since(mark); len(ws) > 0 {
		t.Errorf("%s: the API server warned %d times:\n  %s", name, len(ws), strings.Join(ws, "\n  "))
		return false
	}
	t.Logf("%-9s ok  %6s  %s", name, took, detail)
	return true
}

// helmConfig is helm's configuration for one namespace of the cluster, as the helm CLI
// makes it from --kubeconfig and -n (releases stored in Secrets).
func (cp *controlPlane) helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	flags.Namespace = &ns
	cache := filepath.Join(cp.dir, "home", ".kube", "cache")
	flags.CacheDir = &cache
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// releaseNamespace is where a values file is installed: a namespace of its own, which
// enforces the restricted Pod Security Standard (and warns about it, so that a pod
// template that breaks it counts as a warning).
func releaseNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
}

// prerequisites creates what a user creates before `helm install` with these values:
// the Secrets the values name (connection URLs, object-store keys, image pull
// credentials) and the ServiceAccount, with sample contents. Nothing reads them: no
// container runs.
func prerequisites(t *testing.T, cp *controlPlane, ns string, vals map[string]any) []string {
	t.Helper()
	coalesced, err := chartutil.CoalesceValues(loadChart(t), vals)
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{Values: coalesced.AsMap()}
	ctx := context.Background()
	var made []string
	secret := func(name string, typ corev1.SecretType, data map[string]string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: typ, StringData: data}
		if _, err := cp.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Secret %s: %v", name, err)
		}
		made = append(made, "Secret "+name)
	}
	for which, url := range map[string]string{
		"database": "postgres://sharenote:sample@postgres.example:5432/sharenote",
		"redis":    "redis://redis.example:6379/0",
	} {
		if name := r.str(which + ".existingSecret"); name != "" {
			secret(name, corev1.SecretTypeOpaque, map[string]string{r.str(which + ".existingSecretKey"): url})
		}
	}
	// Each workload's own database URL, as the role the operator made for it.
	for _, w := range r.workloads() {
		if r.perWorkload() && r.str("database.workloads."+w+".url") == "" {
			secret(databaseSecret(r, w), corev1.SecretTypeOpaque, map[string]string{r.str("database.existingSecretKey"): "postgres://" + databaseRole(r, w) + ":sample@postgres.example:5432/sharenote"})
		}
	}
	if name := r.str("objectStore.external.existingSecret"); r.str("objectStore.type") == "external" && name != "" {
		secret(name, corev1.SecretTypeOpaque, sampleAWSKeys)
	}
	if pulls, ok := r.val("image.pullSecrets").([]any); ok {
		for _, p := range pulls {
			secret(fmt.Sprint(p), corev1.SecretTypeDockerConfigJson, map[string]string{corev1.DockerConfigJsonKey: `{"auths":{}}`})
		}
	}
	if name := r.str("serviceAccountName"); name != "" {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if _, err := cp.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ServiceAccount %s: %v", name, err)
		}
		made = append(made, "ServiceAccount "+name)
	}
	return made
}

// chartLifecycle is one values file's install, upgrade, rollback, test and uninstall.
func chartLifecycle(t *testing.T, cp *controlPlane, w *warningLog, sum *tally, file string) {
	ns := "sharenote-" + strings.TrimSuffix(file, ".yaml")
	ctx := context.Background()
	w.begin(t.Name() + " setup")
	cp.createNamespace(t, releaseNamespace(ns))
	made := prerequisites(t, cp, ns, readValues(t, file))
	if len(made) == 0 {
		made = []string{"nothing (the values hold everything)"}
	}
	t.Logf("namespace %s (Pod Security: restricted), created first: %s", ns, strings.Join(made, ", "))
	cfg := cp.helmConfig(t, ns)

	coalesced, err := chartutil.CoalesceValues(loadChart(t), readValues(t, file))
	if err != nil {
		t.Fatal(err)
	}
	logLevel := (&rendered{Values: coalesced.AsMap()}).str("logLevel")
	changed := "warn"
	if logLevel == changed {
		changed = "error"
	}
	configLevel := func() (string, error) {
		cm, err := cp.Client.CoreV1().ConfigMaps(ns).Get(ctx, releaseName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return cm.Data["SHARE_LOG_LEVEL"], nil
	}
	wantLevel := func(rel *release.Release, version int, level string) error {
		if rel.Version != version || rel.Info.Status != release.StatusDeployed {
			return fmt.Errorf("release revision %d %s, want %d deployed", rel.Version, rel.Info.Status, version)
		}
		if got, err := configLevel(); err != nil || got != level {
			return fmt.Errorf("ConfigMap SHARE_LOG_LEVEL = %q (%v), want %q", got, err, level)
		}
		return nil
	}

	ok := step(t, w, "install", func() (string, error) {
		inst := action.NewInstall(cfg)
		inst.ReleaseName, inst.Namespace = releaseName, ns
		inst.Wait, inst.WaitForJobs, inst.Timeout = true, true, helmTimeout
		rel, err := inst.Run(loadChart(t), readValues(t, file))
		if err != nil {
			return "", err
		}
		// Every object of the release is on the server now…
		objs, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
		if err != nil {
			return "", err
		}
		for _, o := range objs {
			if err := o.Get(); err != nil {
				return "", fmt.Errorf("%s %s is not on the server: %w", o.Mapping.GroupVersionKind.Kind, o.Name, err)
			}
		}
		// …and what was sent also passes the static strict decode.
		docs := splitDocs(rel.Manifest)
		for _, h := range rel.Hooks {
			docs = append(docs, splitDocs(h.Manifest)...)
		}
		for _, d := range docs {
			if _, err := decodeStrict(d); err != nil {
				return "", fmt.Errorf("static decode of what the server accepted: %w", err)
			}
		}
		return fmt.Sprintf("%d objects and %d hooks accepted, pods Ready, hook Jobs complete (--wait --wait-for-jobs)", len(objs), len(rel.Hooks)), wantLevel(rel, 1, logLevel)
	})
	if !ok {
		return
	}
	sum.passed++

	if step(t, w, "upgrade", func() (string, error) {
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		up.Wait, up.WaitForJobs, up.Timeout = true, true, helmTimeout
		vals := readValues(t, file)
		vals["logLevel"] = changed
		rel, err := up.Run(releaseName, loadChart(t), vals)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("--set logLevel=%s: ConfigMap changed, Deployments rolled", changed), wantLevel(rel, 2, changed)
	}) {
		sum.passed++
	}

	if step(t, w, "rollback", func() (string, error) {
		rb := action.NewRollback(cfg)
		rb.Version = 1
		rb.Wait, rb.WaitForJobs, rb.Timeout = true, true, helmTimeout
		if err := rb.Run(releaseName); err != nil {
			return "", err
		}
		rel, err := action.NewGet(cfg).Run(releaseName)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("to revision 1: revision 3, logLevel %s again", logLevel), wantLevel(rel, 3, logLevel)
	}) {
		sum.passed++
	}

	if step(t, w, "test", func() (string, error) {
		rt := action.NewReleaseTesting(cfg)
		rt.Namespace = ns
		rt.Timeout = helmTimeout
		rel, err := rt.Run(releaseName)
		if err != nil {
			return "", err
		}
		var ran []string
		for _, h := range rel.Hooks {
			if slices.Contains(h.Events, release.HookTest) {
				if h.LastRun.Phase != release.HookPhaseSucceeded {
					return "", fmt.Errorf("test %s: %s", h.Name, h.LastRun.Phase)
				}
				ran = append(ran, h.Kind+" "+h.Name)
			}
		}
		if len(ran) == 0 {
			return "", errors.New("the chart has no test hook")
		}
		return strings.Join(ran, ", ") + " Succeeded (kwok's stage; its /readyz check needs a real kubelet)", nil
	}) {
		sum.passed++
	}

	if step(t, w, "uninstall", func() (string, error) {
		un := action.NewUninstall(cfg)
		un.Wait, un.Timeout = true, helmTimeout
		if _, err := un.Run(releaseName); err != nil {
			return "", err
		}
		sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + releaseName}
		deps, err := cp.Client.AppsV1().Deployments(ns).List(ctx, sel)
		if err != nil {
			return "", err
		}
		svcs, err := cp.Client.CoreV1().Services(ns).List(ctx, sel)
		if err != nil {
			return "", err
		}
		if n := len(deps.Items) + len(svcs.Items); n > 0 {
			return "", fmt.Errorf("%d Deployments and Services of the release remain", n)
		}
		// The pods go after their ReplicaSets, by the garbage collector's background
		// cascade, which helm's wait does not wait for.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			left, remains, err := podsLeft(ctx, cp, ns, sel)
			if err != nil {
				return "", err
			}
			if remains == "" {
				return fmt.Sprintf("nothing of the release remains but hooks (by design): %v", left), nil
			}
			if time.Now().After(deadline) {
				return "", fmt.Errorf("pod %s of the release remains 30 s after the uninstall", remains)
			}
		}
	}) {
		sum.passed++
	}
}

// podsLeft lists the pods of a release: the hooks' names, and the name of one other
// pod ("" when none remains).
func podsLeft(ctx context.Context, cp *controlPlane, ns string, sel metav1.ListOptions) (hooks []string, remains string, err error) {
	pods, err := cp.Client.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return nil, "", err
	}
	for _, p := range pods.Items {
		if p.Annotations["helm.sh/hook"] == "" {
			return nil, p.Name, nil
		}
		hooks = append(hooks, p.Name)
	}
	return hooks, "", nil
}

// kustomizeDryRun applies k8s/ on the server as a dry run, after creating its Namespace
// for real (a dry run would not keep it, and its objects need it), with no warning.
func kustomizeDryRun(t *testing.T, cp *controlPlane, w *warningLog) bool {
	dir := filepath.Join(repoRoot(t), "k8s")
	return step(t, w, "apply", func() (string, error) {
		var out strings.Builder
		for _, args := range [][]string{
			{"apply", "-f", filepath.Join(dir, "namespace.yaml")},
			{"apply", "--dry-run=server", "-k", dir},
		} {
			stdout, stderr, err := cp.kubectlErr("", args...)
			if err != nil {
				return "", fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			for _, line := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(line, "Warning:") {
					w.add(line)
				}
			}
			out.WriteString(stdout)
		}
		accepted := strings.Count(out.String(), "(server dry run)")
		if accepted == 0 {
			return "", fmt.Errorf("no object was dry-run on the server:\n%s", out.String())
		}
		return fmt.Sprintf("kubectl apply --dry-run=server -k k8s/: %d objects accepted (Namespace created for real first)", accepted), nil
	})
}

// breaker is a helm post-renderer that breaks one object of the rendered chart, the way
// a template mistake would, and keeps the broken document.
type breaker struct {
	kind, name string
	edit       func(obj map[string]any)
	broken     string
}

func (b *breaker) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	var out bytes.Buffer
	for _, doc := range releaseutil.SplitManifests(in.String()) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, err
		}
		meta, _ := obj["metadata"].(map[string]any)
		if obj["kind"] == b.kind && meta["name"] == b.name {
			b.edit(obj)
			y, err := yaml.Marshal(obj)
			if err != nil {
				return nil, err
			}
			doc = string(y)
			b.broken = doc
		}
		fmt.Fprintf(&out, "---\n%s\n", doc)
	}
	if b.broken == "" {
		return nil, fmt.Errorf("no %s %s to break", b.kind, b.name)
	}
	return &out, nil
}

// dig returns the map at a path of nested maps.
func dig(obj map[string]any, path ...string) map[string]any {
	for _, p := range path {
		obj = obj[p].(map[string]any)
	}
	return obj
}

// brokenCharts breaks the chart (values.yaml) in three ways that the static strict
// decode accepts (each is well-typed), and shows the server stage failing with the
// server's own message. values.schema.json now refuses the first two at install time
// when they come from values; these are broken templates, after the schema.
func brokenCharts(t *testing.T, cp *controlPlane, w *warningLog, sum *tally) {
	ns := "sharenote-broken"
	w.begin(t.Name() + " setup")
	cp.createNamespace(t, releaseNamespace(ns))
	prerequisites(t, cp, ns, map[string]any{})
	cfg := cp.helmConfig(t, ns)
	for _, tc := range []struct {
		name string
		b    *breaker
		want []string // in the server's message
	}{
		{"a bad cron expression (a seconds field)", &breaker{kind: "CronJob", name: fullname("reaper"), edit: func(o map[string]any) {
			dig(o, "spec")["schedule"] = "*/10 * * * * *"
		}}, []string{`CronJob.batch "sharenote-reaper" is invalid`, "spec.schedule"}},
		{"an HPA whose minReplicas exceeds maxReplicas", &breaker{kind: "HorizontalPodAutoscaler", name: fullname("notes"), edit: func(o map[string]any) {
			dig(o, "spec")["minReplicas"], dig(o, "spec")["maxReplicas"] = 5, 2
		}}, []string{`HorizontalPodAutoscaler.autoscaling "sharenote-notes" is invalid`, "spec.maxReplicas", "must be greater than or equal to `minReplicas`"}},
		{"a Deployment whose selector does not match its pods", &breaker{kind: "Deployment", name: fullname("notes"), edit: func(o map[string]any) {
			dig(o, "spec", "template", "metadata", "labels")["app.kubernetes.io/component"] = "note"
		}}, []string{`Deployment.apps "sharenote-notes" is invalid`, "spec.template.metadata.labels", "`selector` does not match template `labels`"}},
	} {
		sum.breaks++
		t.Run(tc.name, func(t *testing.T) {
			w.begin(t.Name())
			inst := action.NewInstall(cfg)
			inst.ReleaseName, inst.Namespace, inst.Timeout = releaseName, ns, helmTimeout
			inst.PostRenderer = tc.b
			_, err := inst.Run(loadChart(t), map[string]any{})
			defer func() {
				if _, err := action.NewUninstall(cfg).Run(releaseName); err != nil {
					t.Errorf("uninstall the broken release: %v", err)
				}
			}()
			if _, derr := decodeStrict(tc.b.broken); derr != nil {
				t.Errorf("the static strict decode refuses it already, so it proves nothing: %v", derr)
			}
			if err == nil {
				t.Fatalf("the server accepted it:\n%s", tc.b.broken)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("helm install failed, but not with the server's message (want %q): %v", want, err)
				}
			}
			msg := err.Error()
			if i := strings.Index(msg, tc.want[0]); i >= 0 {
				msg = strings.TrimSpace(msg[i:])
			}
			t.Logf("static strict decode: accepted; helm install: refused by the API server: %s", msg)
			sum.refused++
		})
	}
}

// misspeltField installs the chart with a misspelt field in one Deployment (replica for
// replicas), which the API server drops with only a warning: the one mistake that the
// static strict decode refuses and the server lets through. It proves that the warning
// count above hears the server; this expected warning is not counted.
func misspeltField(t *testing.T, cp *controlPlane, w *warningLog, sum *tally) {
	ns := "sharenote-misspelt"
	w.begin(t.Name() + " setup")
	cp.createNamespace(t, releaseNamespace(ns))
	prerequisites(t, cp, ns, map[string]any{})
	cfg := cp.helmConfig(t, ns)
	b := &breaker{kind: "Deployment", name: fullname("notes"), edit: func(o map[string]any) {
		dig(o, "spec")["replica"] = 3
	}}
	mark := w.begin(t.Name())
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace, inst.Timeout = releaseName, ns, helmTimeout
	inst.PostRenderer = b
	_, err := inst.Run(loadChart(t), map[string]any{})
	heard := w.take(mark)
	defer func() {
		if _, err := action.NewUninstall(cfg).Run(releaseName); err != nil {
			t.Errorf("uninstall: %v", err)
		}
		w.take(mark)
	}()
	if _, derr := decodeStrict(b.broken); derr == nil || !strings.Contains(derr.Error(), "replica") {
		t.Errorf("the static strict decode should refuse the misspelt field: %v", derr)
	}
	if err != nil {
		t.Fatalf("helm install: %v (the server should only warn)", err)
	}
	if len(heard) != 1 || !strings.Contains(heard[0], `unknown field "spec.replica"`) {
		t.Fatalf("warnings heard: %q, want one about the unknown field spec.replica", heard)
	}
	sum.misspelt = "warned"
	t.Logf("static strict decode: refused; helm install: accepted, the API server warned: %s", strings.TrimPrefix(heard[0], t.Name()+": "))
}

// schemaAgrees asks the API server (dry runs) about every sample of apiProbes and
// requires values.schema.json's verdict to be the same: what the schema lets through the
// server accepts, and what the server refuses the schema refuses first.
func schemaAgrees(t *testing.T, cp *controlPlane, w *warningLog, sum *tally) {
	ns := "sharenote-probes"
	w.begin(t.Name() + " setup")
	cp.createNamespace(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	step(t, w, "probes", func() (string, error) {
		var disagree []string
		for _, p := range apiProbes {
			for _, sample := range p.samples {
				if sample == "" && (p.what == "a Secret name" || p.what == "an image pull Secret") {
					continue // "" names no Secret: nothing to ask the server
				}
				sum.probes++
				serr := p.server(context.Background(), cp.Client, ns, sample)
				verr := schemaVerdict(t, p.values(sample))
				if (serr == nil) != (verr == nil) {
					disagree = append(disagree, fmt.Sprintf("%s %q: server %v, schema %v", p.what, sample, serr, verr))
					continue
				}
				sum.agreed++
			}
		}
		if len(disagree) > 0 {
			return "", fmt.Errorf("the schema and the server disagree:\n  %s", strings.Join(disagree, "\n  "))
		}
		return fmt.Sprintf("%d samples (label keys and values, annotation keys, Secret names, port names, CIDRs, cron schedules): same verdicts", sum.agreed), nil
	})
}
