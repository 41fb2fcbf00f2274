//go:build k8se2e

package tests

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The real-kubelet stage's nodes (`make k8s-e2e KUBELET=1`): each is Debian's containerd
// and runc with a kubelet of the pinned release, in a PID and mount namespace of its own
// whose init is containerd, inside the test's network namespace (loopback only). The
// kubelet names its node after its address, 127.0.0.1 or 127.0.0.2: both are loopback, so
// pods run with hostNetwork and listen there, and nothing ever dials a pod or Service CIDR.
//
// Killing containerd, the namespace's init, kills everything in it: the kubelet, the
// shims, every container; and its mounts (overlay root filesystems, volumes) go with the
// namespace, so a test killed outright leaves nothing running or mounted either (the
// namespace's init dies with `unshare --kill-child`, which dies with the test).

// kubeletTools are what the stage runs, from `make k8s-e2e KUBELET=1`.
type kubeletTools struct {
	kubelet    string // the kubelet of kubebin/kubernetes
	containerd string // directory of Debian's containerd, containerd-shim-runc-v2 and ctr
	runc       string // Debian's runc
	imageTar   string // the one image (services/Dockerfile FROM scratch), a docker-archive
	image      string // its reference in that archive, e.g. localhost/sharenote:v1.2.3
}

// kubeletToolsFromEnv reads the tools' paths; a machine that cannot run the stage gets
// one line saying why instead (kubelet_image.sh leaves it beside the image's archive,
// in <archive>.skip, when it cannot build the image).
func kubeletToolsFromEnv() (kubeletTools, string) {
	k := kubeletTools{os.Getenv("SHARE_KUBELET_BIN"), os.Getenv("SHARE_CONTAINERD_BIN"), os.Getenv("SHARE_RUNC_BIN"),
		os.Getenv("SHARE_KUBELET_IMAGE_TAR"), os.Getenv("SHARE_KUBELET_IMAGE")}
	if why, err := os.ReadFile(k.imageTar + ".skip"); k.imageTar != "" && err == nil {
		return k, strings.TrimSpace(string(why))
	}
	for _, v := range []struct{ name, path string }{{"SHARE_KUBELET_BIN", k.kubelet},
		{"SHARE_CONTAINERD_BIN", filepath.Join(k.containerd, "containerd")},
		{"SHARE_CONTAINERD_BIN", filepath.Join(k.containerd, "containerd-shim-runc-v2")},
		{"SHARE_CONTAINERD_BIN", filepath.Join(k.containerd, "ctr")},
		{"SHARE_RUNC_BIN", k.runc}, {"SHARE_KUBELET_IMAGE_TAR", k.imageTar}} {
		if _, err := os.Stat(v.path); v.path == "" || err != nil {
			return k, fmt.Sprintf("%s: %q is missing (`make k8s-e2e KUBELET=1` builds it, and fetches containerd and runc from Debian's archive with apt-get)", v.name, v.path)
		}
	}
	if k.image == "" {
		return k, "SHARE_KUBELET_IMAGE (the image's reference) is not set"
	}
	return k, ""
}

// kubeletPreflight says in one line why this machine cannot run the stage, or "".
func kubeletPreflight() string {
	if os.Geteuid() != 0 {
		return "it needs root (containerd, runc, the kubelet's mounts and cgroups)"
	}
	if !ownNetworkNamespace() {
		return "no network namespace of its own (unshare --net failed): its pods run only in one"
	}
	for _, cmd := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return cmd + " is not installed (util-linux, mount)"
		}
	}
	if out, err := exec.Command("unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private",
		"--mount-proc", "--", "mount", "-t", "tmpfs", "tmpfs", "/run").CombinedOutput(); err != nil {
		return fmt.Sprintf("no PID and mount namespace with its own /proc and /run: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := probeCgroups(); err != nil {
		return "runc cannot make cgroups here: " + err.Error()
	}
	// testkit starts them (initdb, postgres, redis-server), as it finds them.
	if pg, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(pg) == 0 {
		if _, err := exec.LookPath("initdb"); err != nil {
			return "no Postgres server binaries (apt-get install postgresql)"
		}
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "redis-server is not installed (apt-get install redis-server)"
	}
	return ""
}

// kubeletNode is one node: containerd (the init of a PID and mount namespace) and a
// kubelet entered into that namespace, with their state under dir.
type kubeletNode struct {
	ip      string // the node's name and its only address
	dir     string
	sock    string // containerd's socket
	ctrBin  string
	init    *process
	nsPid   int // containerd's PID (outside its namespace)
	kubelet *process
}

// sysctlDefaults are the kernel settings the kubelet insists on (and would write, for the
// whole machine): each node's mount namespace shows it these values in files bound over
// /proc/sys, so that this shared machine's settings stay as they are.
var sysctlDefaults = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// startKubeletNodes starts one node per address, imports the images into each, and
// returns once every node is Ready. Their namespaces are killed and their cgroups removed
// when the control plane stops, first.
func startKubeletNodes(t *testing.T, cp *controlPlane, tools kubeletTools, ips []string) []*kubeletNode {
	t.Helper()
	pause := buildPauseImage(t, cp.dir)
	var nodes []*kubeletNode
	cp.onStop(func() { stopKubeletNodes(t, nodes) })
	for _, ip := range ips {
		n := &kubeletNode{ip: ip, dir: filepath.Join(cp.dir, "node-"+ip), ctrBin: filepath.Join(tools.containerd, "ctr")}
		nodes = append(nodes, n)
		n.start(t, cp, tools)
		for _, img := range []string{pause, tools.imageTar} {
			n.ctr(t, "images", "import", "--snapshotter", snapshotter(), img)
		}
		n.startKubelet(t, cp, tools)
	}
	ctx := context.Background()
	for _, n := range nodes {
		cp.waitFor(t, "node "+n.ip+" Ready", 120*time.Second, func() error {
			node, err := cp.Client.CoreV1().Nodes().Get(ctx, n.ip, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					return fmt.Errorf("%s: %s", c.Reason, c.Message)
				}
			}
			return errors.New("no Ready condition yet")
		})
	}
	return nodes
}

// snapshotter is containerd's: overlayfs where the kernel has it.
func snapshotter() string {
	if b, err := os.ReadFile("/proc/filesystems"); err == nil && bytes.Contains(b, []byte("\toverlay\n")) {
		return "overlayfs"
	}
	return "native"
}

// pauseImage is the sandbox image every node's containerd runs first in each pod.
const pauseImage = "sharenote.local/pause:1"

// start writes containerd's configuration and starts it as the init of a new PID and
// mount namespace, with a tmpfs on /run and /var/log (its shims' sockets, the kubelet's
// log links) and the kernel settings of sysctlDefaults.
func (n *kubeletNode) start(t *testing.T, cp *controlPlane, tools kubeletTools) {
	t.Helper()
	cniConf := filepath.Join(n.dir, "cni", "conf")
	for _, d := range []string{cniConf, filepath.Join(n.dir, "cni", "bin"), filepath.Join(n.dir, "sysctl"), filepath.Join(n.dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The kubelet reports the node Ready only once the runtime's network is: containerd's
	// CRI says so when it has loaded a CNI configuration. Every pod here is on the host's
	// network, so no plugin ever runs.
	writeFile(t, filepath.Join(cniConf, "10-host-network-only.conflist"),
		`{"cniVersion": "1.0.0", "name": "host-network-only", "plugins": [{"type": "loopback"}]}`+"\n")
	n.sock = filepath.Join(n.dir, "containerd.sock")
	config := filepath.Join(n.dir, "containerd.toml")
	writeFile(t, config, fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# Snapshotters that would probe the kernel (aufs loads a module) or are of no use here.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %[3]q
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  disable_apparmor = true
  # Not below containerd's own: the sandbox's -998 needs CAP_SYS_RESOURCE, which this
  # machine's root may lack (runc's init then dies: "can't get final child's PID").
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = %[6]q
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %[7]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
`, filepath.Join(n.dir, "containerd"), filepath.Join(n.dir, "state"), n.sock, filepath.Join(n.dir, "opt"), pauseImage,
		snapshotter(), tools.runc, filepath.Join(n.dir, "cni", "bin"), cniConf))

	var script strings.Builder
	script.WriteString("set -e\nmount -t tmpfs -o mode=0755 tmpfs /run\nmount -t tmpfs -o mode=0755 tmpfs /var/log\n")
	keys := make([]string, 0, len(sysctlDefaults))
	for k := range sysctlDefaults {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := filepath.Join(n.dir, "sysctl", strings.ReplaceAll(k, "/", "."))
		writeFile(t, f, sysctlDefaults[k]+"\n")
		fmt.Fprintf(&script, "mount --bind %q /proc/sys/%s\n", f, k)
	}
	// The shims are found on PATH.
	fmt.Fprintf(&script, "export PATH=%q:\"$PATH\" TMPDIR=%q\nexec containerd --config %q\n",
		tools.containerd, filepath.Join(n.dir, "tmp"), config)
	n.init = cp.start(t, "containerd-"+n.ip, "unshare", "--pid", "--fork", "--kill-child", "--mount",
		"--propagation", "private", "--mount-proc", "--", "/bin/sh", "-c", script.String())
	cp.waitFor(t, "containerd of "+n.ip, 30*time.Second, func() error {
		if n.nsPid == 0 {
			children := childrenOf(n.init.cmd.Process.Pid)
			if len(children) == 0 {
				return errors.New("unshare has not forked yet")
			}
			n.nsPid = children[0]
		}
		_, err := n.ctrErr("version")
		return err
	})
}

// startKubelet writes the kubelet's configuration and starts it in the node's namespaces.
func (n *kubeletNode) startKubelet(t *testing.T, cp *controlPlane, tools kubeletTools) {
	t.Helper()
	config := filepath.Join(n.dir, "kubelet.yaml")
	writeFile(t, config, fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 is deprecated, not gone; this machine has it (with v2 beside it, hybrid).
failCgroupV1: false
cgroupDriver: cgroupfs
# No QoS cgroups and no node-allocatable enforcement: the kubelet makes no cgroup, and
# runc makes each container's as containerd names it, /k8s.io/<container ID>.
cgroupsPerQOS: false
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
port: %[3]d
readOnlyPort: 0
healthzBindAddress: %[2]s
healthzPort: %[4]d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %[5]q
authorization:
  mode: AlwaysAllow
# No cluster DNS and no host resolver: every address the pods use is an IP.
clusterDNS: []
resolvConf: ""
podLogsDir: %[6]q
failSwapOn: false
# Nothing here should pressure the shared machine's nodes out of their pods.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
`, n.sock, n.ip, freePort(t), freePort(t), filepath.Join(cp.dir, "pki", "ca.crt"), filepath.Join(n.dir, "pods")))
	n.kubelet = cp.start(t, "kubelet-"+n.ip, "nsenter", "--target", strconv.Itoa(n.nsPid), "--mount", "--pid", "--",
		tools.kubelet, "--config", config, "--kubeconfig", cp.Kubeconfig, "--root-dir", filepath.Join(n.dir, "kubelet"),
		// An IP as the node's name is also its address: the kubelet takes a loopback
		// address from here, where --node-ip refuses one.
		"--hostname-override", n.ip, "--v", "1")
}

// ctr runs containerd's client against the node.
func (n *kubeletNode) ctr(t *testing.T, args ...string) string {
	t.Helper()
	out, err := n.ctrErr(args...)
	if err != nil {
		t.Fatalf("ctr %s on %s: %v", strings.Join(args, " "), n.ip, err)
	}
	return out
}

func (n *kubeletNode) ctrErr(args ...string) (string, error) {
	cmd := exec.Command(n.ctrBin, append([]string{"--address", n.sock, "--namespace", "k8s.io"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// stopKubeletNodes kills each node's namespace (its init, containerd, with SIGKILL: the
// kernel then kills the kubelet, the shims and every container in it, and its mounts go
// with it), waits for their processes, and removes the containers' cgroups.
func stopKubeletNodes(t *testing.T, nodes []*kubeletNode) {
	for _, n := range nodes {
		if n.nsPid != 0 {
			_ = syscall.Kill(n.nsPid, syscall.SIGKILL)
		} else if n.init != nil {
			_ = n.init.cmd.Process.Kill()
		}
	}
	for _, n := range nodes {
		for _, p := range []*process{n.kubelet, n.init} {
			if p == nil {
				continue
			}
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				t.Errorf("%s still runs 30 s after its namespace was killed", p.name)
			}
		}
		if err := removeContainerCgroups(n.dir); err != nil {
			t.Errorf("remove the cgroups of %s's containers: %v", n.ip, err)
		}
	}
}

// runcCgroupParent is where runc makes each container's cgroup, in every hierarchy: the
// CRI's containerd namespace, as the kubelet passes no cgroup parent without QoS cgroups.
const runcCgroupParent = "k8s.io"

// removeContainerCgroups removes the cgroups of the containers of the node whose files are
// under dir, once they are dead: runc removes a container's cgroup when the container is
// deleted, but the containers of a killed namespace leave theirs (empty). Their IDs are
// the task directories in containerd's state directory.
func removeContainerCgroups(dir string) error {
	tasks, err := os.ReadDir(filepath.Join(dir, "state", "io.containerd.runtime.v2.task", "k8s.io"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range mounts {
		for _, task := range tasks {
			cg := filepath.Join(m, runcCgroupParent, task.Name())
			var err error
			// The cgroup of a process just killed can stay busy for a moment.
			for range 50 {
				if err = syscall.Rmdir(cg); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", cg, err))
			}
		}
		// The parent too, when nothing else is in it (another containerd's CRI would
		// make it again).
		_ = syscall.Rmdir(filepath.Join(m, runcCgroupParent))
	}
	return errors.Join(errs...)
}

// sweepStaleContainerCgroups removes the container cgroups of earlier runs that were
// killed outright (their files are about to be swept by startCluster).
func sweepStaleContainerCgroups() {
	for _, d := range staleDirs() {
		nodes, _ := filepath.Glob(filepath.Join(d, "node-*"))
		for _, n := range nodes {
			_ = removeContainerCgroups(n)
		}
	}
}

// probeCgroups makes and removes a cgroup in every hierarchy, as runc will.
func probeCgroups() error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		dir := filepath.Join(m, "sharenote-kubelet-probe-"+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if err := syscall.Rmdir(dir); err != nil {
			return err
		}
	}
	return nil
}

// cgroupMounts are the mount points of the machine's cgroup hierarchies (v1 and v2).
func cgroupMounts() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		// … mount-point … - fstype source options
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fstype := strings.Fields(post)[0]
		f := strings.Fields(pre)
		if (fstype == "cgroup" || fstype == "cgroup2") && len(f) > 4 && !slices.Contains(out, f[4]) {
			out = append(out, f[4])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return out, nil
}

// buildPauseImage builds testdata/kubelet/pause (the standard library only: no module is
// fetched) and packs it into a docker-archive as pauseImage; it returns the archive.
func buildPauseImage(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./testdata/kubelet/pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the pause command: %v\n%s", err, out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "pause.tar")
	if err := writeImageArchive(archive, pauseImage, map[string][]byte{"pause": exe}, []string{"/pause"}); err != nil {
		t.Fatal(err)
	}
	return archive
}

// writeImageArchive writes a docker-archive (`docker save` format, which `ctr images
// import` reads) of a one-layer image of executable files with an entrypoint.
func writeImageArchive(path, ref string, files map[string][]byte, entrypoint []string) error {
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := lw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := lw.Write(files[name]); err != nil {
			return err
		}
	}
	if err := lw.Close(); err != nil {
		return err
	}
	diff := sha256.Sum256(layer.Bytes())
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": entrypoint},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(diff[:])}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{ref}, "Layers": []string{"layer.tar"}}})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	w := tar.NewWriter(&out)
	for _, f := range []struct {
		name string
		data []byte
	}{{"manifest.json", manifest}, {"config.json", config}, {"layer.tar", layer.Bytes()}} {
		if err := w.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
