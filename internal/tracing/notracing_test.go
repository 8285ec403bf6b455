//go:build payd_notracing

package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/payd/payd/internal/tracing"
)

// TestNoTracingHooksAreInert: in a build with the payd_notracing tag, even a
// tracer provider installed with Use makes no span: every hook leaves the
// context alone, writes no header, allocates nothing, and the exporter
// behind the provider receives nothing.
func TestNoTracingHooksAreInert(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	restore := tracing.Use(tp)
	defer func() { restore(); tp.Shutdown(context.Background()) }()
	if tracing.On() {
		t.Fatal("On() with tracing left out of the build")
	}
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h := http.Header{}
	ctx := context.Background()
	// A sampled span context, as a caller's trace would give: Traceparent
	// must still say nothing.
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled})
	parent := trace.ContextWithSpanContext(ctx, sc)
	allocs := testing.AllocsPerRun(100, func() {
		sctx, sp := tracing.StartServer(ctx, r)
		sp.SetString("payd.request_id", "req_1")
		dctx := tracing.StartDB(sctx, "sqlite", "INSERT INTO x VALUES (?)", 1)
		tracing.EndDB(dctx, nil)
		ictx, isp := tracing.Start(sctx, "internal")
		isp.End()
		cctx, csp := tracing.StartClient(sctx, "provider initiate")
		tracing.Inject(cctx, h)
		csp.SetInt("http.response.status_code", 200)
		csp.End()
		lctx, lsp := tracing.StartClientLinked(ctx, "webhook delivery", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		lsp.End()
		if sp.Recording() || sp.TraceID() != "" || tracing.Traceparent(parent) != "" {
			t.Fatal("a span in a build without tracing")
		}
		sp.EndServer("POST", "POST /v1/payment_intents", 201)
		if sctx != ctx || dctx != ctx || ictx != ctx || cctx != ctx || lctx != ctx {
			t.Fatal("a hook changed the context")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
	if len(h) != 0 {
		t.Fatalf("Inject wrote %v", h)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans exported, want none", n)
	}
}

// TestNoTracingSetupSaysSo: with an OTLP endpoint configured, Setup in a
// build without tracing logs that tracing is not in this build, turns
// nothing on and sends nothing to the endpoint.
func TestNoTracingSetupSaysSo(t *testing.T) {
	var requests atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer sink.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	if !tracing.Enabled(func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return sink.URL
		}
		return ""
	}) {
		t.Fatal("Enabled ignores the endpoint: the configuration should still ask, and Setup say no")
	}
	var logged bytes.Buffer
	shutdown, err := tracing.Setup(context.Background(), slog.New(slog.NewTextHandler(&logged, nil)), "v1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "not in this build") {
		t.Fatalf("Setup logged %q", logged.String())
	}
	if tracing.On() {
		t.Fatal("Setup turned tracing on")
	}
	_, sp := tracing.Start(context.Background(), "probe-span")
	sp.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the OTLP endpoint", n)
	}
}
