package tests

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestEdgeValuesSetTheEdgeVariables: edge.purgeURLs, edge.addresses and edge.maxAge
// become SHARE_EDGE_PURGE_URLS, SHARE_EDGE_ADDRESSES and SHARE_EDGE_MAX_AGE; unset, none
// is in the ConfigMap; purge URLs without addresses are refused (the binary would be).
func TestEdgeValuesSetTheEdgeVariables(t *testing.T) {
	r := render(t, renderCase{name: "edge", file: "values.yaml", set: map[string]any{
		"edge.purgeURLs": []any{"http://varnish-a:6081", "http://varnish-b:6081"}, "edge.addresses": []any{"10.42.7.0/24", "10.42.8.3"},
		"edge.maxAge": "2h"}})
	cm := one[corev1.ConfigMap](t, r, releaseName)
	if got := cm.Data["SHARE_EDGE_PURGE_URLS"]; got != "http://varnish-a:6081,http://varnish-b:6081" {
		t.Errorf("SHARE_EDGE_PURGE_URLS = %q", got)
	}
	if got := cm.Data["SHARE_EDGE_ADDRESSES"]; got != "10.42.7.0/24,10.42.8.3" {
		t.Errorf("SHARE_EDGE_ADDRESSES = %q", got)
	}
	if got := cm.Data["SHARE_EDGE_MAX_AGE"]; got != "2h" {
		t.Errorf("SHARE_EDGE_MAX_AGE = %q", got)
	}
	cm = one[corev1.ConfigMap](t, render(t, renderCase{name: "default", file: "values.yaml"}), releaseName)
	for _, k := range []string{"SHARE_EDGE_PURGE_URLS", "SHARE_EDGE_ADDRESSES", "SHARE_EDGE_MAX_AGE"} {
		if v, ok := cm.Data[k]; ok {
			t.Errorf("without an edge the ConfigMap sets %s=%q", k, v)
		}
	}
	without := renderCase{name: "edge-without-addresses", file: "values.yaml", set: map[string]any{"edge.purgeURLs": []any{"http://varnish-a:6081"}}}
	if _, err := renderErr(t, without.values(t)); err == nil || !strings.Contains(err.Error(), "addresses") {
		t.Errorf("edge.purgeURLs without edge.addresses: %v, want the schema's refusal", err)
	}
}
