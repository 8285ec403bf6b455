// Package tracing is payd's OpenTelemetry tracing: off unless an OTLP
// endpoint is configured, in which case spans go to it over OTLP/HTTP.
//
// Off means off: until Setup (or Use) installs a tracer, every function here
// returns at once, leaves the context as it was and allocates nothing, so the
// request path pays one atomic load per hook. Once on, payd makes spans for
// HTTP requests it serves (named by route template, never the raw path),
// for database statements and round trips, for calls to live providers and
// for webhook delivery attempts, and carries W3C traceparent in and out.
//
// What never goes into a span: API keys, card data, PINs, OTPs, request or
// response bodies, SQL bound values, URLs' paths and queries. Callers set
// attributes through Span's typed setters only with values they know to be
// safe (ids payd issued, statuses, counts).
package tracing

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name payd's tracer reports as its scope.
const instrumentation = "github.com/payd/payd"

// active is the tracer in use; nil while tracing is off.
var active atomic.Pointer[tracerState]

type tracerState struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// On reports whether spans are being made.
func On() bool { return active.Load() != nil }

// Use makes spans with tp from now on (nil turns tracing off) and returns a
// function that puts back what was in use before. Setup calls it; tests use
// it with an in-memory exporter's provider.
func Use(tp trace.TracerProvider) (restore func()) {
	var st *tracerState
	if tp != nil {
		st = &tracerState{tracer: tp.Tracer(instrumentation), prop: propagation.TraceContext{}}
	}
	old := active.Swap(st)
	return func() { active.Store(old) }
}

// Span is one span, or nothing while tracing is off: every method of the
// zero Span does nothing.
type Span struct{ s trace.Span }

// Recording reports whether s is a real span (tracing on, sampled).
func (s Span) Recording() bool { return s.s != nil && s.s.IsRecording() }

// SetString sets a string attribute. Only values known to hold no secret
// (ids payd issued, enum values) belong here.
func (s Span) SetString(key, value string) {
	if s.s != nil {
		s.s.SetAttributes(attribute.String(key, value))
	}
}

// SetInt sets an integer attribute.
func (s Span) SetInt(key string, value int) {
	if s.s != nil {
		s.s.SetAttributes(attribute.Int(key, value))
	}
}

// SetBool sets a boolean attribute.
func (s Span) SetBool(key string, value bool) {
	if s.s != nil {
		s.s.SetAttributes(attribute.Bool(key, value))
	}
}

// SetName renames the span (the server span learns its route only once the
// router has matched it).
func (s Span) SetName(name string) {
	if s.s != nil {
		s.s.SetName(name)
	}
}

// Fail marks the span as failed with a short description. The description
// must hold no secret; payd passes its own fixed texts, never an error from
// outside (which could quote a URL or a body).
func (s Span) Fail(description string) {
	if s.s != nil {
		s.s.SetStatus(codes.Error, description)
	}
}

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// TraceID is the span's trace id in hex, "" when there is none.
func (s Span) TraceID() string {
	if s.s == nil {
		return ""
	}
	sc := s.s.SpanContext()
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

// Start begins an internal span as a child of ctx's span.
func Start(ctx context.Context, name string) (context.Context, Span) {
	return start(ctx, name, trace.SpanKindInternal)
}

// StartClient begins a span for a call payd makes to another service; put
// its context into the outgoing request with Inject.
func StartClient(ctx context.Context, name string) (context.Context, Span) {
	return start(ctx, name, trace.SpanKindClient)
}

func start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, Span) {
	st := active.Load()
	if st == nil {
		return ctx, Span{}
	}
	ctx, sp := st.tracer.Start(ctx, name, trace.WithSpanKind(kind))
	return ctx, Span{sp}
}

// Inject writes ctx's span context into h as a W3C traceparent (and
// tracestate) header. While tracing is off it writes nothing.
func Inject(ctx context.Context, h http.Header) {
	st := active.Load()
	if st == nil {
		return
	}
	st.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// StartServer begins the span of a request payd serves, continuing the
// caller's trace when the request carries a valid traceparent. Its name is
// the method until EndServer names it by route.
func StartServer(ctx context.Context, r *http.Request) (context.Context, Span) {
	st := active.Load()
	if st == nil {
		return ctx, Span{}
	}
	ctx = st.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, sp := st.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
	return ctx, Span{sp}
}

// EndServer names the server span by its route template (pattern, as
// net/http.ServeMux matched it, "" when none did), records the status and
// ends it. A 5xx marks the span failed; a 4xx is the client's, not payd's.
func (s Span) EndServer(method, pattern string, status int) {
	if s.s == nil {
		return
	}
	route := pattern
	if i := strings.IndexByte(route, ' '); i >= 0 {
		route = route[i+1:] // "POST /v1/payment_intents" → "/v1/payment_intents"
	}
	if route == "" {
		s.s.SetName(method)
	} else {
		s.s.SetName(method + " " + route)
		s.s.SetAttributes(attribute.String("http.route", route))
	}
	s.s.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		s.s.SetStatus(codes.Error, http.StatusText(status))
	}
	s.s.End()
}

// dbSpanKey holds a database span begun by StartDB in the context its
// statement runs under.
type dbSpanKey struct{}

// StartDB begins the span of a database statement or round trip: system is
// "sqlite" or "postgresql", sql the statement (only its first keyword is
// kept: never its text, whose bound values are not in it but whose shape
// is not the operator's business either), statements how many the round
// trip carries (a pipelined batch). EndDB ends it.
func StartDB(ctx context.Context, system, sql string, statements int) context.Context {
	st := active.Load()
	if st == nil || !trace.SpanFromContext(ctx).SpanContext().IsValid() {
		// Off, or a statement outside any trace (a background loop's poll):
		// a root span per poll would only be noise.
		return ctx
	}
	op := Operation(sql)
	name := op
	if statements > 1 {
		name = "BATCH"
	}
	_, sp := st.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op)))
	if statements > 1 {
		sp.SetAttributes(attribute.Int("db.operation.batch.size", statements))
	}
	return context.WithValue(ctx, dbSpanKey{}, sp)
}

// EndDB ends the span StartDB put into ctx, if any, marking it failed when
// err is not nil (with the error's class only: a driver's message can quote
// a value).
func EndDB(ctx context.Context, err error) {
	if active.Load() == nil {
		return
	}
	sp, ok := ctx.Value(dbSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		sp.SetStatus(codes.Error, "statement failed")
	}
	sp.End()
}

// Operation is the first keyword of a SQL statement, upper-cased, from a
// fixed list (anything else is "OTHER"), so a span name never carries text
// of the statement and the names stay few.
func Operation(sql string) string {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	end := 0
	for end < len(sql) && end < 10 && (sql[end]|0x20 >= 'a' && sql[end]|0x20 <= 'z') {
		end++
	}
	word := sql[:end]
	for _, op := range operations {
		if strings.EqualFold(word, op) {
			return op
		}
	}
	return "OTHER"
}

var operations = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "BEGIN", "COMMIT", "ROLLBACK",
	"SAVEPOINT", "RELEASE", "PRAGMA", "CREATE", "ALTER", "DROP", "SET", "EXPLAIN", "ANALYZE", "VACUUM", "LOCK"}
