package webhooks

import (
	"context"
	"sort"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
)

// The circuit breaker: an endpoint whose attempts keep failing is disabled
// by payd, so it stops taking delivery slots and the merchant is told. Its
// deliveries are kept, waiting; enabling the endpoint again (API or portal)
// resumes them.
const (
	// DefaultBreakerFailures is how many consecutive failed attempts open
	// the breaker...
	DefaultBreakerFailures = 20
	// DefaultBreakerPeriod is how long, at least, they must span: a
	// receiver that is down for a short deploy is retried, not disabled.
	DefaultBreakerPeriod = 6 * time.Hour
)

// EventEndpointDisabled is emitted once when payd disables an endpoint after
// repeated failure, in the transaction that disables it.
const EventEndpointDisabled = "webhook_endpoint.disabled"

// DisabledEndpointObject is the object of a webhook_endpoint.disabled event:
// the endpoint as the API shows it, and why payd disabled it.
type DisabledEndpointObject struct {
	Endpoint
	DisabledReason      string `json:"disabled_reason"` // "repeated_failure"
	DisabledAt          Time   `json:"disabled_at"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	FailingSince        Time   `json:"failing_since"`
}

// breakerTally is what a batch of recorded attempts says about one endpoint.
type breakerTally struct {
	succeeded bool      // some attempt succeeded: the count starts again after the last one
	failures  int       // failed attempts after the last success (or all of them)
	firstFail time.Time // the first of those
}

// countForBreaker updates the failure counts of the endpoints of recorded
// attempts (only attempts that were sent count: not those payd refused to
// make) and disables every endpoint that now has at least breakerFailures
// consecutive failures spanning at least breakerPeriod. The disabling is a
// compare-and-set on the status, so however many processes record failures
// at once, the endpoint is disabled, and its event emitted, once.
func (s *Service) countForBreaker(ctx context.Context, tx *store.Tx, items []recordItem) ([]Endpoint, error) {
	if s.breakerFailures <= 0 {
		return nil, nil
	}
	tallies := map[string]*breakerTally{}
	var order []string
	for _, it := range items {
		if !it.o.sent {
			continue
		}
		t := tallies[it.c.endpointID]
		if t == nil {
			t = &breakerTally{}
			tallies[it.c.endpointID] = t
			order = append(order, it.c.endpointID)
		}
		if it.o.ok() {
			t.succeeded, t.failures = true, 0
			continue
		}
		if t.failures == 0 || it.o.at.Before(t.firstFail) {
			t.firstFail = it.o.at
		}
		t.failures++
	}
	// Endpoint rows are locked in id order, so recorders in two processes
	// cannot wait on each other.
	sort.Strings(order)
	// Endpoints whose attempts here all succeeded: one statement, which
	// writes (and locks) only rows that had failures counted.
	var healthy []string
	for _, id := range order {
		if t := tallies[id]; t.succeeded && t.failures == 0 {
			healthy = append(healthy, id)
		}
	}
	if len(healthy) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
			WHERE id IN (`+store.Placeholders(len(healthy))+`) AND consecutive_failures <> 0`, store.Args(healthy)...); err != nil {
			return nil, err
		}
	}
	now := tx.Now()
	var disabled []Endpoint
	for _, id := range order {
		t := tallies[id]
		var err error
		switch {
		case t.succeeded && t.failures == 0:
			continue
		case t.succeeded:
			_, err = tx.Exec(ctx, "UPDATE webhook_endpoints SET consecutive_failures = ?, failing_since = ? WHERE id = ?",
				t.failures, store.Micros(t.firstFail), id)
		default:
			_, err = tx.Exec(ctx, `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + ?,
				failing_since = COALESCE(failing_since, ?) WHERE id = ?`, t.failures, store.Micros(t.firstFail), id)
		}
		if err != nil {
			return nil, err
		}
		if t.failures == 0 {
			continue
		}
		ep, err := scanEndpoint(tx.QueryRow(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, disabled_at = ?, updated_at = ?
			WHERE id = ? AND status = 'enabled' AND deleted_at IS NULL AND consecutive_failures >= ? AND failing_since <= ?
			RETURNING `+endpointColumns, DisabledRepeatedFailure, store.Micros(now), store.Micros(now),
			id, s.breakerFailures, store.Micros(now.Add(-s.breakerPeriod))))
		if store.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		obj := DisabledEndpointObject{Endpoint: ep, DisabledReason: ep.DisabledReason, DisabledAt: Time{*ep.DisabledAt},
			ConsecutiveFailures: ep.ConsecutiveFailures, FailingSince: Time{*ep.FailingSince}}
		if _, err := events.Emit(ctx, tx, ep.merchantID, ep.Livemode, EventEndpointDisabled, "webhook_endpoint", ep.ID, obj); err != nil {
			return nil, err
		}
		disabled = append(disabled, ep)
	}
	return disabled, nil
}
