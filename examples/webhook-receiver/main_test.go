package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/webhook"
)

func TestHandler(t *testing.T) {
	const secret = "whsec_receivertest"
	var out bytes.Buffer
	h := handler(secret, webhook.NewDedup(10), &out)
	body := `{"id":"evt_9","object":"event","type":"payout.succeeded","created_at":"2026-11-21T10:00:00Z","livemode":false,"data":{"id":"po_9","object":{"status":"succeeded"}}}`
	post := func(sig string) int {
		req := httptest.NewRequest("POST", "/webhooks", strings.NewReader(body))
		req.Header.Set(webhook.HeaderEventID, "evt_9")
		req.Header.Set(webhook.HeaderEventType, "payout.succeeded")
		req.Header.Set(webhook.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	now := time.Now()
	if c := post(webhook.SignatureHeader(secret, now, "evt_9", []byte(body))); c != http.StatusOK {
		t.Fatalf("good delivery: %d", c)
	}
	if c := post(webhook.SignatureHeader(secret, now, "evt_9", []byte(body))); c != http.StatusOK || !strings.Contains(out.String(), "repeat of evt_9") {
		t.Fatalf("repeat: %d %q", c, out.String())
	}
	if c := post(webhook.SignatureHeader("whsec_other", now, "evt_9", []byte(body))); c != http.StatusBadRequest {
		t.Fatalf("forged: %d", c)
	}
	if c := post(webhook.SignatureHeader(secret, now.Add(-time.Hour), "evt_9", []byte(body))); c != http.StatusBadRequest {
		t.Fatalf("stale: %d", c)
	}
	if !strings.Contains(out.String(), `po_9 status "succeeded"`) {
		t.Fatalf("output %q", out.String())
	}
}
