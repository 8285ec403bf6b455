package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

type auditEvent struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Action string `json:"action"`
	Actor  struct {
		Type  string  `json:"type"`
		ID    string  `json:"id"`
		Email *string `json:"email"`
	} `json:"actor"`
	ObjectID  *string `json:"object_id"`
	Outcome   string  `json:"outcome"`
	Detail    string  `json:"detail"`
	Livemode  bool    `json:"livemode"`
	CreatedAt string  `json:"created_at"`
}

type auditList struct {
	Object  string       `json:"object"`
	Data    []auditEvent `json:"data"`
	HasMore bool         `json:"has_more"`
}

// TestAuditEventsAPI: GET /v1/audit_events lists who changed what (a
// loosening requested with one key and approved with another, keys and a
// user made by the operator, a loosening by a portal admin) newest first,
// pages with starting_after/ending_before, filters by action (one or a
// family), actor, object and creation time, never shows another merchant's
// or the other mode's events, refuses publishable keys, and answers a bad
// filter with a 400 naming it.
func TestAuditEventsAPI(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		mer := e.Merchant.MerchantID
		svc := e.Main.Merchants
		list := func(key, query string) auditList {
			t.Helper()
			r := e.Do(apptest.Request{Method: "GET", Path: "/v1/audit_events" + query, Key: key})
			if r.Status != 200 {
				t.Fatalf("GET /v1/audit_events%s: %d %s", query, r.Status, r.Body)
			}
			var l auditList
			r.JSON(t, &l)
			return l
		}
		actions := func(l auditList) string {
			var out []string
			for _, ev := range l.Data {
				out = append(out, ev.Action)
			}
			return strings.Join(out, ",")
		}
		if l := list(e.SK, ""); l.Object != "list" || len(l.Data) != 0 || l.HasMore {
			t.Fatalf("a fresh merchant's audit log: %+v", l)
		}

		// The other mode and another merchant act first, so their rows sit
		// among this merchant's test rows.
		if err := svc.SetKYC(ctx, mer, "approved"); err != nil {
			t.Fatal(err)
		}
		if err := svc.ConnectProvider(ctx, mer, "wallet_a", merchants.ProviderConfig{BaseURL: "http://127.0.0.1:9/never",
			APIKey: "prov_key_unused", CallbackSecret: "prov_cbsec_unused"}); err != nil {
			t.Fatal(err)
		}
		liveKey, err := svc.CreateKeyByOperator(ctx, mer, true, auth.KindSecret)
		if err != nil {
			t.Fatal(err)
		}
		other, err := svc.Create(ctx, merchants.CreateParams{Name: "Other merchant"})
		if err != nil {
			t.Fatal(err)
		}
		otherKey, err := svc.CreateKeyByOperator(ctx, other.MerchantID, false, auth.KindSecret)
		if err != nil {
			t.Fatal(err)
		}

		// Test mode: a loosening asked with SK and approved with SK2.
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 1000}); r.Status != 200 {
			t.Fatalf("tighten: %d %s", r.Status, r.Body)
		}
		var change struct {
			ID          string `json:"id"`
			RequestedBy string `json:"requested_by"`
		}
		r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 5000})
		r.JSON(t, &change)
		if r.Status != 202 {
			t.Fatalf("loosen: %d %s", r.Status, r.Body)
		}
		r = e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + change.ID + "/approve", Key: e.SK2})
		if r.Status != 200 {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		// The operator makes and revokes a key and adds a user.
		k, err := svc.CreateKeyByOperator(ctx, mer, false, auth.KindPublishable)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RevokeKeyByOperator(ctx, mer, k.ID); err != nil {
			t.Fatal(err)
		}
		u, password, err := svc.CreateUserByOperator(ctx, mer, "auditor@example.com", "admin")
		if err != nil {
			t.Fatal(err)
		}
		// That admin loosens the threshold directly (as in the portal).
		if _, err := svc.UpdateThreshold(ctx, store.NoClaim, mer, false, nil, u.ID, true); err != nil {
			t.Fatal(err)
		}

		all := list(e.SK, "?limit=100")
		want := "settings.loosened,user.create,api_key.revoke,api_key.create,settings.loosened,settings.change_requested"
		if got := actions(all); got != want || all.HasMore {
			t.Fatalf("audit log %s (has_more %v), want %s", got, all.HasMore, want)
		}
		for i, ev := range all.Data {
			if ev.Object != "audit_event" || !strings.HasPrefix(ev.ID, "aud_") || ev.Livemode || ev.Outcome != "ok" || !strings.HasSuffix(ev.CreatedAt, "Z") {
				t.Errorf("event %d: %+v", i, ev)
			}
			if i > 0 && ev.ID >= all.Data[i-1].ID {
				t.Errorf("event %d not older than the one before: %s >= %s", i, ev.ID, all.Data[i-1].ID)
			}
			if strings.Contains(ev.Detail, password) || strings.Contains(ev.Detail, k.Secret) {
				t.Errorf("event %d shows a secret: %q", i, ev.Detail)
			}
		}
		byUser, asked, approved := all.Data[0], all.Data[5], all.Data[4]
		if byUser.Actor.Type != "user" || byUser.Actor.ID != u.ID || byUser.Actor.Email == nil || *byUser.Actor.Email != "auditor@example.com" {
			t.Errorf("a portal user's event: actor %+v", byUser.Actor)
		}
		if asked.Actor.Type != "api_key" || asked.Actor.ID != change.RequestedBy || asked.Actor.Email != nil || asked.ObjectID == nil || *asked.ObjectID != change.ID {
			t.Errorf("the requested change: %+v", asked)
		}
		if approved.Actor.Type != "api_key" || approved.Actor.ID == asked.Actor.ID {
			t.Errorf("the approval: actor %+v, requester %s", approved.Actor, asked.Actor.ID)
		}
		if op := all.Data[2]; op.Actor.Type != "operator" || op.Actor.ID != "operator" || op.ObjectID == nil || *op.ObjectID != k.ID {
			t.Errorf("the operator's revoke: %+v", op)
		}
		for _, ev := range all.Data {
			if ev.ObjectID != nil && (*ev.ObjectID == liveKey.ID || *ev.ObjectID == otherKey.ID) {
				t.Errorf("the test list shows another mode's or merchant's event: %+v", ev)
			}
		}

		// Pages: newest first, forward with starting_after, back with ending_before.
		p1 := list(e.SK, "?limit=4")
		p2 := list(e.SK, "?limit=4&starting_after="+p1.Data[3].ID)
		if actions(p1)+","+actions(p2) != want || !p1.HasMore || p2.HasMore {
			t.Fatalf("pages %s | %s (has_more %v %v)", actions(p1), actions(p2), p1.HasMore, p2.HasMore)
		}
		back := list(e.SK, "?limit=2&ending_before="+p2.Data[0].ID)
		if len(back.Data) != 2 || back.Data[0].ID != p1.Data[2].ID || back.Data[1].ID != p1.Data[3].ID || !back.HasMore {
			t.Fatalf("ending_before page: %s (has_more %v)", actions(back), back.HasMore)
		}

		// Filters.
		for _, c := range []struct{ query, want string }{
			{"?action=api_key.create", "api_key.create"},
			{"?action=settings.*", "settings.loosened,settings.loosened,settings.change_requested"},
			{"?action=settings.loosened&actor=" + u.ID, "settings.loosened"},
			{"?actor=operator", "user.create,api_key.revoke,api_key.create"},
			{"?actor=" + change.RequestedBy, "settings.change_requested"},
			{"?object_id=" + k.ID, "api_key.revoke,api_key.create"},
			{"?action=api_key", ""},
			{"?action=payout.*", ""},
			{"?created[gte]=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), ""},
			{"?created[lte]=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)) + "&limit=100", want},
			{"?created[lt]=" + url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)), ""},
		} {
			if got := actions(list(e.SK, c.query)); got != c.want {
				t.Errorf("GET /v1/audit_events%s: %s, want %s", c.query, got, c.want)
			}
		}

		// Isolation: the live key sees only live mode's event, the other
		// merchant only its own, and neither pages into the other's rows.
		liveList := list(liveKey.Secret, "?limit=100")
		if actions(liveList) != "api_key.create" || liveList.Data[0].ObjectID == nil || *liveList.Data[0].ObjectID != liveKey.ID || !liveList.Data[0].Livemode {
			t.Fatalf("live mode's audit log: %+v", liveList.Data)
		}
		if l := list(liveKey.Secret, "?starting_after="+all.Data[0].ID+"&limit=100"); len(l.Data) != 1 || l.Data[0].ID != liveList.Data[0].ID {
			t.Fatalf("live list after a test cursor: %+v", l.Data)
		}
		otherList := list(other.SecretKeys[0], "?limit=100")
		if actions(otherList) != "api_key.create" || *otherList.Data[0].ObjectID != otherKey.ID {
			t.Fatalf("the other merchant's audit log: %+v", otherList.Data)
		}
		if l := list(other.SecretKeys[0], "?object_id="+k.ID); len(l.Data) != 0 {
			t.Fatalf("the other merchant filters into this one's log: %+v", l.Data)
		}

		// A publishable key is refused; bad filters are 400s naming the parameter.
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/audit_events", Key: e.PK}); r.Status != 403 {
			t.Fatalf("publishable key: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct{ query, param string }{
			{"?limit=0", "limit"},
			{"?limit=101", "limit"},
			{"?starting_after=pi_123", "starting_after"},
			{"?ending_before=aud_x%27--", "ending_before"},
			{"?action=API_KEY.create", "action"},
			{"?action=api_key.create&action=user.create", "action"},
			{"?action=" + strings.Repeat("a", 65), "action"},
			{"?actor=bob", "actor"},
			{"?actor=usr_%25", "actor"},
			{"?object_id=a%20b", "object_id"},
			{"?created[gte]=yesterday", "created[gte]"},
			{"?created[lte]=2026-13-01T00:00:00Z", "created[lte]"},
		} {
			r := e.Do(apptest.Request{Method: "GET", Path: "/v1/audit_events" + c.query, Key: e.SK})
			var body struct {
				Error struct{ Param, Code string }
			}
			r.JSON(t, &body)
			if r.Status != 400 || body.Error.Param != c.param || body.Error.Code != "parameter_invalid" {
				t.Errorf("GET /v1/audit_events%s: %d %s, want 400 naming %s", c.query, r.Status, r.Body, c.param)
			}
		}
	})
}
