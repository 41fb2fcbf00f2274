//go:build k8se2e

package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/wire"
	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// kubeletNodeIPs are the real-kubelet stage's nodes: their names and only addresses, both
// on loopback. Two, so that a rolling update's surge pod of a one-replica Deployment has a
// node whose ports are free (pods on the host network of one node cannot share a port).
var kubeletNodeIPs = []string{"127.0.0.1", "127.0.0.2"}

// kubeletModes are the chart's two topologies the stage installs, each with the workload
// whose `kubectl rollout restart` it reads through.
var kubeletModes = []struct{ mode, restart string }{
	{"allInOne", "all-in-one"},
	{"split", routes.NoteRead.Target},
}

// TestKubeletE2E is the second stage of `make k8s-e2e` (KUBELET=1): the one image
// (services/Dockerfile FROM scratch) runs as pods on real kubelets. The control plane is
// the kwok stage's; the nodes are two kubelets of the same release on Debian's containerd
// and runc (kubelet_node_test.go), in the test's network namespace, whose only interface
// is loopback. Postgres and Redis are processes the test starts on loopback. For the
// all-in-one and then the split topology, it installs the chart (the migration hook Job
// runs `sharenote migrate` in a pod), runs the e2e flow (license, token, publish, read,
// unshare) against the pods' addresses, restarts one Deployment (`kubectl rollout
// restart`) while reading a note without pause and counts the failed reads, runs the flow
// again and uninstalls. A machine that cannot run it says why in one line and skips. Its
// last line is a summary.
func TestKubeletE2E(t *testing.T) {
	began := time.Now()
	sum := &kubeletTally{}
	defer func() { sum.print(t, time.Since(began)) }()
	where := sandbox(t)
	tools, why := kubeletToolsFromEnv()
	if why == "" {
		why = kubeletPreflight()
	}
	if why != "" {
		sum.skipped = why
		t.Skip("the real-kubelet stage cannot run here: " + why)
	}
	bin := binariesFromEnv(t)
	// Any warning of the API server fails the mode that drew it, as in the kwok stage.
	warnings := &warningLog{}
	rest.SetDefaultWarningHandler(warnings)

	t0 := time.Now()
	sweepStaleContainerCgroups()
	var nodes []*kubeletNode
	cp := startCluster(t, bin, func(t *testing.T, cp *controlPlane) {
		nodes = startKubeletNodes(t, cp, tools, kubeletNodeIPs)
	})
	node, err := cp.Client.CoreV1().Nodes().Get(context.Background(), kubeletNodeIPs[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum.nodes = fmt.Sprintf("%d kubelets %s on %s (%s)", len(nodes), node.Status.NodeInfo.KubeletVersion,
		node.Status.NodeInfo.ContainerRuntimeVersion, strings.Join(kubeletNodeIPs, ", "))
	t.Logf("control plane and %s Ready in %s, in %s", sum.nodes, time.Since(t0).Round(100*time.Millisecond), where)

	// testkit's servers keep their files in the cluster's directory, which goes even when
	// the run is interrupted (the servers, in the test's network namespace, are killed
	// then); Postgres runs as the user postgres, which must reach it.
	if err := os.Chmod(cp.dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", cp.dir)
	for _, m := range kubeletModes {
		t.Run(m.mode, func(t *testing.T) {
			// A Postgres and a Redis of the mode's own, local processes on loopback, which the
			// pods on the nodes' network reach by address; the migration Job makes the schema.
			db, redis := testkit.StartPostgres(t), testkit.StartRedis(t)
			mark := warnings.begin(m.mode)
			kubeletRelease(t, cp, tools, sum, m.mode, m.restart, db.NewDatabase(t), redis.URL)
			if ws := warnings.since(mark); len(ws) > 0 {
				t.Errorf("the API server warned %d times:\n  %s", len(ws), strings.Join(ws, "\n  "))
			}
		})
	}
	sum.warnings = warnings.count()
}

// kubeletTally is what the summary line reports.
type kubeletTally struct {
	skipped  string
	nodes    string
	modes    []string // one line each: what passed, reads and failed reads
	reads    int64
	failed   int64
	warnings int
}

func (s *kubeletTally) print(t *testing.T, took time.Duration) {
	var line string
	switch {
	case s.skipped != "":
		line = "k8s-e2e kubelet stage SKIPPED: " + s.skipped
	default:
		verdict := "passed"
		if t.Failed() {
			verdict = "FAILED"
		}
		line = fmt.Sprintf("k8s-e2e kubelet stage %s: %s; %s; reads during rollout restarts: %d, failed %d; warnings %d; %s",
			verdict, s.nodes, strings.Join(s.modes, "; "), s.reads, s.failed, s.warnings, took.Round(100*time.Millisecond))
	}
	printSummary(line)
}

// kubeletRelease installs the chart in one mode on the kubelets, runs the flow, restarts
// one Deployment under read load, runs the flow again and uninstalls.
func kubeletRelease(t *testing.T, cp *controlPlane, tools kubeletTools, sum *kubeletTally, mode, restart, dbURL, redisURL string) {
	ns := "kubelet-" + strings.ToLower(mode)
	ctx := context.Background()
	cp.createNamespace(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sharenote-object-store", Namespace: ns}, StringData: sampleAWSKeys}
	if _, err := cp.Client.CoreV1().Secrets(ns).Create(ctx, keys, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo, tag := tools.image, "latest"
	if i := strings.LastIndex(tools.image, ":"); i > strings.LastIndex(tools.image, "/") {
		repo, tag = tools.image[:i], tools.image[i+1:]
	}
	// The flow stores no image: the object store's address is a loopback port where
	// nothing listens (its check in /readyz says "down", which never makes a pod unready).
	// The migration hook logs in as the owner; each workload as a role of its own.
	set := map[string]any{"image.repository": repo, "image.tag": tag,
		"database.url": dbURL, "redis.url": redisURL,
		"objectStore.external.url": fmt.Sprintf("s3://sharenote?endpoint=127.0.0.1:%d&region=us-east-1&tls=false", freePort(t))}
	roles := kubeletRoles(t, dbURL, mode)
	var wantRoles []string
	for w, r := range roles {
		set["database.workloads."+w] = map[string]any{"role": r.name, "url": r.url}
		wantRoles = append(wantRoles, r.name)
	}
	slices.Sort(wantRoles)
	vals := kubeletValues(t, mode, set)
	cfg := cp.helmConfig(t, ns)

	began := time.Now()
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = releaseName, ns
	inst.Wait, inst.WaitForJobs, inst.Timeout = true, true, 5*time.Minute
	if _, err := inst.Run(loadChart(t), vals); err != nil {
		cp.describePods(t, ns)
		t.Fatalf("helm install (%s): %v", mode, err)
	}
	installed := time.Since(began).Round(100 * time.Millisecond)
	api := &kubeletAPI{cp: cp, ns: ns, mode: mode, http: &http.Client{Timeout: 10 * time.Second}}
	t.Logf("helm install --wait: %s, the migration Job completed, pods Ready: %s", installed, strings.Join(api.placement(t), ", "))
	defer func() {
		if t.Failed() {
			cp.describePods(t, ns)
		}
	}()

	api.flow(t, "before the restart")
	if got := sessionRoles(t, dbURL); !slices.Equal(got, wantRoles) {
		t.Errorf("the pods are logged in to the database as %v, want each workload's own role only: %v", got, wantRoles)
	}

	// A note to read while one Deployment restarts.
	owner := api.login(t, "Rollout Reader", "reader-"+strings.ToLower(mode)+"@example.com")
	cuid, title := api.publish(t, owner, "Read through a rollout")
	load := api.readLoad(t, restart, cuid, title)
	time.Sleep(2 * time.Second) // reads before the restart too
	before := load.podAddrs()
	restarted := time.Now()
	cp.kubectl(t, "", "-n", ns, "rollout", "restart", "deployment/"+fullname(restart))
	cp.kubectl(t, "", "-n", ns, "rollout", "status", "deployment/"+fullname(restart), "--timeout", "180s")
	api.waitOnePod(t, restart)
	rolled := time.Since(restarted).Round(100 * time.Millisecond)
	time.Sleep(2 * time.Second) // and after it
	reads, failed, errs := load.stop()
	after := api.addrs(t, restart)
	sum.reads += reads
	sum.failed += failed
	t.Logf("rollout restart of %s under read load: %s; served by %v, then by %v; %d reads, %d failed",
		fullname(restart), rolled, before, after, reads, failed)
	if failed > 0 {
		t.Errorf("%d of %d reads failed during the rollout restart of %s; first: %s", failed, reads, fullname(restart), strings.Join(errs, "; "))
	}
	if slices.Equal(before, after) {
		t.Errorf("%s is served at %v before and after its restart: the pod did not move", fullname(restart), after)
	}

	api.flow(t, "after the restart")

	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout = true, 3*time.Minute
	if _, err := un.Run(releaseName); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if !t.Failed() {
		sum.modes = append(sum.modes, fmt.Sprintf("%s: install %s, pods logged in as %d roles of their own, flow before and after a %s restart of %s (%d reads, %d failed)",
			mode, installed, len(wantRoles), rolled, fullname(restart), reads, failed))
	}
}

// kubeletAPI reaches the release's workloads at their ready pods' addresses, as an
// ingress controller following the Services would; routes.Table says which target serves
// a route.
type kubeletAPI struct {
	cp   *controlPlane
	ns   string
	mode string
	http *http.Client
	n    atomic.Int64
}

// workload is the Deployment (and Service) serving a target in this mode.
func (a *kubeletAPI) workload(target string) string {
	if a.mode == "allInOne" {
		return "all-in-one"
	}
	return target
}

// addrs are the addresses (host:port of the http port) of a workload's ready pods that are
// not terminating, sorted: what an EndpointSlice would list as ready, had the API not
// refused loopback addresses in endpoints (the pods' addresses are their nodes').
func (a *kubeletAPI) addrs(t *testing.T, workload string) []string {
	t.Helper()
	addrs, err := a.addrsErr(workload)
	if err != nil {
		t.Fatal(err)
	}
	return addrs
}

func (a *kubeletAPI) addrsErr(workload string) ([]string, error) {
	pods, err := a.cp.Client.CoreV1().Pods(a.ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + workload})
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || !podReady(p) || p.Status.PodIP == "" {
			continue
		}
		out = append(out, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(containerPort(p.Spec.Containers[0], "http")))))
	}
	slices.Sort(out)
	return out, nil
}

// placement lists the release's pods: workload@node.
func (a *kubeletAPI) placement(t *testing.T) []string {
	t.Helper()
	pods, err := a.cp.Client.CoreV1().Pods(a.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			out = append(out, p.Labels["app.kubernetes.io/component"]+"@"+p.Spec.NodeName)
		}
	}
	slices.Sort(out)
	return out
}

// api is a client of the API (libs/client) at the first ready pod of the workload
// serving the route.
func (a *kubeletAPI) api(t *testing.T, r *routes.Route, token string) *client.Client {
	t.Helper()
	addrs := a.addrs(t, a.workload(r.Target))
	if len(addrs) == 0 {
		t.Fatalf("%s %s: %s has no ready pod", r.Method, r.Path, fullname(a.workload(r.Target)))
	}
	return &client.Client{BaseURL: "http://" + addrs[0], Token: token, HTTP: a.http}
}

// login creates a license with the operator's command in a pod of the release's image
// and exchanges it for a session token; it returns the token.
func (a *kubeletAPI) login(t *testing.T, name, email string) string {
	t.Helper()
	var lic account.Credentials
	out := a.operator(t, "licenses", "create", "--name", name, "--email", email)
	if err := json.Unmarshal([]byte(out), &lic); err != nil || lic.LicenseKey == "" {
		t.Fatalf("sharenote licenses create printed %q: %v", out, err)
	}
	tok, err := a.api(t, routes.AuthPublish, "").Login(context.Background(), lic.LicenseKey, lic.InstanceID)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if tok.Token == "" || tok.UserCuid != lic.UserCUID {
		t.Fatalf("token %+v for license %+v", tok, lic)
	}
	return tok.Token
}

// publish publishes a Markdown note with a unique title and returns its CUID and title.
func (a *kubeletAPI) publish(t *testing.T, token, what string) (string, string) {
	t.Helper()
	title := fmt.Sprintf("%s %d (%s)", what, a.n.Add(1), a.mode)
	created, err := a.api(t, routes.PublishCreate, token).Publish(context.Background(),
		wire.PublishRequest{Title: &title, Content: "# Hello\n\nFrom a pod on a real kubelet.\n"}, nil)
	if err != nil || created.Cuid == "" {
		t.Fatalf("publish: %+v, %v", created, err)
	}
	return created.Cuid, title
}

// flow is the e2e flow against the pods: license → token → publish → read (JSON and the
// page) → unshare → the note is gone.
func (a *kubeletAPI) flow(t *testing.T, when string) {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	token := a.login(t, "Kubelet Ada", fmt.Sprintf("ada-%d@example.com", a.n.Add(1)))
	cuid, title := a.publish(t, token, "Published on a kubelet")
	n, err := a.api(t, routes.NoteRead, "").Note(ctx, cuid)
	if err != nil || n.Title == nil || *n.Title != title || !strings.Contains(n.Content, "From a pod on a real kubelet.") {
		t.Errorf("read the note: %+v, %v", n, err)
	}
	page := a.api(t, routes.NotePage, "").BaseURL + "/s/" + cuid
	if err := readOnce(a.http, page, title); err != nil {
		t.Errorf("GET %s: %v", page, err)
	}
	u, err := a.api(t, routes.NoteUnshare, token).Unshare(ctx, cuid)
	if err != nil || u.Cuid != cuid || u.Status != "unpublished" {
		t.Errorf("unshare: %+v, %v", u, err)
	}
	var gone *client.Error
	if _, err := a.api(t, routes.NoteRead, "").Note(ctx, cuid); !errors.As(err, &gone) || gone.Status != http.StatusNotFound {
		t.Errorf("read after unshare: %v, want 404", err)
	}
	t.Logf("e2e flow %s: license → token → publish → read (JSON, page) → unshare → 404, in %s",
		when, time.Since(began).Round(10*time.Millisecond))
}

// operator runs the one image's operator command in a pod made from the release's own
// pod template (its configuration and Secrets), waits for it to finish and returns its
// standard output, read from the kubelet's log file.
func (a *kubeletAPI) operator(t *testing.T, args ...string) string {
	t.Helper()
	ctx := context.Background()
	d, err := a.cp.Client.AppsV1().Deployments(a.ns).Get(ctx, fullname(a.workload(routes.AuthPublish.Target)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := *d.Spec.Template.Spec.DeepCopy()
	spec.RestartPolicy = corev1.RestartPolicyNever
	c := &spec.Containers[0]
	c.Name, c.Args = "operator", args
	c.Ports, c.StartupProbe, c.LivenessProbe, c.ReadinessProbe, c.Lifecycle = nil, nil, nil, nil, nil
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "sharenote-operator-", Namespace: a.ns}, Spec: spec}
	pod, err = a.cp.Client.CoreV1().Pods(a.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = a.cp.Client.CoreV1().Pods(a.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})
	}()
	var done *corev1.Pod
	a.cp.waitFor(t, "pod "+pod.Name+" to finish", 2*time.Minute, func() error {
		p, err := a.cp.Client.CoreV1().Pods(a.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			done = p
			return nil
		}
		return fmt.Errorf("phase %s", p.Status.Phase)
	})
	stdout, stderr := podLogs(t, a.cp, done, "operator")
	if done.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("sharenote %s in pod %s: %s\n%s%s", strings.Join(args, " "), done.Name, done.Status.Phase, stdout, stderr)
	}
	return stdout
}

// podLogs reads a container's standard output and error from the log file its node's
// kubelet keeps (CRI format: time, stream, P(artial) or F(ull), text).
func podLogs(t *testing.T, cp *controlPlane, p *corev1.Pod, container string) (string, string) {
	t.Helper()
	dir := filepath.Join(cp.dir, "node-"+p.Spec.NodeName, "pods", fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), container)
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var out, errs strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), " ", 4)
			if len(parts) < 4 {
				continue
			}
			w := &out
			if parts[1] == "stderr" {
				w = &errs
			}
			w.WriteString(parts[3])
			if parts[2] == "F" {
				w.WriteByte('\n')
			}
		}
	}
	return out.String(), errs.String()
}

// waitOnePod waits until a workload has a single pod, not terminating: the restart's old
// pod is gone.
func (a *kubeletAPI) waitOnePod(t *testing.T, workload string) {
	t.Helper()
	a.cp.waitFor(t, "the old pod of "+fullname(workload)+" to go", 2*time.Minute, func() error {
		pods, err := a.cp.Client.CoreV1().Pods(a.ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + workload})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 || pods.Items[0].DeletionTimestamp != nil {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		return nil
	})
}

// readLoad reads a note from a workload continuously: readers, each a client of its own
// loopback address (the per-IP limit of the API admits 10 requests a second from one),
// send each read to an address of the workload's ready pods (kubeletAPI.addrs, refreshed
// every 100 ms, as an ingress controller following the Service would), over keep-alive
// connections.
type readLoad struct {
	stopping      chan struct{}
	stopOnce      sync.Once
	done          sync.WaitGroup
	mu            sync.Mutex
	addrs, served []string
	reads, failed atomic.Int64
	errs          []string
}

func (a *kubeletAPI) readLoad(t *testing.T, workload, cuid, title string) *readLoad {
	t.Helper()
	l := &readLoad{stopping: make(chan struct{})}
	l.addrs = a.addrs(t, workload)
	t.Cleanup(func() { l.stop() }) // when the test fails before it stops the load
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-l.stopping:
				return
			case <-tick.C:
			}
			if addrs, err := a.addrsErr(workload); err == nil {
				l.mu.Lock()
				l.addrs = addrs
				l.mu.Unlock()
			}
		}
	}()
	for r := range readers {
		dialer := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(r+1))}}
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext}}
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for i := r; ; i++ {
				select {
				case <-l.stopping:
					return
				default:
				}
				l.mu.Lock()
				addrs := l.addrs
				l.mu.Unlock()
				if len(addrs) == 0 {
					l.fail("no ready endpoint")
					time.Sleep(10 * time.Millisecond)
					continue
				}
				addr := addrs[i%len(addrs)]
				if err := readOnce(hc, "http://"+addr+"/api/notes/"+cuid, title); err != nil {
					l.fail(addr + ": " + err.Error())
				} else {
					l.reads.Add(1)
					l.mu.Lock()
					if !slices.Contains(l.served, addr) {
						l.served = append(l.served, addr)
					}
					l.mu.Unlock()
				}
				time.Sleep(readPause)
			}
		}()
	}
	return l
}

// The read load: readers × (1 s / readPause) reads a second at most, each reader under
// the per-IP limit.
const (
	readers   = 8
	readPause = 150 * time.Millisecond
)

// readOnce GETs url and requires a 200 whose body holds want.
func readOnce(c *http.Client, url, want string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("%d %.120s", resp.StatusCode, b)
	}
	return nil
}

func (l *readLoad) fail(msg string) {
	l.reads.Add(1)
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 5 {
		l.errs = append(l.errs, msg)
	}
}

// podAddrs are the addresses that have served reads so far.
func (l *readLoad) podAddrs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.served))
}

// stop ends the load and returns the reads, the failed reads and the first failures.
func (l *readLoad) stop() (int64, int64, []string) {
	l.stopOnce.Do(func() { close(l.stopping) })
	l.done.Wait()
	return l.reads.Load(), l.failed.Load(), l.errs
}

// describePods logs the release's pods, their conditions and their containers' last
// words, for a failed run.
func (cp *controlPlane) describePods(t *testing.T, ns string) {
	pods, err := cp.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("list pods: %v", err)
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		var states []string
		for _, c := range p.Status.Conditions {
			states = append(states, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Message))
		}
		for _, c := range p.Status.ContainerStatuses {
			states = append(states, fmt.Sprintf("%s: ready=%v restarts=%d state=%+v", c.Name, c.Ready, c.RestartCount, c.State))
		}
		t.Logf("pod %s on %q: %s; %s", p.Name, p.Spec.NodeName, p.Status.Phase, strings.Join(states, "; "))
		for _, c := range p.Spec.Containers {
			out, errs := podLogs(t, cp, p, c.Name)
			t.Logf("  %s's output:\n%s", c.Name, lastN(out+errs, 10))
		}
	}
	events, err := cp.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if e.Type != corev1.EventTypeNormal {
				t.Logf("event %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
}

// podReady reports whether a pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
