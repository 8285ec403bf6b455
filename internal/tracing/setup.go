//go:build !payd_notracing

package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Setup turns tracing on: spans are batched and sent over OTLP/HTTP
// (protobuf) to the endpoint the standard variables name. The OpenTelemetry
// SDK reads those variables itself: OTEL_EXPORTER_OTLP_ENDPOINT (or
// _TRACES_ENDPOINT), _HEADERS, _TIMEOUT, _COMPRESSION and the TLS
// certificate variables for the exporter; OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG for sampling (default: parentbased_always_on);
// OTEL_BSP_* for the batch processor; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES for the resource (service.name defaults to
// "payd"). Export failures are logged to log at warn level, never fatal.
//
// The returned shutdown flushes what is buffered and turns tracing off.
func Setup(ctx context.Context, log *slog.Logger, version string) (shutdown func(context.Context) error, err error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "payd")}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override payd's defaults.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("tracing: could not export spans", "err", err)
		}))
	}
	// Libraries that trace through the global API join payd's traces.
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	restore := Use(tp)
	return func(ctx context.Context) error {
		restore()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return tp.Shutdown(ctx)
	}, nil
}
