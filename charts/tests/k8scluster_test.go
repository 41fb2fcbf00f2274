//go:build k8se2e

package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// The address ranges of the throw-away cluster. Nothing ever dials them: there is no
// kube-proxy and no CoreDNS, kwok only writes pod IPs into the API, the real kubelets of
// the second stage run only host-network pods (their addresses are the nodes', on
// loopback), and the API server's own Service gets no endpoints
// (--endpoint-reconciler-type none). Every connection the test makes goes to loopback.
const (
	serviceCIDR = "10.96.0.0/16"
	podCIDR     = "10.244.0.0/16"
	// fakeNode is the one node, kept by kwok (its annotation), whose only address is loopback.
	fakeNode = "kwok-node-0"
)

// binaries are the pinned programs the control plane runs, built by `make k8s-tools`.
type binaries struct {
	kube   string // directory of kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
	etcd   string
	kwok   string
	stages string // directory of kwok's stage files
}

func binariesFromEnv(t *testing.T) binaries {
	t.Helper()
	b := binaries{os.Getenv("SHARE_K8S_BIN"), os.Getenv("SHARE_ETCD_BIN"), os.Getenv("SHARE_KWOK_BIN"), os.Getenv("SHARE_KWOK_STAGES")}
	for name, path := range map[string]string{"SHARE_K8S_BIN": b.kube, "SHARE_ETCD_BIN": b.etcd, "SHARE_KWOK_BIN": b.kwok, "SHARE_KWOK_STAGES": b.stages} {
		if path == "" {
			t.Fatalf("%s is not set: run `make k8s-e2e`, which builds the pinned binaries into .tools and sets it", name)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s: %v (`make k8s-tools` builds it)", name, err)
		}
	}
	return b
}

// sandbox reports where the test's packets can go. `make k8s-e2e` runs the test binary in
// a network namespace of its own (`unshare --net`), whose only interface is loopback: any
// attempt to reach another address fails at once instead of leaving the machine. Fresh,
// that loopback is down, so it is brought up here.
func sandbox(t *testing.T) string {
	t.Helper()
	if !ownNetworkNamespace() {
		return "the host's network namespace (no unshare): only loopback addresses are configured"
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 {
			if err := linkUp(i.Name); err != nil {
				t.Fatalf("bring %s up in the test's network namespace: %v", i.Name, err)
			}
		}
	}
	return "a network namespace of its own whose only interface is loopback"
}

// linkUp sets IFF_UP on an interface, as `ip link set NAME up` does.
func linkUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// controlPlane is a throw-away Kubernetes control plane on 127.0.0.1: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with one fake node,
// each a child process with its data, certificates and log under one temporary directory.
type controlPlane struct {
	bin        binaries
	dir        string
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface
	procs      []*process

	stopping   sync.Mutex
	beforeStop []func() // what Stop runs first (the kubelet stage's nodes), last added first
}

// process is one child of the control plane.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

// startControlPlane starts everything and returns once the fake node is Ready. Stop is
// registered as a cleanup and runs on SIGINT or SIGTERM too; the children also die with
// the test process (Pdeathsig), so an interrupted or timed-out run leaves nothing running.
func startControlPlane(t *testing.T, bin binaries) *controlPlane {
	t.Helper()
	return startCluster(t, bin, nil)
}

// startCluster is startControlPlane with the nodes of startNodes (the real-kubelet stage,
// kubelet_e2e_test.go) in place of kwok and its fake node, when it is not nil.
func startCluster(t *testing.T, bin binaries, startNodes func(t *testing.T, cp *controlPlane)) *controlPlane {
	t.Helper()
	sweepStaleDirs()
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := &controlPlane{bin: bin, dir: dir}
	cp.stopOnInterrupt(t)
	t.Cleanup(func() {
		cp.Stop()
		if t.Failed() {
			cp.tailLogs(t)
		}
		os.RemoveAll(dir)
	})
	for _, d := range []string{"pki", "etcd", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := writePKI(filepath.Join(dir, "pki")); err != nil {
		t.Fatalf("PKI: %v", err)
	}
	pki := func(f string) string { return filepath.Join(dir, "pki", f) }

	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	cp.start(t, "etcd", bin.etcd,
		"--name", "e2e", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL,
		// A throw-away store: durability buys nothing here and costs the shared disk.
		"--unsafe-no-fsync", "--log-level", "warn")
	cp.waitFor(t, "etcd", 30*time.Second, func() error { return httpOK(etcdURL + "/health") })

	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	cp.start(t, "kube-apiserver", filepath.Join(bin.kube, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(apiPort),
		"--tls-cert-file", pki("apiserver.crt"), "--tls-private-key-file", pki("apiserver.key"),
		"--client-ca-file", pki("ca.crt"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki("sa.pub"), "--service-account-signing-key-file", pki("sa.key"),
		"--service-cluster-ip-range", serviceCIDR,
		// Write no endpoints for the API server's own Service (there is nothing to reach
		// it by), and reach a node only by its InternalIP, which is 127.0.0.1.
		"--endpoint-reconciler-type", "none",
		"--kubelet-preferred-address-types", "InternalIP",
		"--authorization-mode", "RBAC",
		"--profiling=false")
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(cp.Kubeconfig, server, pki("ca.crt"), pki("admin.crt"), pki("admin.key")); err != nil {
		t.Fatal(err)
	}
	cp.Config, err = clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cp.Client = kubernetes.NewForConfigOrDie(cp.Config)
	cp.waitFor(t, "kube-apiserver", 60*time.Second, func() error {
		_, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		return err
	})

	cp.start(t, "kube-controller-manager", filepath.Join(bin.kube, "kube-controller-manager"),
		"--kubeconfig", cp.Kubeconfig, "--secure-port", "0", "--leader-elect=false",
		"--service-account-private-key-file", pki("sa.key"), "--root-ca-file", pki("ca.crt"),
		"--profiling=false")
	cp.start(t, "kube-scheduler", filepath.Join(bin.kube, "kube-scheduler"),
		"--kubeconfig", cp.Kubeconfig, "--secure-port", "0", "--leader-elect=false", "--profiling=false")

	// Stage 2 (`make k8s-e2e KUBELET=1`): real kubelets on containerd, instead of kwok.
	if startNodes != nil {
		startNodes(t, cp)
		return cp
	}

	stages, storageClasses := cp.kwokConfig(t)
	cp.start(t, "kwok", bin.kwok,
		"--kubeconfig", cp.Kubeconfig, "--config", stages,
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
		"--node-ip", "127.0.0.1", "--cidr", podCIDR, "--node-lease-duration-seconds", "40")

	ctx := context.Background()
	for _, sc := range storageClasses {
		cp.kubectl(t, sc, "apply", "-f", "-")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        fakeNode,
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		Labels: map[string]string{"kubernetes.io/hostname": fakeNode, "kubernetes.io/os": "linux",
			"kubernetes.io/arch": "amd64", "type": "kwok"},
	}}
	if _, err := cp.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the fake node: %v", err)
	}
	cp.waitFor(t, "the fake node Ready", 60*time.Second, func() error {
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, fakeNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not Ready")
	})
	return cp
}

// tempPrefix names the control plane's temporary directories.
const tempPrefix = "sharenote-k8se2e-"

// sweepStaleDirs removes the directories of earlier runs whose test process is gone: one
// killed outright (SIGKILL, an OOM kill) takes its children along (Pdeathsig) but cannot
// remove its files.
func sweepStaleDirs() {
	for _, d := range staleDirs() {
		os.RemoveAll(d)
	}
}

// staleDirs returns the directories of earlier runs whose test process is gone.
func staleDirs() []string {
	var stale []string
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			stale = append(stale, d)
		}
	}
	return stale
}

// kwokConfig writes kwok's stages (those built with kwok, then ours from testdata/kwok)
// into one configuration file, and returns the other objects found among them (kwok's
// StorageClass for its volume stages), to be created in the cluster.
func (cp *controlPlane) kwokConfig(t *testing.T) (string, []string) {
	t.Helper()
	var files []string
	for _, dir := range []string{cp.bin.stages, filepath.Join("testdata", "kwok")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no stages in %s: %v", dir, err)
		}
		files = append(files, m...)
	}
	var stages, others []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range splitDocs(string(b)) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if tm.Kind == "Stage" {
				stages = append(stages, doc)
			} else {
				others = append(others, doc)
			}
		}
	}
	path := filepath.Join(cp.dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(stages, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, others
}

// env is the children's environment: no proxy settings, a private HOME (kubectl's and
// kwok's caches), the PATH.
func (cp *controlPlane) env() []string {
	return []string{"HOME=" + filepath.Join(cp.dir, "home"), "PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + cp.Kubeconfig}
}

// start starts a child with its output in <name>.log and returns it.
func (cp *controlPlane) start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	log := filepath.Join(cp.dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = cp.env()
	cmd.Dir = cp.dir
	// Killed with the test process, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	cp.procs = append(cp.procs, p)
	return p
}

// Stop runs what was added with onStop, then ends the children in the reverse order of
// their start: SIGTERM, then SIGKILL for any still running after 10 s. It is safe to call
// more than once, and from the interrupt handler while a cleanup runs it.
func (cp *controlPlane) Stop() {
	cp.stopping.Lock()
	defer cp.stopping.Unlock()
	for i := len(cp.beforeStop) - 1; i >= 0; i-- {
		cp.beforeStop[i]()
	}
	cp.beforeStop = nil
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		select {
		case <-p.exited:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// onStop adds what Stop runs before it stops the children.
func (cp *controlPlane) onStop(f func()) {
	cp.stopping.Lock()
	defer cp.stopping.Unlock()
	cp.beforeStop = append(cp.beforeStop, f)
}

// stopOnInterrupt stops the cluster and removes its files on SIGINT or SIGTERM until the
// test ends, then exits (status 130). It also kills whatever else the test started that
// still runs (the servers testkit started), since no cleanup of the test runs then.
func (cp *controlPlane) stopOnInterrupt(t *testing.T) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	t.Cleanup(func() {
		signal.Stop(sig)
		close(done)
	})
	go func() {
		select {
		case <-done:
			return
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "k8s-e2e: %v: stopping the cluster\n", s)
		}
		cp.Stop()
		killDescendants(os.Getpid())
		os.RemoveAll(cp.dir)
		os.Exit(130)
	}()
}

// killDescendants kills the processes descended from pid: all of them found first, since
// the children of a killed process move to another parent.
func killDescendants(pid int) {
	tree := childrenOf(pid)
	for i := 0; i < len(tree); i++ {
		tree = append(tree, childrenOf(tree[i])...)
	}
	for _, p := range tree {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// childrenOf returns the PIDs of the children of parent.
func childrenOf(parent int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}

// ownNetworkNamespace reports whether the test runs in a network namespace of its own
// (`make k8s-e2e`'s unshare): one whose only interfaces are loopback.
func ownNetworkNamespace() bool {
	ifaces, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagLoopback == 0 {
			return false
		}
	}
	return true
}

// running returns an error naming the first child that has exited.
func (cp *controlPlane) running() error {
	for _, p := range cp.procs {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited: %v (log: %s)", p.name, p.err, lastLines(p.log, 5))
		default:
		}
	}
	return nil
}

// waitFor polls check until it succeeds, a child dies or the time is up.
func (cp *controlPlane) waitFor(t *testing.T, what string, limit time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil {
			return
		}
		if dead := cp.running(); dead != nil {
			t.Fatalf("waiting for %s: %v", what, dead)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v after %s", what, err, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubectl runs the pinned kubectl against the cluster with stdin, and returns its stdout
// and stderr; it fails the test when kubectl does.
func (cp *controlPlane) kubectl(t *testing.T, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := cp.kubectlErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return stdout, stderr
}

func (cp *controlPlane) kubectlErr(stdin string, args ...string) (string, string, error) {
	cmd := exec.Command(filepath.Join(cp.bin.kube, "kubectl"), args...)
	cmd.Env = cp.env()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// createNamespace creates a namespace and waits for its default ServiceAccount, without
// which the API server admits no pod there.
func (cp *controlPlane) createNamespace(t *testing.T, ns *corev1.Namespace) {
	t.Helper()
	ctx := context.Background()
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns.Name, err)
	}
	cp.waitFor(t, "the default ServiceAccount of "+ns.Name, 30*time.Second, func() error {
		_, err := cp.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// tailLogs shows the end of every child's log, for a failed run.
func (cp *controlPlane) tailLogs(t *testing.T) {
	for _, p := range cp.procs {
		t.Logf("--- last lines of %s:\n%s", p.name, lastLines(p.log, 8))
	}
}

// lastLines is the end of a file: its last n lines.
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastN(string(b), n)
}

// lastN is the last n lines of s.
func lastN(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpOK(url string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// writePKI makes the cluster's certificates: a CA; the API server's serving certificate
// for 127.0.0.1, localhost and its Service names; the admin's client certificate (group
// system:masters), which every component and the test use; and the service-account
// signing key pair. All ECDSA P-256, valid for a day.
func writePKI(dir string) error {
	newKey := func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }
	serial := func() *big.Int { n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)); return n }
	now := time.Now()
	writeKey := func(name string, k *ecdsa.PrivateKey) error {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	}
	writeCert := func(name string, der []byte) error {
		return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	}

	caKey, err := newKey()
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "sharenote-k8se2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert("ca.crt", caDER); err != nil {
		return err
	}

	leaf := func(name string, tmpl *x509.Certificate) error {
		k, err := newKey()
		if err != nil {
			return err
		}
		tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial(), now.Add(-time.Hour), now.Add(24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writeCert(name+".crt", der); err != nil {
			return err
		}
		return writeKey(name+".key", k)
	}
	// 10.96.0.1 is the first address of serviceCIDR, the API server's own Service: a name
	// in the certificate, never dialled.
	if err := leaf("apiserver", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}); err != nil {
		return err
	}
	if err := leaf("admin", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "sharenote-k8se2e-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return err
	}

	saKey, err := newKey()
	if err != nil {
		return err
	}
	if err := writeKey("sa.key", saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

// writeKubeconfig writes the admin's kubeconfig for server.
func writeKubeconfig(path, server, ca, cert, key string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: admin
current-context: e2e
`, server, ca, cert, key)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
