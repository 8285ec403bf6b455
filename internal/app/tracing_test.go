package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/tracing"
)

// headerLog keeps the traceparent of every request a test server received.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *headerLog) add(r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Header.Get("Traceparent"))
	l.mu.Unlock()
}

func (l *headerLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// traceOf is the trace id of a traceparent header ("" when malformed).
func traceOf(tp string) string {
	p := strings.Split(tp, "-")
	if len(p) != 4 || p[0] != "00" || len(p[1]) != 32 {
		return ""
	}
	return p[1]
}

// TestTracesFollowARequest turns tracing on with an in-memory exporter and
// follows one payment create through payd: the caller's traceparent is
// honoured, the server span (named by route) has database spans below it in
// the same trace, the live provider's request and the webhook delivery's
// request carry traceparent, the delivery's span links to the request that
// emitted the event (nothing is stored with tracing off), and no key, secret or body text is in any span.
func TestTracesFollowARequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	restore := tracing.Use(tp)
	defer restore()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		exp.Reset()
		// The webhook receiver and a proxy in front of the provider
		// simulator record the traceparent payd sends.
		var hooks, provider headerLog
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooks.add(r) }))
		defer rc.Close()
		s := apptest.StartSim(t, sim.Config{})
		target, _ := url.Parse(s.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			provider.add(r)
			proxy.ServeHTTP(w, r)
		}))
		defer front.Close()

		ep := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: e.SK,
			Body: map[string]any{"url": rc.URL + "/hooks", "enabled_events": []string{"*"}}})
		if ep.Status != 201 {
			t.Fatalf("webhook endpoint: %d %s", ep.Status, ep.Body)
		}
		hookSecret, _ := ep.Map(t)["secret"].(string)

		// A sandbox create, continuing the caller's trace.
		const callerTrace = "5e1f2a3b4c5d6e7f8091a2b3c4d5e6f7"
		create := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK,
			Headers: map[string]string{"Idempotency-Key": "trace-1", "Traceparent": "00-" + callerTrace + "-1111111111111111-01"},
			Body:    map[string]any{"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456", "description": "body-marker-5521"}})
		if create.Status != 201 {
			t.Fatalf("create: %d %s", create.Status, create.Body)
		}
		server := waitSpan(t, exp, func(s tracetest.SpanStub) bool {
			return s.SpanKind == trace.SpanKindServer && s.SpanContext.TraceID().String() == callerTrace
		})
		if server.Name != "POST /v1/payment_intents" {
			t.Fatalf("server span %q, want the route template", server.Name)
		}
		if server.Parent.SpanID().String() != "1111111111111111" {
			t.Fatalf("server span's parent %s, want the caller's span", server.Parent.SpanID())
		}
		dbSpans := 0
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID() == server.SpanContext.TraceID() && attr(s, "db.system.name") != "" {
				dbSpans++
				if !descends(exp.GetSpans(), s, server) {
					t.Errorf("database span %q is not below the server span", s.Name)
				}
			}
		}
		if dbSpans == 0 {
			t.Fatalf("no database span in the create's trace: %v", names(exp.GetSpans()))
		}

		// The webhook delivery carries a traceparent of its attempt's span.
		waitFor(t, "a webhook delivery", func() bool { return len(hooks.all()) > 0 })
		tid := traceOf(hooks.all()[0])
		if tid == "" {
			t.Fatalf("the webhook delivery's traceparent is %q", hooks.all()[0])
		}
		waitSpan(t, exp, func(s tracetest.SpanStub) bool {
			return s.Name == "webhook delivery" && s.SpanContext.TraceID().String() == tid
		})
		// The create's events keep its trace context, and the delivery of
		// payment_intent.created links to the create's server span: request
		// → event → delivery.
		piID, _ := create.Map(t)["id"].(string)
		var stored string
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT trace_context FROM events WHERE object_id = ? AND type = 'payment_intent.created'", piID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if want := "00-" + callerTrace + "-" + server.SpanContext.SpanID().String() + "-01"; stored != want {
			t.Fatalf("the event's stored trace context %q, want %q", stored, want)
		}
		waitSpan(t, exp, func(s tracetest.SpanStub) bool {
			return s.Name == "webhook delivery" && s.SpanContext.TraceID().String() != callerTrace && len(s.Links) == 1 &&
				s.Links[0].SpanContext.TraceID().String() == callerTrace && s.Links[0].SpanContext.SpanID() == server.SpanContext.SpanID()
		})

		// Tracing off: nothing is stored with the event.
		off := tracing.Use(nil)
		quiet := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK,
			Headers: map[string]string{"Idempotency-Key": "trace-off-1", "Traceparent": "00-" + callerTrace + "-3333333333333333-01"},
			Body:    map[string]any{"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}})
		off()
		if quiet.Status != 201 {
			t.Fatalf("create with tracing off: %d %s", quiet.Status, quiet.Body)
		}
		quietID, _ := quiet.Map(t)["id"].(string)
		var kept, all int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(trace_context), COUNT(*) FROM events WHERE object_id = ?", quietID).Scan(&kept, &all); err != nil {
			t.Fatal(err)
		}
		if all == 0 || kept != 0 {
			t.Fatalf("tracing off: %d of %d events kept a trace context", kept, all)
		}

		// A live create: the provider's request carries the create's trace.
		live := e.GoLive(&apptest.Sim{Server: &sim.Server{URL: front.URL}, T: t}, apptest.LiveConnection{}, "bank_a")
		const liveTrace = "0af7651916cd43dd8448eb211c80319c"
		lc := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: live,
			Headers: map[string]string{"Idempotency-Key": "trace-live-1", "Traceparent": "00-" + liveTrace + "-2222222222222222-01"},
			Body:    map[string]any{"amount": 10, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377200001"}})
		if lc.Status != 201 {
			t.Fatalf("live create: %d %s", lc.Status, lc.Body)
		}
		carried := false
		for _, h := range provider.all() {
			carried = carried || traceOf(h) == liveTrace
		}
		if !carried {
			t.Fatalf("no provider request carried the create's trace: %q", provider.all())
		}
		waitSpan(t, exp, func(s tracetest.SpanStub) bool {
			return s.Name == "provider initiate" && s.SpanContext.TraceID().String() == liveTrace
		})

		// No secret in any span: names, attributes, status, events.
		secrets := []string{e.SK, e.SK2, live, "sk_sim_bank_a_" + e.Merchant.MerchantID, "cbsec_bank_a_0123456789abcdef",
			"body-marker-5521", "77123456", "+25377200001", "trace-1", "trace-live-1"}
		if hookSecret != "" {
			secrets = append(secrets, hookSecret)
		}
		for _, s := range exp.GetSpans() {
			text := []string{s.Name, s.Status.Description}
			for _, kv := range s.Attributes {
				text = append(text, string(kv.Key)+"="+kv.Value.Emit())
			}
			for _, ev := range s.Events {
				text = append(text, ev.Name)
				for _, kv := range ev.Attributes {
					text = append(text, kv.Value.Emit())
				}
			}
			for _, x := range text {
				for _, secret := range secrets {
					if strings.Contains(x, secret) {
						t.Errorf("span %q holds %q in %q", s.Name, secret, x)
					}
				}
			}
		}
	})
}

func waitSpan(t *testing.T, exp *tracetest.InMemoryExporter, match func(tracetest.SpanStub) bool) tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, s := range exp.GetSpans() {
			if match(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such span among %v", names(exp.GetSpans()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// descends reports whether s is below top in spans' parent links.
func descends(spans tracetest.SpanStubs, s, top tracetest.SpanStub) bool {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, x := range spans {
		byID[x.SpanContext.SpanID()] = x
	}
	for i := 0; i < 64; i++ {
		if s.Parent.SpanID() == top.SpanContext.SpanID() {
			return true
		}
		p, ok := byID[s.Parent.SpanID()]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
