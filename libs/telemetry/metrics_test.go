package telemetry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/telemetry"
)

// requestsByMethod sums sharenote_http_requests_total in reg by its method label.
func requestsByMethod(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "sharenote_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "method" {
					got[lp.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return got
}

func TestMadeUpMethodsShareOneLabelValue(t *testing.T) {
	gin.SetMode(gin.TestMode)
	reg := prometheus.NewRegistry()
	r := gin.New()
	r.Use(telemetry.NewHTTPMetrics(reg).Middleware())
	ok := func(c *gin.Context) { c.Status(http.StatusNoContent) }
	r.GET("/x", ok)
	r.Handle("PROPFIND", "/x", ok) // Even a routed non-standard method must not get its own value.

	serve := func(method string) {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/x", nil))
	}
	standard := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}
	for _, m := range standard {
		serve(m)
	}
	madeUp := []string{"PROPFIND", "get", "BREW", "CONNECT", "TRACE"}
	for i := range 200 {
		madeUp = append(madeUp, fmt.Sprintf("X%d", i))
	}
	for _, m := range madeUp {
		serve(m)
	}

	want := map[string]float64{"OTHER": float64(len(madeUp))}
	for _, m := range standard {
		want[m] = 1
	}
	got := requestsByMethod(t, reg)
	if len(got) != len(want) {
		t.Fatalf("method label values %v, want exactly %v", got, want)
	}
	for m, n := range want {
		if got[m] != n {
			t.Errorf("method=%q counted %v requests, want %v (all values: %v)", m, got[m], n, got)
		}
	}
}

func TestMetricsAllocateNothingPerRequestOnceASeriesExists(t *testing.T) {
	m := telemetry.NewHTTPMetrics(prometheus.NewRegistry())
	if with, without := allocsPerRequest(m.Middleware()); with != without {
		t.Errorf("with the metrics middleware a request allocates %v times, %v without it", with, without)
	}
}
