//go:build !payd_notracing

package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/payd/payd/internal/tracing"
)

// BenchmarkKeyedCreateSpans drives the hooks one keyed create passes
// through (the server span with its attributes, six SQLite statements
// counted into the request's database span, one event's traceparent) with
// every request sampled and the spans batched and exported over OTLP/HTTP
// to a receiver that discards, as bench/wrk/tracing.sh runs payd.
// allocs/op is the figure to compare; ns/op includes the exporter's
// goroutine only in part.
func BenchmarkKeyedCreateSpans(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL))
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	restore := tracing.Use(tp)
	defer func() { restore(); tp.Shutdown(context.Background()) }()
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	statements := []string{"SELECT 1", "INSERT INTO a", "INSERT INTO b", "INSERT INTO c", "UPDATE d", "INSERT INTO e"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ctx, sp := tracing.StartServer(context.Background(), r)
		sp.SetString("payd.request_id", "req_0123456789abcdef")
		for _, q := range statements {
			dctx := tracing.StartDB(ctx, "sqlite", q, 1)
			tracing.EndDB(dctx, nil)
		}
		if tracing.Traceparent(ctx) == "" {
			b.Fatal("no traceparent")
		}
		sp.SetString("payd.merchant_id", "mer_0123456789abcdef")
		sp.SetBool("payd.livemode", false)
		sp.EndServer("POST", "POST /v1/payment_intents", 201)
	}
}
