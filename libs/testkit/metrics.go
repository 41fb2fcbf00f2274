package testkit

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metric is the value of the counter or gauge name gathered from g, summed over its
// series that carry the labels given as name, value pairs (all of them, without any);
// the test fails when g has no such metric.
func Metric(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		var sum float64
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		return sum
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// hasLabels reports whether m carries every name, value pair of labels.
func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}
		if !found {
			return false
		}
	}
	return true
}
