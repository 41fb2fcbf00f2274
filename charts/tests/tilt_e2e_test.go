//go:build k8se2e

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tiltCITimeout bounds `tilt ci`: under kwok it takes seconds once Go's build cache holds
// the binary, about two minutes on two cores when it compiles the binary from scratch.
const tiltCITimeout = 10 * time.Minute

// tiltCI is k8s-e2e's Tilt stage: `tilt ci -f tilt/Tiltfile -- --builder=podman` on the
// throw-away cluster, as a developer runs `tilt up` on theirs, until Tilt finds every
// resource ready. Tilt compiles the binary with Go, podman builds the dev image on the base
// made from the host's static busybox (no registry: the stage runs in the test's network
// namespace), Tilt renders k8s/ and the chart (kubectl kustomize, helm template), applies
// them with the image it built, and kwok makes the pods Ready and the Jobs complete. The
// test then checks the cluster itself. Nothing runs in the pods, so live update is not
// exercised here (dev-entrypoint.sh has its own test in tiltfile_test.go), and under
// `tilt ci` the Tiltfile forwards no ports.
//
// It needs SHARE_TILT_BIN (make k8s-e2e passes a tilt from PATH or `make tilt`'s, and
// without one says so itself and leaves this subtest out), the helm CLI Tilt's helm() runs
// (SHARE_HELM_BIN, or helm on PATH), podman with runc (podman-build.sh runs podman as
// .ci/podman-builder.sh sets it up) and a static busybox; without one of them it says so
// and skips. It returns what the summary line says of the stage.
func tiltCI(t *testing.T, cp *controlPlane) string {
	tilt := os.Getenv("SHARE_TILT_BIN")
	if tilt == "" {
		t.Skip("no tilt binary (SHARE_TILT_BIN): skipping the Tilt stage")
	}
	helm := os.Getenv("SHARE_HELM_BIN")
	if helm == "" {
		if helm, _ = exec.LookPath("helm"); helm == "" {
			t.Skip("no helm CLI (SHARE_HELM_BIN, which make k8s-e2e sets): skipping the Tilt stage")
		}
	}
	for _, need := range []string{"podman", "runc", "busybox", "go"} {
		if _, err := exec.LookPath(need); err != nil {
			t.Skipf("no %s on PATH (apt-get install podman runc busybox-static): skipping the Tilt stage", need)
		}
	}
	root := repoRoot(t)
	dir := t.TempDir()

	// The cluster's kubeconfig with the context name the Tiltfile allows.
	kcfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kctx := kcfg.Contexts[kcfg.CurrentContext]
	kcfg.Contexts = map[string]*clientcmdapi.Context{tiltE2EContext: kctx}
	kcfg.CurrentContext = tiltE2EContext
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kcfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// PATH: the pinned kubectl (Tilt's kustomize() runs `kubectl kustomize`) and helm, and a
	// stand-in `yarn`. A Tilt built from source serves its web UI from source: it runs
	// `yarn install` (which would download packages) and `yarn run start`, and stops with an
	// error when the first fails. `tilt ci` needs no UI; the stand-in succeeds at once, and
	// Tilt waits on the dev server's stdin pipe, never closed, rather than on the exit.
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"kubectl": filepath.Join(cp.bin.kube, "kubectl"), "helm": helm} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "yarn"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + filepath.Join(dir, "home"), // Tilt's ~/.tilt-dev, helm's and kubectl's caches
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"KUBECONFIG=" + kubeconfig,
		"TMPDIR=" + os.TempDir(),
		// No usage statistics (the Tiltfile says so too), and Tilt's account check, which
		// would ask cloud.tilt.dev, asks a closed port on loopback.
		"TILT_DISABLE_ANALYTICS=1", "DO_NOT_TRACK=1", "TILT_CLOUD_ADDRESS=127.0.0.1:1",
	}
	// Go's settings stay the developer's (HOME changes above); GOPROXY=off: make k8s-e2e
	// downloads the modules before the sandbox, so a missing one fails at once.
	goEnv, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var goVars map[string]string
	if err := json.Unmarshal(goEnv, &goVars); err != nil {
		t.Fatalf("go env -json: %v", err)
	}
	for k, v := range goVars {
		env = append(env, k+"="+v)
	}
	env = append(env, "GOPROXY=off")

	logPath := filepath.Join(dir, "tilt.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	args := []string{"ci", "-f", filepath.Join(root, "tilt", "Tiltfile"), "--port", strconv.Itoa(freePort(t)),
		"--timeout", tiltCITimeout.String(), "--", "--builder=podman"}
	cmd := exec.Command(tilt, args...)
	cmd.Dir, cmd.Env = root, env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	err = cmd.Run()
	took := time.Since(began).Round(100 * time.Millisecond)
	if err != nil {
		t.Fatalf("tilt %s: %v after %s; its output ends:\n%s", strings.Join(args, " "), err, took, lastLines(logPath, 60))
	}
	if out, _ := os.ReadFile(logPath); !strings.Contains(string(out), "SUCCESS. All workloads are healthy.") {
		t.Errorf("tilt ci exited 0 without its success line; its output ends:\n%s", lastLines(logPath, 30))
	}

	// The cluster as Tilt left it: every pod template of the dev release runs the one image
	// Tilt built (which podman holds), and every workload in the namespace is ready.
	repo := render(t, renderCase{name: "dev", file: "values-dev.yaml"}).str("image.repository")
	built, err := tiltImages(cp, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 1 || !strings.Contains(built[0], ":tilt-") {
		t.Fatalf("the dev release runs %v, want the one %s image Tilt built (tag tilt-…)", built, repo)
	}
	if err := exec.Command("podman", "image", "exists", built[0]).Run(); err != nil {
		t.Errorf("podman holds no %s: %v", built[0], err)
	}
	// Each run builds a new tag; the base image stays for the next run.
	defer func() { _ = exec.Command("podman", "rmi", "-f", built[0]).Run() }()
	var ready string
	cp.waitFor(t, "every workload of "+devNamespace+" ready", time.Minute, func() error {
		ready, err = devWorkloadsReady(cp)
		return err
	})
	t.Logf("tilt ci ok in %s: %s, with %s (podman, on the base of the host's busybox)", took, ready, built[0])
	return "passed in " + took.String()
}

// tiltImages returns the images of repo that the Deployments, Jobs and CronJobs of the
// dev namespace run, and fails unless there is one such pod template per target, plus the
// migration and the reaper.
func tiltImages(cp *controlPlane, repo string) ([]string, error) {
	ctx := context.Background()
	var templates []corev1.PodSpec
	deps, err := cp.Client.AppsV1().Deployments(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range deps.Items {
		templates = append(templates, d.Spec.Template.Spec)
	}
	jobs, err := cp.Client.BatchV1().Jobs(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, j := range jobs.Items {
		// The reaper's runs (the CronJob's Jobs, every two minutes) count as the CronJob.
		if metav1.GetControllerOf(&j) == nil {
			templates = append(templates, j.Spec.Template.Spec)
		}
	}
	crons, err := cp.Client.BatchV1().CronJobs(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, c := range crons.Items {
		templates = append(templates, c.Spec.JobTemplate.Spec.Template.Spec)
	}
	var images []string
	running := 0
	for _, spec := range templates {
		for _, c := range spec.Containers {
			if imageRepository(c.Image) != repo {
				continue
			}
			running++
			if !slices.Contains(images, c.Image) {
				images = append(images, c.Image)
			}
		}
	}
	if want := len(routes.Targets) + 2; running != want {
		return images, fmt.Errorf("%d pod templates in %s run %s, want %d (the targets, the migration, the reaper)", running, devNamespace, repo, want)
	}
	return images, nil
}

// devWorkloadsReady reports whether every Deployment and StatefulSet in the dev namespace
// has all its replicas ready (the API server sets spec.replicas when it is left out) and
// every Job has succeeded, and counts them.
func devWorkloadsReady(cp *controlPlane) (string, error) {
	ctx := context.Background()
	deps, err := cp.Client.AppsV1().Deployments(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, d := range deps.Items {
		if want := *d.Spec.Replicas; d.Status.ReadyReplicas != want || d.Status.UpdatedReplicas != want {
			return "", fmt.Errorf("Deployment %s: %d of %d replicas ready and updated", d.Name, d.Status.ReadyReplicas, want)
		}
	}
	sets, err := cp.Client.AppsV1().StatefulSets(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, s := range sets.Items {
		if want := *s.Spec.Replicas; s.Status.ReadyReplicas != want {
			return "", fmt.Errorf("StatefulSet %s: %d of %d replicas ready", s.Name, s.Status.ReadyReplicas, want)
		}
	}
	jobs, err := cp.Client.BatchV1().Jobs(devNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, j := range jobs.Items {
		if j.Status.Succeeded < 1 {
			return "", fmt.Errorf("Job %s has not succeeded", j.Name)
		}
	}
	return fmt.Sprintf("%d Deployments and %d StatefulSets ready, %d Jobs complete", len(deps.Items), len(sets.Items), len(jobs.Items)), nil
}
