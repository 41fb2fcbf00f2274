package telemetry_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sharenote/sharenote/libs/telemetry"
)

func TestTracingIsOffUnlessAnOTLPEndpointIsSet(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, false},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			if got := telemetry.TracingEnabled(getenv); got != c.want {
				t.Fatalf("TracingEnabled = %v, want %v", got, c.want)
			}
			tp, shutdown, err := telemetry.NewTracerProvider(context.Background(), "test", getenv)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = shutdown(context.Background()) }()
			_, isSDK := tp.(*sdktrace.TracerProvider)
			_, isNoop := tp.(noop.TracerProvider)
			if isSDK != c.want || isNoop == c.want {
				t.Errorf("provider %T, want an SDK provider: %v", tp, c.want)
			}
		})
	}
}
