package retention

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy is how long payd keeps the records that only grow and that nothing
// of a merchant's money reads: events, webhook deliveries (with their
// attempts), request logs and spent idempotency keys. Zero keeps a kind
// forever (idempotency keys excepted, which always go). The horizons apply
// to both modes; test-mode data also goes after SandboxRetention whatever
// they say. Ledger entries, payment intents, payouts, refunds, transfers,
// invoices and every other object a balance, a report or a reconciliation
// reads are never purged by it.
type Policy struct {
	// Events: an event this old goes, with its deliveries and their
	// attempts, once nothing still needs it: it has been dispatched and
	// none of its deliveries is still pending.
	Events time.Duration
	// Deliveries: a finished (succeeded or failed) webhook delivery this
	// old goes with its attempts. A pending one is kept until it finishes.
	Deliveries time.Duration
	// RequestLogs: a request log entry this old goes (besides the log's own
	// cap on the newest entries per merchant and mode).
	RequestLogs time.Duration
	// IdempotencyKeys: a key goes this long after its answer was stored (or,
	// for a request that never finished, after its claim lapsed).
	IdempotencyKeys time.Duration
}

// DefaultPolicy is the policy when the operator sets none: events,
// deliveries and request logs 30 days, idempotency keys 24 hours after their
// answer (the replay window; Stripe keeps keys as long).
var DefaultPolicy = Policy{
	Events:          30 * 24 * time.Hour,
	Deliveries:      30 * 24 * time.Hour,
	RequestLogs:     30 * 24 * time.Hour,
	IdempotencyKeys: 24 * time.Hour,
}

// Settings name the environment variables of a Policy's fields, in the
// order they are read and checked.
var Settings = []struct {
	Name    string
	Default string
	Field   func(*Policy) *time.Duration
}{
	{"PAYD_RETENTION_EVENTS", "30d", func(p *Policy) *time.Duration { return &p.Events }},
	{"PAYD_RETENTION_DELIVERIES", "30d", func(p *Policy) *time.Duration { return &p.Deliveries }},
	{"PAYD_RETENTION_REQUEST_LOGS", "30d", func(p *Policy) *time.Duration { return &p.RequestLogs }},
	{"PAYD_RETENTION_IDEMPOTENCY_KEYS", "24h", func(p *Policy) *time.Duration { return &p.IdempotencyKeys }},
}

// MinIdempotencyKeys is the shortest IdempotencyKeys a policy may set: a
// retried request must find its first answer for 24 hours.
const MinIdempotencyKeys = 24 * time.Hour

// minHorizon is the shortest non-zero horizon of the other kinds: shorter
// is more likely a typo than a wish, and would race the records' own use.
const minHorizon = time.Hour

// maxHorizon bounds a horizon (ten years), so a horizon subtracted from now
// never overflows.
const maxHorizon = 3650 * 24 * time.Hour

// PolicyFromEnv reads a Policy from the PAYD_RETENTION_* variables through
// getenv, each unset one taking its default, and checks it. The error names
// the variable at fault.
func PolicyFromEnv(getenv func(string) string) (Policy, error) {
	var p Policy
	for _, s := range Settings {
		v := strings.TrimSpace(getenv(s.Name))
		if v == "" {
			v = s.Default
		}
		d, err := ParseHorizon(v)
		if err != nil {
			return p, fmt.Errorf("%s: %w", s.Name, err)
		}
		*s.Field(&p) = d
	}
	return p, p.Validate()
}

// ParseHorizon parses a retention horizon: a number of days ("30d"), a Go
// duration ("720h"), or "0" for forever.
func ParseHorizon(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3650 {
			return 0, fmt.Errorf("%q is not a number of days from 0 to 3650 (such as 30d)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxHorizon {
		return 0, fmt.Errorf("%q is not a duration such as 30d or 720h (0 keeps forever)", s)
	}
	return d, nil
}

// Validate checks a policy; the error names the variable at fault.
func (p Policy) Validate() error {
	for _, s := range Settings[:3] {
		d := *s.Field(&p)
		if d < 0 || d > maxHorizon || (d != 0 && d < minHorizon) {
			return fmt.Errorf("%s: %s is not 0 (forever) or from 1h to 3650d", s.Name, horizonText(d))
		}
	}
	if p.IdempotencyKeys < MinIdempotencyKeys || p.IdempotencyKeys > maxHorizon {
		return fmt.Errorf("PAYD_RETENTION_IDEMPOTENCY_KEYS: %s is not from 24h to 3650d (a retried request must find its answer for 24 hours)",
			horizonText(p.IdempotencyKeys))
	}
	if p.Events != 0 && (p.Deliveries == 0 || p.Deliveries > p.Events) {
		return fmt.Errorf("PAYD_RETENTION_DELIVERIES: %s is longer than PAYD_RETENTION_EVENTS (%s): a delivery goes with its event at the latest",
			horizonText(p.Deliveries), horizonText(p.Events))
	}
	return nil
}

func horizonText(d time.Duration) string {
	if d == 0 {
		return "forever"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
