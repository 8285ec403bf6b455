// Package tracing is payd's OpenTelemetry tracing: off unless an OTLP
// endpoint is configured, in which case spans go to it over OTLP/HTTP.
//
// Off means off: until Setup (or Use) installs a tracer, every function here
// returns at once, leaves the context as it was and allocates nothing, so the
// request path pays one atomic load per hook. Once on, payd makes spans for
// HTTP requests it serves (named by route template, never the raw path),
// for each request's database work (one span, however many statements),
// for calls to live providers and for webhook delivery attempts (linked to
// the request that emitted the event), and carries W3C traceparent in and
// out.
//
// What never goes into a span: API keys, card data, PINs, OTPs, request or
// response bodies, SQL bound values, URLs' paths and queries. Callers set
// attributes through Span's typed setters only with values they know to be
// safe (ids payd issued, statuses, counts).
package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name payd's tracer reports as its scope.
const instrumentation = "github.com/payd/payd"

// active is the tracer in use; nil while tracing is off. Hooks read it only
// through load (active.go), which a build with the payd_notracing tag
// replaces by a constant nil (notracing.go), so that every hook compiles to
// its "off" branch.
var active atomic.Pointer[tracerState]

type tracerState struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// On reports whether spans are being made.
func On() bool { return load() != nil }

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
type Span struct {
	s trace.Span
	w *dbWork // a server span's database work (StartServer), else nil
}

// Recording reports whether s is a real span (tracing on, sampled).
func (s Span) Recording() bool { return s.s != nil && s.s.IsRecording() }

// SetString sets a string attribute. Only values known to hold no secret
// (ids payd issued, enum values) belong here.
func (s Span) SetString(key, value string) {
	if s.s != nil {
		s.set(attribute.String(key, value))
	}
}

// SetInt sets an integer attribute.
func (s Span) SetInt(key string, value int) {
	if s.s != nil {
		s.set(attribute.Int(key, value))
	}
}

// SetBool sets a boolean attribute.
func (s Span) SetBool(key string, value bool) {
	if s.s != nil {
		s.set(attribute.Bool(key, value))
	}
}

// set sets one attribute; a server span's are kept until EndServer sets
// them all in one call (each call to the SDK's SetAttributes takes the
// span's lock, may grow its slice and allocates its argument).
func (s Span) set(kv attribute.KeyValue) {
	if s.w != nil && s.w.attr(kv) {
		return
	}
	s.s.SetAttributes(kv)
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

// The start options payd's spans share, made once: a SpanStartOption built
// per span is an allocation, and so is the slice of a variadic call.
var (
	internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	clientKind   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	serverKind   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
)

func start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, Span) {
	st := load()
	if st == nil {
		return ctx, Span{}
	}
	opts := internalKind
	if kind == trace.SpanKindClient {
		opts = clientKind
	}
	ctx, sp := st.tracer.Start(ctx, name, opts...)
	return ctx, Span{s: sp}
}

// Inject writes ctx's span context into h as a W3C traceparent (and
// tracestate) header. While tracing is off it writes nothing.
func Inject(ctx context.Context, h http.Header) {
	st := load()
	if st == nil {
		return
	}
	st.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// StartServer begins the span of a request payd serves, continuing the
// caller's trace when the request carries a valid traceparent. Its name is
// the method until EndServer names it by route.
func StartServer(ctx context.Context, r *http.Request) (context.Context, Span) {
	st := load()
	if st == nil {
		return ctx, Span{}
	}
	// net/http gives header names canonical: without a Traceparent there
	// is nothing to extract (and no lookup's key to canonicalize).
	if _, ok := r.Header["Traceparent"]; ok {
		ctx = st.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ctx, sp := st.tracer.Start(ctx, r.Method, serverKind...)
	if !sp.IsRecording() {
		sp.SetAttributes(attribute.String("http.request.method", r.Method))
		return ctx, Span{s: sp}
	}
	w := &dbWork{parent: ctx}
	w.attrs[0] = attribute.String("http.request.method", r.Method)
	w.nattrs = 1
	return context.WithValue(ctx, dbWorkKey{}, w), Span{s: sp, w: w}
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
	switch {
	case route == "":
		s.s.SetName(method)
	case len(pattern) == len(method)+1+len(route) && pattern[:len(method)] == method:
		s.s.SetName(pattern) // the pattern is the name: no string to build
	default:
		s.s.SetName(method + " " + route)
	}
	if route != "" {
		s.set(attribute.String("http.route", route))
	}
	s.set(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		s.s.SetStatus(codes.Error, http.StatusText(status))
	}
	if s.w != nil {
		s.w.end(s.s)
	}
	s.s.End()
}

// dbSpanKey holds a database span begun by StartDB in the context its
// statement runs under.
type dbSpanKey struct{}

// dbWorkKey holds the *dbWork of the request whose span StartServer began.
type dbWorkKey struct{}

// dbWork is a request's database work, told as one span rather than one per
// statement (which cost more than the statements themselves on SQLite): it
// spans from the start of the request's first statement to the end of its
// last, as a child of the server span, with the statement and round-trip
// counts as attributes. EndServer makes it.
//
// It also holds the server span's attributes until EndServer sets them in
// one call, and the context of the server span (the database span's
// parent).
type dbWork struct {
	parent context.Context

	mu         sync.Mutex
	attrs      [8]attribute.KeyValue // the server span's, set by EndServer
	nattrs     int
	dbAttrs    [4]attribute.KeyValue
	done       bool
	system     string
	op         string // every statement's operation while they share one, else ""
	first      time.Time
	last       time.Time
	roundTrips int
	statements int
	failed     bool
}

// attr keeps one of the server span's attributes for EndServer; false when
// there is no room left or the span has ended (the caller then sets it on
// the span at once).
func (w *dbWork) attr(kv attribute.KeyValue) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.nattrs == len(w.attrs) {
		return false
	}
	w.attrs[w.nattrs] = kv
	w.nattrs++
	return true
}

// add counts one round trip of statements beginning now.
func (w *dbWork) add(system, op string, statements int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if w.roundTrips == 0 {
		w.system, w.op, w.first = system, op, time.Now() // only the first one's start is kept
	} else if w.op != op {
		w.op = ""
	}
	w.roundTrips++
	w.statements += statements
}

// finish records the end of a round trip.
func (w *dbWork) finish(err error) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.last = now
	if err != nil && !errors.Is(err, context.Canceled) {
		w.failed = true
	}
}

// end sets the server span's attributes on server and makes the database
// span below it, if the request made any statement; statements after it
// are not counted.
func (w *dbWork) end(server trace.Span) {
	w.mu.Lock()
	w.done = true
	server.SetAttributes(w.attrs[:w.nattrs]...)
	n, rt, op, system, first, last, failed := w.statements, w.roundTrips, w.op, w.system, w.first, w.last, w.failed
	w.mu.Unlock()
	st := load()
	if n == 0 || st == nil {
		return
	}
	if last.Before(first) {
		last = first
	}
	name := op // every statement's operation, else the system
	if name == "" {
		name = system
	}
	attrs := append(w.dbAttrs[:0], attribute.String("db.system.name", system), attribute.Int("payd.db.statements", n),
		attribute.Int("payd.db.round_trips", rt))
	if op != "" {
		attrs = append(attrs, attribute.String("db.operation.name", op))
	}
	_, sp := st.tracer.Start(w.parent, name, clientKind[0], trace.WithTimestamp(first))
	sp.SetAttributes(attrs...)
	if failed {
		sp.SetStatus(codes.Error, "statement failed")
	}
	sp.End(trace.WithTimestamp(last))
}

// StartDB begins the span of a database statement or round trip: system is
// "sqlite" or "postgresql", sql the statement (only its first keyword is
// kept: never its text, whose bound values are not in it but whose shape
// is not the operator's business either), statements how many the round
// trip carries (a pipelined batch). EndDB ends it. Under a request's span
// the statement is counted into the request's one database span instead.
func StartDB(ctx context.Context, system, sql string, statements int) context.Context {
	st := load()
	if st == nil {
		return ctx
	}
	if w, ok := ctx.Value(dbWorkKey{}).(*dbWork); ok {
		w.add(system, Operation(sql), statements)
		return ctx
	}
	if !trace.SpanFromContext(ctx).SpanContext().IsValid() {
		// A statement outside any trace (a background loop's poll): a
		// root span per poll would only be noise.
		return ctx
	}
	op := Operation(sql)
	name := op
	if statements > 1 {
		name = "BATCH"
	}
	_, sp := st.tracer.Start(ctx, name, clientKind...)
	if statements > 1 {
		sp.SetAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op),
			attribute.Int("db.operation.batch.size", statements))
	} else {
		sp.SetAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op))
	}
	return context.WithValue(ctx, dbSpanKey{}, sp)
}

// EndDB ends the span StartDB put into ctx, if any, marking it failed when
// err is not nil (with the error's class only: a driver's message can quote
// a value).
func EndDB(ctx context.Context, err error) {
	if load() == nil {
		return
	}
	if w, ok := ctx.Value(dbWorkKey{}).(*dbWork); ok {
		w.finish(err)
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

// Traceparent is the W3C traceparent of ctx's span, for storing with what a
// request makes (an event) so that later work can link to it: "" while
// tracing is off, outside a trace, or when the span is not sampled (a link
// to a span nobody keeps leads nowhere).
func Traceparent(ctx context.Context) string {
	if load() == nil {
		return ""
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	// "00-" trace id "-" span id "-" flags, written in place: one
	// allocation (the string) rather than one per part.
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// StartClientLinked is StartClient for work caused by an earlier request
// whose traceparent was stored (Traceparent): the span is the root of a
// trace of its own, with a link to that request's span. A malformed or
// empty traceparent makes no link.
func StartClientLinked(ctx context.Context, name, traceparent string) (context.Context, Span) {
	st := load()
	if st == nil {
		return ctx, Span{}
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	if traceparent != "" {
		from := trace.SpanContextFromContext(st.prop.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": traceparent}))
		if from.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: from,
				Attributes: []attribute.KeyValue{attribute.String("payd.link", "emitting_request")}}))
		}
	}
	ctx, sp := st.tracer.Start(ctx, name, opts...)
	return ctx, Span{s: sp}
}
