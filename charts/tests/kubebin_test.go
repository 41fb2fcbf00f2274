package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKubebinPinsOneKubernetesRelease keeps kubebin/kubernetes/go.mod consistent:
// k8s.io/kubernetes v1.X.Y requires its staging modules at v0.0.0, and each must be
// replaced with the same release, v0.X.Y, or the binaries mix two releases' code.
func TestKubebinPinsOneKubernetesRelease(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("kubebin", "kubernetes", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := string(b)
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes v1\.(\d+\.\d+)(?:\s*// indirect)?\s*$`).FindStringSubmatch(gomod)
	if m == nil {
		t.Fatal("kubebin/kubernetes/go.mod requires no k8s.io/kubernetes v1.x.y")
	}
	want := "v0." + m[1]
	replaces := regexp.MustCompile(`(?m)^\s*(k8s\.io/[a-z0-9-]+) => (k8s\.io/[a-z0-9-]+) (v\S+)\s*$`).FindAllStringSubmatch(gomod, -1)
	if len(replaces) < 20 {
		t.Fatalf("%d staging replaces; k8s.io/kubernetes has about 30", len(replaces))
	}
	for _, r := range replaces {
		if r[1] != r[2] || r[3] != want {
			t.Errorf("replace %s => %s %s, want %s => %s %s", r[1], r[2], r[3], r[1], r[1], want)
		}
	}
	if strings.Contains(gomod, "sample-cli-plugin") || strings.Contains(gomod, "sample-controller") {
		t.Error("sample-cli-plugin and sample-controller are not requirements of k8s.io/kubernetes (and have no published release)")
	}
}
