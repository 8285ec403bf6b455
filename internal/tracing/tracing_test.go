//go:build !payd_notracing

package tracing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/payd/payd/internal/tracing"
)

// inMemory turns tracing on with an in-memory exporter for the test.
func inMemory(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	restore := tracing.Use(tp)
	t.Cleanup(func() { restore(); tp.Shutdown(context.Background()) })
	return exp
}

// TestOffCostsNoAllocation: with tracing off, every hook on the request path
// leaves the context alone and allocates nothing.
func TestOffCostsNoAllocation(t *testing.T) {
	restore := tracing.Use(nil)
	defer restore()
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h := http.Header{}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		sctx, sp := tracing.StartServer(ctx, r)
		sp.SetString("payd.request_id", "req_1")
		dctx := tracing.StartDB(sctx, "sqlite", "INSERT INTO x VALUES (?)", 1)
		tracing.EndDB(dctx, nil)
		cctx, csp := tracing.StartClient(sctx, "provider initiate")
		tracing.Inject(cctx, h)
		csp.SetInt("http.response.status_code", 200)
		csp.End()
		sp.EndServer("POST", "POST /v1/payment_intents", 201)
		if sctx != ctx || dctx != ctx || cctx != ctx {
			t.Fatal("tracing off changed the context")
		}
	})
	if allocs != 0 {
		t.Fatalf("tracing off: %v allocations per request, want 0", allocs)
	}
	if len(h) != 0 {
		t.Fatalf("tracing off injected %v", h)
	}
}

// TestServerSpanContinuesTheCallersTrace: an incoming traceparent is the
// server span's parent, the span is named by route template, and a client
// span below it carries the same trace out in traceparent.
func TestServerSpanContinuesTheCallersTrace(t *testing.T) {
	exp := inMemory(t)
	const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := httptest.NewRequest("GET", "/v1/payment_intents/pi_secretlooking", nil)
	r.Header.Set("Traceparent", incoming)
	ctx, sp := tracing.StartServer(context.Background(), r)
	cctx, csp := tracing.StartClient(ctx, "webhook delivery")
	h := http.Header{}
	tracing.Inject(cctx, h)
	csp.End()
	sp.EndServer("GET", "GET /v1/payment_intents/{id}", 404)

	got := h.Get("Traceparent")
	if !strings.HasPrefix(got, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || got == incoming {
		t.Fatalf("outgoing traceparent %q does not continue %q with a span of its own", got, incoming)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	server := spans[1]
	if server.Name != "GET /v1/payment_intents/{id}" || server.SpanKind != trace.SpanKindServer {
		t.Fatalf("server span %q kind %v", server.Name, server.SpanKind)
	}
	if server.Parent.SpanID().String() != "00f067aa0ba902b7" || !server.Parent.IsRemote() {
		t.Fatalf("server span's parent %v, want the caller's span", server.Parent)
	}
	if spans[0].Parent.SpanID() != server.SpanContext.SpanID() {
		t.Fatal("the client span is not the server span's child")
	}
	for _, kv := range server.Attributes {
		if strings.Contains(kv.Value.Emit(), "pi_secretlooking") {
			t.Fatalf("the raw path is in attribute %s", kv.Key)
		}
	}
	if !slices.ContainsFunc(server.Attributes, func(kv attribute.KeyValue) bool {
		return string(kv.Key) == "http.route" && kv.Value.AsString() == "/v1/payment_intents/{id}"
	}) {
		t.Fatalf("no http.route in %v", server.Attributes)
	}
}

// TestDBSpansOnlyInsideATrace: a statement run under a request's span gets a
// child span named by its operation, never its text; one outside any trace
// (a background poll) gets none.
func TestDBSpansOnlyInsideATrace(t *testing.T) {
	exp := inMemory(t)
	tracing.EndDB(tracing.StartDB(context.Background(), "sqlite", "SELECT 1", 1), nil)
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("a statement outside a trace made %d spans", n)
	}
	ctx, sp := tracing.Start(context.Background(), "job")
	tracing.EndDB(tracing.StartDB(ctx, "postgresql", "BEGIN; INSERT INTO payment_intents (id) VALUES ('pi_literal')", 3), nil)
	sp.End()
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "BATCH" {
		t.Fatalf("spans %v", spans)
	}
	for _, kv := range spans[0].Attributes {
		if strings.Contains(kv.Value.Emit(), "pi_literal") || strings.Contains(kv.Value.Emit(), "payment_intents") {
			t.Fatalf("statement text in %s", kv.Key)
		}
	}
}

// TestRequestDBWorkIsOneSpan: the statements a request makes are told as
// one database span below its server span, from the first statement's
// start to the last's end, with their counts; a failed statement fails it.
func TestRequestDBWorkIsOneSpan(t *testing.T) {
	exp := inMemory(t)
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	ctx, sp := tracing.StartServer(context.Background(), r)
	for _, q := range []string{"INSERT INTO a VALUES (1)", "INSERT INTO b VALUES (2)", "insert into c values (3)"} {
		tracing.EndDB(tracing.StartDB(ctx, "sqlite", q, 1), nil)
	}
	sp.EndServer("POST", "POST /v1/payment_intents", 201)
	ctx2, sp2 := tracing.StartServer(context.Background(), r)
	tracing.EndDB(tracing.StartDB(ctx2, "postgresql", "SELECT 1", 1), nil)
	tracing.EndDB(tracing.StartDB(ctx2, "postgresql", "BEGIN; UPDATE x SET y = 'literal'", 4), errors.New("boom 'literal'"))
	sp2.EndServer("POST", "POST /v1/payment_intents", 500)
	_, sp3 := tracing.StartServer(context.Background(), r)
	sp3.EndServer("GET", "GET /healthz", 200) // no statement: no database span

	spans := exp.GetSpans()
	if len(spans) != 5 {
		t.Fatalf("%d spans, want 3 server spans and 2 database spans: %v", len(spans), spans)
	}
	var db []tracetest.SpanStub
	servers := map[trace.SpanID]bool{}
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindServer {
			servers[s.SpanContext.SpanID()] = true
		} else {
			db = append(db, s)
		}
	}
	attrs := func(s tracetest.SpanStub) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	first, second := db[0], db[1]
	if first.Name != "INSERT" || !servers[first.Parent.SpanID()] || first.SpanKind != trace.SpanKindClient {
		t.Fatalf("first request's database span %q (parent %v)", first.Name, first.Parent.SpanID())
	}
	if a := attrs(first); a["db.system.name"] != "sqlite" || a["payd.db.statements"] != "3" || a["payd.db.round_trips"] != "3" || a["db.operation.name"] != "INSERT" {
		t.Fatalf("first database span's attributes %v", a)
	}
	if first.EndTime.Before(first.StartTime) {
		t.Fatalf("database span ends %v before it starts %v", first.EndTime, first.StartTime)
	}
	if a := attrs(second); second.Name != "postgresql" || a["payd.db.statements"] != "5" || a["payd.db.round_trips"] != "2" || a["db.operation.name"] != "" {
		t.Fatalf("second database span %q %v", second.Name, a)
	}
	if second.Status.Description != "statement failed" {
		t.Fatalf("a failed statement left the span's status %v", second.Status)
	}
	for _, s := range db {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), "literal") {
				t.Fatalf("statement text or error in %s", kv.Key)
			}
		}
	}
}

// TestDeliveryLinksToTheEmittingRequest: Traceparent gives the sampled
// span's context, and a span started with it links to that span without
// joining its trace; off, there is nothing to store.
func TestDeliveryLinksToTheEmittingRequest(t *testing.T) {
	restore := tracing.Use(nil)
	if tp := tracing.Traceparent(context.Background()); tp != "" {
		t.Fatalf("tracing off: traceparent %q", tp)
	}
	restore()
	exp := inMemory(t)
	if tp := tracing.Traceparent(context.Background()); tp != "" {
		t.Fatalf("outside a trace: traceparent %q", tp)
	}
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	ctx, sp := tracing.StartServer(context.Background(), r)
	stored := tracing.Traceparent(ctx)
	sp.EndServer("POST", "POST /v1/payment_intents", 201)
	_, dsp := tracing.StartClientLinked(context.Background(), "webhook delivery", stored)
	dsp.End()
	_, bad := tracing.StartClientLinked(context.Background(), "webhook delivery", "00-garbage")
	bad.End()
	spans := exp.GetSpans()
	server, delivery, unlinked := spans[0], spans[1], spans[2]
	want := "00-" + server.SpanContext.TraceID().String() + "-" + server.SpanContext.SpanID().String() + "-01"
	if stored != want {
		t.Fatalf("stored traceparent %q, want %q", stored, want)
	}
	if delivery.SpanContext.TraceID() == server.SpanContext.TraceID() || delivery.Parent.IsValid() {
		t.Fatal("the delivery joined the request's trace instead of linking to it")
	}
	if len(delivery.Links) != 1 || delivery.Links[0].SpanContext.SpanID() != server.SpanContext.SpanID() ||
		delivery.Links[0].SpanContext.TraceID() != server.SpanContext.TraceID() {
		t.Fatalf("delivery links %v, want the request's span", delivery.Links)
	}
	if len(unlinked.Links) != 0 {
		t.Fatalf("a malformed traceparent made links %v", unlinked.Links)
	}
}

func TestOperation(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT 1": "SELECT", "  insert into x": "INSERT", "(SELECT 1)": "SELECT", "UPDATE x SET": "UPDATE",
		"SAVEPOINT sp1": "SAVEPOINT", "": "OTHER", "GRANT ALL": "OTHER", "SELECTED": "OTHER", "with x as": "WITH",
	} {
		if got := tracing.Operation(sql); got != want {
			t.Errorf("Operation(%q) = %q, want %q", sql, got, want)
		}
	}
}

// FuzzOperation: whatever the statement, the name is one of the fixed list.
func FuzzOperation(f *testing.F) {
	for _, s := range []string{"SELECT 1", "\tinsert", "(", "", "ÉSELECT", "savepoint\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		op := tracing.Operation(sql)
		if op != "OTHER" && !strings.EqualFold(strings.TrimLeft(sql, " \t\r\n(")[:len(op)], op) {
			t.Fatalf("Operation(%q) = %q", sql, op)
		}
		if strings.ToUpper(op) != op || len(op) > 10 {
			t.Fatalf("Operation(%q) = %q", sql, op)
		}
	})
}

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "payd-eu"}, false},
	} {
		if got := tracing.Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestSetupExportsOverOTLPHTTP: Setup reads the standard variables, sends
// spans to the endpoint over OTLP/HTTP with the configured headers, and
// shutdown flushes them and turns tracing off.
func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token=tok123")
	t.Setenv("OTEL_SERVICE_NAME", "payd-test-svc")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	shutdown, err := tracing.Setup(context.Background(), nil, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.On() {
		t.Fatal("Setup did not turn tracing on")
	}
	_, sp := tracing.Start(context.Background(), "probe-span")
	sp.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if tracing.On() {
		t.Fatal("shutdown left tracing on")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("nothing reached the OTLP endpoint")
	}
	r := got[0]
	if r.Method != "POST" || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
		r.Header.Get("X-Collector-Token") != "tok123" {
		t.Fatalf("export request %s %s %v", r.Method, r.URL.Path, r.Header)
	}
	all := string(slices.Concat(bodies...))
	for _, want := range []string{"probe-span", "payd-test-svc", "v1.2.3"} {
		if !strings.Contains(all, want) {
			t.Errorf("the export does not hold %q", want)
		}
	}
}

// TestTraceparentIsWhatInjectWrites: the traceparent stored with an event
// is the header Inject would send for the same span.
func TestTraceparentIsWhatInjectWrites(t *testing.T) {
	inMemory(t)
	r := httptest.NewRequest("POST", "/v1/payment_intents", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx, sp := tracing.StartServer(context.Background(), r)
	defer sp.EndServer("POST", "POST /v1/payment_intents", 201)
	h := http.Header{}
	tracing.Inject(ctx, h)
	if got, want := tracing.Traceparent(ctx), h.Get("Traceparent"); got != want || !strings.HasPrefix(got, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Fatalf("Traceparent %q, Inject wrote %q", got, want)
	}
}
