package retention_test

import (
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/retention"
)

func TestPolicyFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want retention.Policy
		err  string // the variable the refusal must name
	}{
		{name: "defaults", want: retention.DefaultPolicy},
		{name: "days, durations and forever", env: map[string]string{"PAYD_RETENTION_EVENTS": "90d", "PAYD_RETENTION_DELIVERIES": "720h",
			"PAYD_RETENTION_REQUEST_LOGS": "0", "PAYD_RETENTION_IDEMPOTENCY_KEYS": "48h"},
			want: retention.Policy{Events: 90 * day, Deliveries: 30 * day, IdempotencyKeys: 2 * day}},
		{name: "events forever, deliveries any", env: map[string]string{"PAYD_RETENTION_EVENTS": "0", "PAYD_RETENTION_DELIVERIES": "400d"},
			want: retention.Policy{Deliveries: 400 * day, RequestLogs: 30 * day, IdempotencyKeys: day}},
		{name: "not a duration", env: map[string]string{"PAYD_RETENTION_EVENTS": "a month"}, err: "PAYD_RETENTION_EVENTS"},
		{name: "no unit", env: map[string]string{"PAYD_RETENTION_REQUEST_LOGS": "30"}, err: "PAYD_RETENTION_REQUEST_LOGS"},
		{name: "negative", env: map[string]string{"PAYD_RETENTION_DELIVERIES": "-1d"}, err: "PAYD_RETENTION_DELIVERIES"},
		{name: "too many days", env: map[string]string{"PAYD_RETENTION_EVENTS": "5000d"}, err: "PAYD_RETENTION_EVENTS"},
		{name: "too short", env: map[string]string{"PAYD_RETENTION_REQUEST_LOGS": "10m"}, err: "PAYD_RETENTION_REQUEST_LOGS"},
		{name: "keys under 24h", env: map[string]string{"PAYD_RETENTION_IDEMPOTENCY_KEYS": "12h"}, err: "PAYD_RETENTION_IDEMPOTENCY_KEYS"},
		{name: "keys forever", env: map[string]string{"PAYD_RETENTION_IDEMPOTENCY_KEYS": "0"}, err: "PAYD_RETENTION_IDEMPOTENCY_KEYS"},
		{name: "deliveries outlive events", env: map[string]string{"PAYD_RETENTION_EVENTS": "7d", "PAYD_RETENTION_DELIVERIES": "30d"},
			err: "PAYD_RETENTION_DELIVERIES"},
		{name: "deliveries forever, events not", env: map[string]string{"PAYD_RETENTION_DELIVERIES": "0"}, err: "PAYD_RETENTION_DELIVERIES"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := retention.PolicyFromEnv(func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err+":") {
					t.Fatalf("got %+v, %v; want a refusal naming %s", p, err, c.err)
				}
				return
			}
			if err != nil || p != c.want {
				t.Fatalf("got %+v, %v; want %+v", p, err, c.want)
			}
		})
	}
	if d, err := retention.ParseHorizon("36h"); err != nil || d != 36*time.Hour {
		t.Fatalf("36h: %v, %v", d, err)
	}
}
