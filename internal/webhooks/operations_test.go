package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
	"github.com/payd/payd/webhook"
)

// sigServer records each delivery's signature header and body and answers
// with status().
type sigServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []sigDelivery
	status func() int
}

type sigDelivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newSigServer(t *testing.T) *sigServer {
	s := &sigServer{status: func() int { return 200 }}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, sigDelivery{header: r.Header.Clone(), body: body, at: time.Now()})
		st := s.status
		s.mu.Unlock()
		w.WriteHeader(st())
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sigServer) deliveries() []sigDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sigDelivery(nil), s.got...)
}

// waitFirst waits for a delivery of eventID and returns it.
func (s *sigServer) waitFirst(t *testing.T, eventID string) sigDelivery {
	t.Helper()
	var out sigDelivery
	waitFor(t, 30*time.Second, "a delivery of "+eventID, func() bool {
		for _, d := range s.deliveries() {
			if d.header.Get(webhook.HeaderEventID) == eventID {
				out = d
				return true
			}
		}
		return false
	})
	return out
}

func verifies(d sigDelivery, secret string) bool {
	v := webhook.Verifier{Secrets: []string{secret}}
	_, err := v.Verify(d.header, d.body)
	return err == nil
}

type rotatedJSON struct {
	endpointJSON
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
}

// TestRotateSecret: a rotation answers a new secret once; while the old
// one's grace lasts each delivery carries both signatures, so a receiver
// holding only the old or only the new secret verifies; a rotation with no
// grace (or the grace's end) leaves the new one alone. The rotation is
// idempotent without storing the secret in clear, refuses bad input naming
// the field, and is invisible to another merchant and the other mode.
func TestRotateSecret(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		rcv := newSigServer(t)
		ep := createEndpoint(t, e, e.SK, rcv.srv.URL+"/hooks", "payout.failed")
		oldSecret := ep.Secret
		path := "/v1/webhook_endpoints/" + ep.ID + "/rotate_secret"

		for _, c := range []struct {
			name string
			body any
		}{
			{"negative", map[string]any{"expires_in_seconds": -1}},
			{"over 7 days", map[string]any{"expires_in_seconds": 7*24*3600 + 1}},
			{"past a Duration", map[string]any{"expires_in_seconds": int64(1) << 62}},
			{"not a number", map[string]any{"expires_in_seconds": "soon"}},
			{"fraction", map[string]any{"expires_in_seconds": 1.5}},
		} {
			if r := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: c.body}); r.Status != 400 || !strings.Contains(string(r.Body), `"param":"expires_in_seconds"`) {
				t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: path, Key: other.SecretKeys[0]}); r.Status != 404 {
			t.Fatalf("another merchant: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.LiveKey(t, "bank_a")}); r.Status != 404 {
			t.Fatalf("live key on a test endpoint: %d %s", r.Status, r.Body)
		}

		req := apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: map[string]any{"expires_in_seconds": 3600},
			Headers: map[string]string{"Idempotency-Key": "rotate-1"}}
		r := e.Do(req)
		var rot rotatedJSON
		r.JSON(t, &rot)
		if r.Status != 200 || !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == oldSecret || rot.ID != ep.ID || rot.PreviousSecretExpiresAt == nil {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		exp, err := time.Parse(time.RFC3339, *rot.PreviousSecretExpiresAt)
		if err != nil || exp.Before(time.Now().Add(59*time.Minute)) || exp.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("previous_secret_expires_at %v, want an hour from now", *rot.PreviousSecretExpiresAt)
		}
		newSecret := rot.Secret
		again := e.Do(req)
		var rot2 rotatedJSON
		again.JSON(t, &rot2)
		if again.Status != 200 || rot2.Secret != newSecret || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		reused := req
		reused.Body = map[string]any{"expires_in_seconds": 60}
		if r := e.Do(reused); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
			t.Fatalf("key reused with another body: %d %s", r.Status, r.Body)
		}
		if g := e.Get("/v1/webhook_endpoints/" + ep.ID); strings.Contains(string(g.Body), "whsec_") || !strings.Contains(string(g.Body), `"previous_secret_expires_at":"`) {
			t.Fatalf("retrieve: %s", g.Body)
		}

		// During the grace period: both signatures, either secret verifies.
		ev := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		d := rcv.waitFirst(t, ev.ID)
		if n := strings.Count(d.header.Get(webhook.HeaderSignature), "v1="); n != 2 {
			t.Fatalf("during the grace period the signature header has %d v1 values: %s", n, d.header.Get(webhook.HeaderSignature))
		}
		if !verifies(d, oldSecret) || !verifies(d, newSecret) || verifies(d, "whsec_unrelated") {
			t.Fatal("during the grace period a receiver with the old or the new secret must verify")
		}

		// A rotation with no grace: only the newest secret signs.
		r = e.Post(path, map[string]any{"expires_in_seconds": 0})
		var rot3 rotatedJSON
		r.JSON(t, &rot3)
		if r.Status != 200 || rot3.Secret == newSecret || rot3.PreviousSecretExpiresAt != nil {
			t.Fatalf("rotate with no grace: %d %s", r.Status, r.Body)
		}
		if r := e.Do(req); r.Status != 409 || r.ErrorCode() != "idempotency_key_superseded" {
			t.Fatalf("replay after a later rotation: %d %s", r.Status, r.Body)
		}
		ev2 := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		d2 := rcv.waitFirst(t, ev2.ID)
		if n := strings.Count(d2.header.Get(webhook.HeaderSignature), "v1="); n != 1 || !verifies(d2, rot3.Secret) || verifies(d2, newSecret) || verifies(d2, oldSecret) {
			t.Fatalf("after the grace: %s", d2.header.Get(webhook.HeaderSignature))
		}

		// A grace that has passed: the old secret no longer signs.
		r = e.Post(path, map[string]any{"expires_in_seconds": 1})
		var rot4 rotatedJSON
		r.JSON(t, &rot4)
		time.Sleep(1100 * time.Millisecond)
		ev3 := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		d3 := rcv.waitFirst(t, ev3.ID)
		if n := strings.Count(d3.header.Get(webhook.HeaderSignature), "v1="); n != 1 || !verifies(d3, rot4.Secret) || verifies(d3, rot3.Secret) {
			t.Fatalf("after the grace expired: %s", d3.header.Get(webhook.HeaderSignature))
		}

		// Sealed at rest, never in the idempotency store nor the logs.
		ctx := context.Background()
		for _, q := range []string{"SELECT COALESCE(body, '') FROM idempotency_keys",
			"SELECT secret_sealed || COALESCE(previous_secret_sealed, '') FROM webhook_endpoints",
			"SELECT idem_hash || idem_key FROM webhook_secret_rotations"} {
			rows, err := e.Main.DB.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v []byte
				rows.Scan(&v)
				if strings.Contains(string(v), "whsec_") {
					t.Fatalf("a secret is stored in clear (%s)", q)
				}
			}
			rows.Close()
		}
		e.RequireSecretsAbsent(oldSecret, newSecret, rot3.Secret, rot4.Secret)

		// Each rotation through the API is a row of the audit log naming
		// the key (three rotations; replays and refusals write none).
		a := e.Get("/v1/audit_events?action=" + webhooks.AuditRotateSecret)
		var audit struct {
			Data []struct {
				Actor    struct{ Type string } `json:"actor"`
				ObjectID string                `json:"object_id"`
				Detail   string                `json:"detail"`
			} `json:"data"`
		}
		a.JSON(t, &audit)
		if a.Status != 200 || len(audit.Data) != 3 {
			t.Fatalf("audit of API rotations: %d %s", a.Status, a.Body)
		}
		for _, row := range audit.Data {
			if row.Actor.Type != "api_key" || row.ObjectID != ep.ID || strings.Contains(row.Detail, "whsec_") {
				t.Fatalf("audit row: %+v", row)
			}
		}
	})
}

// TestMaxRateParam: max_rate is set on create and update, null clears it,
// and a value out of 1..1000 or not a whole number is a 400 naming it.
func TestMaxRateParam(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Post("/v1/webhook_endpoints", map[string]any{"url": "http://localhost:4242/hooks", "max_rate": 25})
		var ep struct {
			ID      string `json:"id"`
			MaxRate *int   `json:"max_rate"`
		}
		r.JSON(t, &ep)
		if r.Status != 201 || ep.MaxRate == nil || *ep.MaxRate != 25 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		for _, bad := range []any{0, 1001, -3, 2.5, "10", true} {
			for _, path := range []string{"/v1/webhook_endpoints", "/v1/webhook_endpoints/" + ep.ID} {
				r := e.Post(path, map[string]any{"url": "http://localhost:4242/hooks", "max_rate": bad})
				if r.Status != 400 || !strings.Contains(string(r.Body), `"param":"max_rate"`) {
					t.Fatalf("max_rate %v on %s: %d %s", bad, path, r.Status, r.Body)
				}
			}
		}
		r = e.Post("/v1/webhook_endpoints/"+ep.ID, map[string]any{"description": "x"})
		r.JSON(t, &ep)
		if ep.MaxRate == nil || *ep.MaxRate != 25 {
			t.Fatalf("an update without max_rate changed it: %s", r.Body)
		}
		r = e.Post("/v1/webhook_endpoints/"+ep.ID, map[string]any{"max_rate": 1000})
		r.JSON(t, &ep)
		if ep.MaxRate == nil || *ep.MaxRate != 1000 {
			t.Fatalf("update to 1000: %s", r.Body)
		}
		r = e.Post("/v1/webhook_endpoints/"+ep.ID, map[string]any{"max_rate": nil})
		r.JSON(t, &ep)
		if r.Status != 200 || ep.MaxRate != nil || !strings.Contains(string(r.Body), `"max_rate":null`) {
			t.Fatalf("clear: %d %s", r.Status, r.Body)
		}
		var n int
		e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM webhook_endpoints").Scan(&n)
		if n != 1 {
			t.Fatalf("%d endpoints, want 1: a refused create wrote one", n)
		}
	})
}

func eventIDsOf(ds []sigDelivery) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		out[d.header.Get(webhook.HeaderEventID)]++
	}
	return out
}

// TestRecoverFailedDeliveries: deliveries that ended failed while the
// receiver was down are sent again by one recover call, as new deliveries of
// the same events (same ids); a second call sends nothing more; a failed
// delivery older than since is left alone; bad since values are 400s naming
// it; another merchant sees 404 and a disabled endpoint 409.
func TestRecoverFailedDeliveries(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		rcv := newSigServer(t)
		var mu sync.Mutex
		up := false
		rcv.status = func() int {
			mu.Lock()
			defer mu.Unlock()
			if up {
				return 200
			}
			return 503
		}
		ep := createEndpoint(t, e, e.SK, rcv.srv.URL+"/hooks", "payout.failed")
		path := "/v1/webhook_endpoints/" + ep.ID + "/recover"
		var evs []string
		for i := 0; i < 6; i++ {
			evs = append(evs, trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"}).ID)
		}
		for _, id := range evs {
			waitDelivered(t, e, e.SK, id, 30*time.Second)
		}
		// One failed delivery predates since: it stays failed.
		ctx := context.Background()
		old := time.Now().Add(-2 * time.Hour)
		if _, err := e.Main.DB.Exec(ctx, "UPDATE webhook_deliveries SET created_at = ? WHERE event_id = ?", old.UnixMicro(), evs[0]); err != nil {
			t.Fatal(err)
		}
		since := time.Now().Add(-time.Hour).Unix()

		for _, c := range []struct {
			name string
			body any
			code string
		}{
			{"missing", map[string]any{}, "parameter_missing"},
			{"future", map[string]any{"since": time.Now().Add(time.Hour).Unix()}, "parameter_invalid"},
			{"too old", map[string]any{"since": time.Now().Add(-31 * 24 * time.Hour).Unix()}, "parameter_invalid"},
			{"not a number", map[string]any{"since": "yesterday"}, "parameter_invalid"},
			{"fraction", map[string]any{"since": 1.5}, "parameter_invalid"},
		} {
			r := e.Post(path, c.body)
			if r.Status != 400 || r.ErrorCode() != c.code || !strings.Contains(string(r.Body), `"param":"since"`) {
				t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		other, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: path, Key: other.SecretKeys[0], Body: map[string]any{"since": since}}); r.Status != 404 {
			t.Fatalf("another merchant: %d %s", r.Status, r.Body)
		}
		if n := countRows(t, e.Main.DB, "SELECT COUNT(*) FROM webhook_deliveries WHERE recovered_at IS NOT NULL"); n != 0 {
			t.Fatalf("refused calls recovered %d deliveries", n)
		}

		mu.Lock()
		up = true
		mu.Unlock()
		before := len(rcv.deliveries())
		r := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: map[string]any{"since": since},
			Headers: map[string]string{"Idempotency-Key": "recover-1"}})
		var rec struct {
			Object     string `json:"object"`
			EndpointID string `json:"endpoint_id"`
			Queued     int    `json:"queued"`
			HasMore    bool   `json:"has_more"`
		}
		r.JSON(t, &rec)
		if r.Status != 202 || rec.Object != "webhook_recovery" || rec.EndpointID != ep.ID || rec.Queued != 5 || rec.HasMore {
			t.Fatalf("recover: %d %s", r.Status, r.Body)
		}
		waitFor(t, 30*time.Second, "the recovered deliveries", func() bool {
			n := 0
			for _, d := range rcv.deliveries()[before:] {
				if verifies(d, ep.Secret) {
					n++
				}
			}
			return n >= 5
		})
		got := eventIDsOf(rcv.deliveries()[before:])
		for _, id := range evs[1:] {
			if got[id] != 1 {
				t.Fatalf("event %s recovered %d times, want once (same event id): %v", id, got[id], got)
			}
		}
		if got[evs[0]] != 0 {
			t.Fatalf("a failed delivery older than since was recovered")
		}
		// The same key replays; a new call finds nothing left.
		if again := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Body: map[string]any{"since": since},
			Headers: map[string]string{"Idempotency-Key": "recover-1"}}); again.Status != 202 || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		r = e.Post(path, map[string]any{"since": since})
		r.JSON(t, &rec)
		if r.Status != 202 || rec.Queued != 0 || rec.HasMore {
			t.Fatalf("second recover: %d %s", r.Status, r.Body)
		}
		// Recovered deliveries do not count against redelivery's caps.
		if n := countRows(t, e.Main.DB, "SELECT COUNT(*) FROM webhook_deliveries WHERE recovery = TRUE AND redelivery = TRUE"); n != 5 {
			t.Fatalf("%d recovery deliveries, want 5", n)
		}
		if r := e.Post("/v1/webhook_endpoints/"+ep.ID, map[string]any{"disabled": true}); r.Status != 200 {
			t.Fatal(r.Status)
		}
		if r := e.Post(path, map[string]any{"since": since}); r.Status != 409 {
			t.Fatalf("disabled endpoint: %d %s", r.Status, r.Body)
		}
	}, withSchedule([]time.Duration{}))
}

// TestRecoverIsBounded: a call makes at most MaxRecoverPerCall deliveries
// and says more remain; calls add no more once the endpoint's waiting queue
// holds MaxRecoverQueue, and still say more remain.
func TestRecoverIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 rows: skipped with -short")
	}
	if raceDetector {
		// The race detector's instrumentation of the transpiled SQLite
		// makes the 10,000-row calls take minutes; run without -race.
		t.Skip("10,000 rows: skipped under -race (run without -race to enable)")
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		// A receiver that never answers: the recovered deliveries hold
		// their endpoint's few slots and stay pending, not attempted by the
		// thousand.
		hold := make(chan struct{})
		stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(stall.Close)
		t.Cleanup(func() { close(hold) })
		ep := createEndpoint(t, e, e.SK, stall.URL+"/hooks", "payout.failed")
		// Failed deliveries written directly: 3 more than the queue holds.
		const total = webhooks.MaxRecoverQueue + 3
		insertFailed(t, e, e.Merchant.MerchantID, ep.ID, total)
		path := "/v1/webhook_endpoints/" + ep.ID + "/recover"
		since := time.Now().Add(-time.Hour).Unix()
		var rec struct {
			Queued  int  `json:"queued"`
			HasMore bool `json:"has_more"`
		}
		queued := 0
		for call := 1; queued < webhooks.MaxRecoverQueue; call++ {
			if call > webhooks.MaxRecoverQueue/webhooks.MaxRecoverPerCall {
				t.Fatalf("after %d calls only %d queued", call-1, queued)
			}
			r := e.Post(path, map[string]any{"since": since})
			r.JSON(t, &rec)
			if r.Status != 202 || rec.Queued != webhooks.MaxRecoverPerCall || !rec.HasMore {
				t.Fatalf("call %d: %d %s", call, r.Status, r.Body)
			}
			queued += rec.Queued
		}
		// The endpoint's queue is full now: the next call adds nothing until
		// it drains (but for the few attempts under way), and still says
		// more remain.
		r := e.Post(path, map[string]any{"since": since})
		r.JSON(t, &rec)
		if r.Status != 202 || rec.HasMore != true || rec.Queued > 3 {
			t.Fatalf("call on a full queue: %d %s", r.Status, r.Body)
		}
	})
}

// insertFailed writes n failed deliveries to an endpoint, and their events,
// made a minute ago.
func insertFailed(t *testing.T, e *apptest.Env, merchantID, endpointID string, total int) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().Add(-time.Minute).UnixMicro()
	tag := endpointID[len(endpointID)-8:]
	for i := 0; i < total; i += 500 {
		err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
			for j := i; j < min(total, i+500); j += 100 {
				var sb strings.Builder
				var args []any
				for k := j; k < min(total, j+100); k++ {
					if k > j {
						sb.WriteString(", ")
					}
					sb.WriteString("(?, ?, FALSE, ?, ?, 'failed', 1, NULL, ?, ?)")
					args = append(args, fmt.Sprintf("whdel_%s%05d", tag, k), merchantID, fmt.Sprintf("evt_%s%05d", tag, k), endpointID, now, now)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, merchant_id, livemode, event_id, endpoint_id, status, attempt_count,
					next_attempt_at, created_at, updated_at) VALUES `+sb.String(), args...); err != nil {
					return err
				}
				sb.Reset()
				args = args[:0]
				for k := j; k < min(total, j+100); k++ {
					if k > j {
						sb.WriteString(", ")
					}
					sb.WriteString("(?, ?, FALSE, 'payout.failed', 'payout', ?, '{}', ?, ?)")
					args = append(args, fmt.Sprintf("evt_%s%05d", tag, k), merchantID, fmt.Sprintf("po_%s%05d", tag, k), now, now)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO events (id, merchant_id, livemode, type, object_type, object_id, data, created_at, dispatched_at)
					VALUES `+sb.String(), args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecoverIsFair: a merchant recovering 500 failed deliveries to a
// receiver that never answers holds no more than the endpoint's cap of
// attempts at once, and another merchant's events are delivered meanwhile:
// recovered deliveries go through the same fair claim as every delivery.
func TestRecoverIsFair(t *testing.T) {
	t.Parallel() // mostly waiting on attempts that time out
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		stall := newStallServer(t)
		bad, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Recovering merchant"})
		if err != nil {
			t.Fatal(err)
		}
		badEP := createEndpoint(t, e, bad.SecretKeys[0], stall.srv.URL+"/recovering", "payout.failed")
		insertFailed(t, e, bad.MerchantID, badEP.ID, 500)
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints/" + badEP.ID + "/recover", Key: bad.SecretKeys[0],
			Body: map[string]any{"since": time.Now().Add(-time.Hour).Unix()}})
		if r.Status != 202 || !strings.Contains(string(r.Body), `"queued":500`) {
			t.Fatalf("recover: %d %s", r.Status, r.Body)
		}
		waitFor(t, 30*time.Second, "the recovered deliveries' first attempts", func() bool {
			started, _, _ := stall.counts()
			return started > 0
		})
		rc := newReceiver(t)
		ep := createEndpoint(t, e, e.SK, rc.URL(), "payout.failed")
		rc.setSecret(ep.Secret)
		good := emitEvents(t, e, e.Merchant.MerchantID, "payout.failed", 10)
		waitFor(t, time.Minute, "the other merchant's events", func() bool { return len(rc.acked()) == len(good) })
		started, _, maxPath := stall.counts()
		if n := maxPath["/recovering"]; n > webhooks.DefaultEndpointConcurrency {
			t.Fatalf("the recovering endpoint held %d attempts at once; the cap is %d", n, webhooks.DefaultEndpointConcurrency)
		}
		if pending := countRows(t, e.Main.DB, "SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'", badEP.ID); pending < 500-started {
			t.Fatalf("%d recovered deliveries pending after %d attempts", pending, started)
		}
	})
}
