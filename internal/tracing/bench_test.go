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
// counted into the request's database span, one event's traceparent):
//
//   - off: no tracer, as payd runs without an OTLP endpoint (in a build
//     with the payd_notracing tag, the same code with the hooks compiled
//     out);
//   - on: every request sampled, the spans batched and exported over
//     OTLP/HTTP to a receiver that discards, as bench/wrk/tracing.sh runs
//     payd (skipped in a payd_notracing build).
//
// allocs/op is exact; ns/op of "on" includes the exporter's goroutine only
// in part (its CPU shows in the process's CPU time).
func BenchmarkKeyedCreateSpans(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		restore := tracing.Use(nil)
		defer restore()
		keyedCreate(b, false)
	})
	b.Run("on", func(b *testing.B) {
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
		if !tracing.On() {
			b.Skip("tracing is not in this build")
		}
		keyedCreate(b, true)
	})
}

func keyedCreate(b *testing.B, on bool) {
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	statements := []string{"SELECT 1", "INSERT INTO a", "INSERT INTO b", "INSERT INTO c", "UPDATE d", "INSERT INTO e"}
	b.ReportAllocs()
	for b.Loop() {
		ctx, sp := tracing.StartServer(context.Background(), r)
		sp.SetString("payd.request_id", "req_0123456789abcdef")
		for _, q := range statements {
			dctx := tracing.StartDB(ctx, "sqlite", q, 1)
			tracing.EndDB(dctx, nil)
		}
		if (tracing.Traceparent(ctx) != "") != on {
			b.Fatal("a traceparent with tracing off, or none with it on")
		}
		sp.SetString("payd.merchant_id", "mer_0123456789abcdef")
		sp.SetBool("payd.livemode", false)
		sp.EndServer("POST", "POST /v1/payment_intents", 201)
	}
}
