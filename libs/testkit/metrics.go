package testkit

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric is the value of the counter or gauge name gathered from g, summed over its
// series; the test fails when g has no such metric.
func Metric(t testing.TB, g prometheus.Gatherer, name string) float64 {
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
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
		return sum
	}
	t.Fatalf("no metric %s", name)
	return 0
}
