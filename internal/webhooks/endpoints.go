package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// Owner is whose data a call touches: every query is scoped by both.
type Owner struct {
	MerchantID string
	Livemode   bool
}

// Endpoint is a registered webhook endpoint as the API returns it. Secret is
// set only in the answer to its creation.
type Endpoint struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"` // "webhook_endpoint"
	URL           string   `json:"url"`
	EnabledEvents []string `json:"enabled_events"`
	Description   string   `json:"description"`
	Status        string   `json:"status"` // enabled or disabled
	Livemode      bool     `json:"livemode"`
	CreatedAt     Time     `json:"created_at"`
	// MaxRate is the most deliveries per second payd starts to this
	// endpoint, across every process; nil: no limit.
	MaxRate *int `json:"max_rate"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing deliveries (until then each carries both
	// signatures); nil when no previous secret was kept. A past time stays
	// as the record of when the old secret stopped signing.
	PreviousSecretExpiresAt *Time  `json:"previous_secret_expires_at"`
	Secret                  string `json:"secret,omitempty"`

	// DisabledReason is DisabledRepeatedFailure when payd's circuit breaker
	// disabled the endpoint (empty otherwise); the portal shows it with
	// DisabledAt, ConsecutiveFailures and FailingSince. Not in the API
	// object: the webhook_endpoint.disabled event carries them.
	DisabledReason      string     `json:"-"`
	DisabledAt          *time.Time `json:"-"`
	ConsecutiveFailures int        `json:"-"`
	FailingSince        *time.Time `json:"-"`

	merchantID    string
	sealed        string
	secretVersion int
}

// DisabledRepeatedFailure is the disabled_reason of an endpoint payd
// disabled after repeated failed attempts.
const DisabledRepeatedFailure = "repeated_failure"

// Paused reports whether payd's circuit breaker disabled the endpoint: its
// deliveries wait (they are neither attempted nor failed) until it is
// enabled again.
func (ep Endpoint) Paused() bool { return ep.Status == EndpointDisabled && ep.DisabledReason != "" }

// Endpoint statuses.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// Limits on endpoint fields.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 500
	MaxEndpoints         = 100 // per merchant and mode
	// MinMaxRate and MaxMaxRate bound an endpoint's max_rate (deliveries
	// per second).
	MinMaxRate = 1
	MaxMaxRate = 1000
)

// EndpointParams creates or updates an endpoint; nil fields are left alone
// on update.
type EndpointParams struct {
	URL           *string
	EnabledEvents []string // nil: unchanged (update) or ["*"] (create)
	Description   *string
	Disabled      *bool
	// MaxRate is set when the request names max_rate; its Value nil
	// clears the limit.
	MaxRate *MaxRate
}

// MaxRate is a max_rate given in a request: Value nil means no limit.
type MaxRate struct{ Value *int }

func validateMaxRate(r *MaxRate) error {
	if r == nil || r.Value == nil {
		return nil
	}
	if v := *r.Value; v < MinMaxRate || v > MaxMaxRate {
		return errs.Invalid("max_rate", "parameter_invalid", "max_rate must be a whole number of deliveries per second from %d to %d, or null for no limit; got %d",
			MinMaxRate, MaxMaxRate, v)
	}
	return nil
}

// rateArg is a max_rate as a column value (NULL: no limit).
func rateArg(r *int) any {
	if r == nil {
		return nil
	}
	return *r
}

// DeletedEndpoint is the answer to DELETE.
type DeletedEndpoint struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// ValidateURL checks an endpoint URL for a mode (also at delivery time the
// dialer refuses addresses the mode does not allow). Live: https, a public
// host. Test: http or https, a public or loopback host.
func (s *Service) ValidateURL(ctx context.Context, raw string, livemode bool) error {
	if raw == "" {
		return errs.Missing("url")
	}
	if len(raw) > MaxURLLength {
		return errs.Invalid("url", "url_invalid", "url must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errs.Invalid("url", "url_invalid", "url must be an absolute http(s) URL such as https://example.com/webhooks")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if livemode {
			return errs.Invalid("url", "url_https_required", "live webhook endpoints must use https")
		}
	default:
		return errs.Invalid("url", "url_invalid", "url scheme must be https (or http in test mode), not %q", u.Scheme)
	}
	if u.User != nil {
		return errs.Invalid("url", "url_invalid", "url must not carry credentials; authenticate deliveries by their signature")
	}
	if u.Fragment != "" {
		return errs.Invalid("url", "url_invalid", "url must not have a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return errs.Invalid("url", "url_invalid", "url has no host")
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return errs.Invalid("url", "url_invalid", "url port %q is not a port number", p)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := checkAddr(ip, livemode); err != nil {
			return errs.Invalid("url", "url_address_refused", "url host is not allowed: %s", addrReason(err))
		}
		return nil
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if livemode {
			return errs.Invalid("url", "url_address_refused", "live webhook endpoints must be public: %s is a loopback name", host)
		}
		return nil
	}
	if !validHostname(lower) {
		return errs.Invalid("url", "url_invalid", "url host %q is not a valid host name", host)
	}
	// Resolve now too, to refuse an obviously internal name at once. A name
	// that does not resolve yet is accepted: the dialer checks every
	// connection anyway.
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if addrs, err := s.resolve(rctx, host); err == nil {
		for _, a := range addrs {
			if err := checkAddr(a, livemode); err != nil {
				return errs.Invalid("url", "url_address_refused", "url host %s resolves to an address that is not allowed: %s", host, addrReason(err))
			}
		}
	}
	return nil
}

func addrReason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrAddressRefused.Error()+": ")
}

func validHostname(h string) bool {
	if len(h) > 253 || strings.ContainsAny(h, " /\\@") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
				return false
			}
		}
	}
	// A last label of digits or hex ("0x7f.1", "2130706433") is read as an
	// IPv4 address by some resolvers (inet_aton): refuse such names.
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	if strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "" {
		return false
	}
	return net.ParseIP(h) == nil
}

// validateEvents checks enabled_events: "*" alone or known event types.
func validateEvents(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, errs.Invalid("enabled_events", "parameter_invalid", `enabled_events must list at least one event type, or "*" for all`)
	}
	seen := map[string]bool{}
	var out []string
	for i, t := range in {
		if t != "*" && !KnownEventType(t) {
			return nil, errs.Invalid("enabled_events", "event_type_unknown",
				"enabled_events[%d]: unknown event type %q; known types: *, %s", i, t, strings.Join(EventTypes(), ", "))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if seen["*"] && len(out) > 1 {
		return nil, errs.Invalid("enabled_events", "parameter_invalid", `"*" already takes every event type; list it alone`)
	}
	return out, nil
}

func validateDescription(d string) error {
	if !utf8.ValidString(d) {
		return errs.Invalid("description", "parameter_invalid", "description must be valid UTF-8")
	}
	if utf8.RuneCountInString(d) > MaxDescriptionLength {
		return errs.Invalid("description", "parameter_invalid", "description must be at most %d characters", MaxDescriptionLength)
	}
	return nil
}

// Idempotency identifies a create request: the caller's Idempotency-Key,
// its principal, and a hash of the request.
type Idempotency struct {
	PrincipalID string
	Key         string
	RequestHash string
}

// CreateEndpoint registers an endpoint and returns it with its secret, which
// is shown only in this answer. With idem, a repeat of the same request
// returns the endpoint it made (replayed true), secret included, and the same
// key with another request is 422 idempotency_key_reused. The key is kept on
// the endpoint row rather than in the shared idempotency store, whose stored
// answers are in clear: the secret stays sealed.
func (s *Service) CreateEndpoint(ctx context.Context, o Owner, p EndpointParams, idem *Idempotency) (ep Endpoint, replayed bool, err error) {
	if idem != nil {
		if ep, ok, err := s.replayCreate(ctx, o, idem); ok || err != nil {
			return ep, ok, err
		}
	}
	if p.URL == nil {
		return Endpoint{}, false, errs.Missing("url")
	}
	if err := s.ValidateURL(ctx, *p.URL, o.Livemode); err != nil {
		return Endpoint{}, false, err
	}
	events := []string{"*"}
	if p.EnabledEvents != nil {
		if events, err = validateEvents(p.EnabledEvents); err != nil {
			return Endpoint{}, false, err
		}
	}
	desc := ""
	if p.Description != nil {
		desc = *p.Description
		if err := validateDescription(desc); err != nil {
			return Endpoint{}, false, err
		}
	}
	if err := validateMaxRate(p.MaxRate); err != nil {
		return Endpoint{}, false, err
	}
	status := EndpointEnabled
	if p.Disabled != nil && *p.Disabled {
		status = EndpointDisabled
	}
	ep = Endpoint{ID: ids.New("we_"), Object: "webhook_endpoint", URL: *p.URL, EnabledEvents: events, Description: desc,
		Status: status, Livemode: o.Livemode, Secret: newSecret(), secretVersion: 1}
	if p.MaxRate != nil {
		ep.MaxRate = p.MaxRate.Value
	}
	sealed, err := s.sealSecret(ctx, ep.Secret, ep.ID, o.Livemode)
	if err != nil {
		return Endpoint{}, false, err
	}
	var idemPrincipal, idemKey, idemHash any
	if idem != nil {
		idemPrincipal, idemKey, idemHash = idem.PrincipalID, idem.Key, idem.RequestHash
	}
	evJSON, _ := json.Marshal(events)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_endpoints WHERE merchant_id = ? AND livemode = ? AND deleted_at IS NULL",
			o.MerchantID, o.Livemode).Scan(&n); err != nil {
			return err
		}
		if n >= MaxEndpoints {
			return errs.Invalid("url", "endpoint_limit_reached", "at most %d webhook endpoints per mode; delete one first", MaxEndpoints)
		}
		ep.CreatedAt = Time{tx.Now()}
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (id, merchant_id, livemode, url, enabled_events, description, status, secret_sealed,
			idem_principal, idem_key, idem_hash, max_rate, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ep.ID, o.MerchantID, o.Livemode, ep.URL, string(evJSON), desc, status, sealed, idemPrincipal, idemKey, idemHash, rateArg(ep.MaxRate),
			store.Micros(ep.CreatedAt.Time), store.Micros(ep.CreatedAt.Time))
		return err
	})
	if store.IsConflict(err) && idem != nil {
		// The same key raced us and won: answer what it made.
		if ep, ok, err := s.replayCreate(ctx, o, idem); ok || err != nil {
			return ep, ok, err
		}
	}
	if err != nil {
		return Endpoint{}, false, err
	}
	return ep, false, nil
}

// replayCreate finds the endpoint an earlier create with the same key made.
func (s *Service) replayCreate(ctx context.Context, o Owner, idem *Idempotency) (Endpoint, bool, error) {
	var hash string
	var deleted sql.NullInt64
	row := s.db.QueryRow(ctx, "SELECT "+endpointColumns+`, idem_hash, deleted_at FROM webhook_endpoints
		WHERE merchant_id = ? AND livemode = ? AND idem_principal = ? AND idem_key = ?`, o.MerchantID, o.Livemode, idem.PrincipalID, idem.Key)
	ep, err := scanEndpoint(row, &hash, &deleted)
	if store.IsNotFound(err) {
		return Endpoint{}, false, nil
	}
	if err != nil {
		return Endpoint{}, false, err
	}
	if hash != idem.RequestHash {
		return Endpoint{}, false, &errs.Error{Kind: errs.KindIdempotency, Status: 422, Code: "idempotency_key_reused",
			Message: "this Idempotency-Key was used with a different request; use a new key for a new request"}
	}
	if ep.Secret, err = s.openSecret(ctx, ep.sealed, ep.ID); err != nil {
		return Endpoint{}, false, err
	}
	return ep, true, nil
}

const endpointColumns = "id, merchant_id, livemode, url, enabled_events, description, status, secret_sealed, created_at, " +
	"disabled_reason, disabled_at, consecutive_failures, failing_since, max_rate, previous_secret_expires_at, secret_version"

func scanEndpoint(row interface{ Scan(...any) error }, extra ...any) (Endpoint, error) {
	var ep Endpoint
	var events string
	var created int64
	var reason sql.NullString
	var disabledAt, failingSince, maxRate, prevExpires sql.NullInt64
	dst := append([]any{&ep.ID, &ep.merchantID, &ep.Livemode, &ep.URL, &events, &ep.Description, &ep.Status, &ep.sealed, &created,
		&reason, &disabledAt, &ep.ConsecutiveFailures, &failingSince, &maxRate, &prevExpires, &ep.secretVersion}, extra...)
	if err := row.Scan(dst...); err != nil {
		return ep, err
	}
	ep.Object = "webhook_endpoint"
	ep.CreatedAt = Time{store.FromMicros(created)}
	ep.DisabledReason = reason.String
	ep.DisabledAt, ep.FailingSince = store.NullMicros(disabledAt), store.NullMicros(failingSince)
	if maxRate.Valid {
		v := int(maxRate.Int64)
		ep.MaxRate = &v
	}
	ep.PreviousSecretExpiresAt = timePtr(store.NullMicros(prevExpires))
	if err := json.Unmarshal([]byte(events), &ep.EnabledEvents); err != nil {
		return ep, fmt.Errorf("endpoint %s: enabled_events: %w", ep.ID, err)
	}
	return ep, nil
}

func getEndpoint(ctx context.Context, q store.Querier, o Owner, id string) (Endpoint, error) {
	return readEndpoint(ctx, q, o, id, "")
}

// readEndpoint is getEndpoint with a locking clause (ForUpdate) or none.
func readEndpoint(ctx context.Context, q store.Querier, o Owner, id, lock string) (Endpoint, error) {
	ep, err := scanEndpoint(q.QueryRow(ctx, "SELECT "+endpointColumns+` FROM webhook_endpoints
		WHERE id = ? AND merchant_id = ? AND livemode = ? AND deleted_at IS NULL`+lock, id, o.MerchantID, o.Livemode))
	if store.IsNotFound(err) {
		return ep, errs.NotFound("webhook_endpoint", id)
	}
	return ep, err
}

// GetEndpoint returns one endpoint (without its secret).
func (s *Service) GetEndpoint(ctx context.Context, o Owner, id string) (Endpoint, error) {
	return getEndpoint(ctx, s.db, o, id)
}

// ListEndpoints returns a page of endpoints, newest first.
func (s *Service) ListEndpoints(ctx context.Context, o Owner, page pagination.Page) ([]Endpoint, bool, error) {
	cond, args, tail := page.Clause("id")
	rows, err := s.db.Query(ctx, "SELECT "+endpointColumns+` FROM webhook_endpoints
		WHERE merchant_id = ? AND livemode = ? AND deleted_at IS NULL`+cond+tail, append([]any{o.MerchantID, o.Livemode}, args...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []Endpoint
	for rows.Next() {
		ep, err := scanEndpoint(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, ep)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}

// UpdateEndpoint changes an endpoint's url, events, description or status,
// in the unit of work of the request cl claims (store.NoClaim: on its own).
// Disabling an endpoint stops new deliveries to it; its pending ones end
// failed at their next attempt.
func (s *Service) UpdateEndpoint(ctx context.Context, cl store.Claim, o Owner, id string, p EndpointParams) (Endpoint, error) {
	if p.URL != nil {
		if err := s.ValidateURL(ctx, *p.URL, o.Livemode); err != nil {
			return Endpoint{}, err
		}
	}
	var events []string
	if p.EnabledEvents != nil {
		var err error
		if events, err = validateEvents(p.EnabledEvents); err != nil {
			return Endpoint{}, err
		}
	}
	if p.Description != nil {
		if err := validateDescription(*p.Description); err != nil {
			return Endpoint{}, err
		}
	}
	if err := validateMaxRate(p.MaxRate); err != nil {
		return Endpoint{}, err
	}
	var ep Endpoint
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		// Locked, and the status written only over the one read: the
		// circuit breaker also changes it, and an edit made on a stale
		// read would undo the breaker's disable without resuming.
		var err error
		if ep, err = readEndpoint(ctx, tx, o, id, tx.Dialect().ForUpdate()); err != nil {
			return err
		}
		readStatus := ep.Status
		if p.URL != nil {
			ep.URL = *p.URL
		}
		if events != nil {
			ep.EnabledEvents = events
		}
		if p.Description != nil {
			ep.Description = *p.Description
		}
		if p.MaxRate != nil {
			ep.MaxRate = p.MaxRate.Value
		}
		wasDisabled, wasPaused := ep.Status == EndpointDisabled, ep.Paused()
		if p.Disabled != nil {
			ep.Status = EndpointEnabled
			if *p.Disabled {
				ep.Status = EndpointDisabled
			}
		}
		now := store.Micros(tx.Now())
		evJSON, _ := json.Marshal(ep.EnabledEvents)
		res, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET url = ?, enabled_events = ?, description = ?, status = ?, max_rate = ?, updated_at = ?
			WHERE id = ? AND merchant_id = ? AND livemode = ? AND deleted_at IS NULL AND status = ?`,
			ep.URL, string(evJSON), ep.Description, ep.Status, rateArg(ep.MaxRate), now, id, o.MerchantID, o.Livemode, readStatus)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			// The row was read locked and not deleted, so only a change of
			// its status could miss here: a conflict, not a missing endpoint.
			return errs.InvalidState("webhook endpoint %s changed while this request ran; retrieve it and try again", id)
		}
		switch {
		case p.Disabled != nil && *p.Disabled && ep.Paused():
			// The merchant's own choice replaces the breaker's: like any
			// endpoint the merchant disabled, its waiting deliveries end
			// failed at their next attempt.
			ep.DisabledReason = ""
			_, err = tx.Exec(ctx, "UPDATE webhook_endpoints SET disabled_reason = NULL WHERE id = ?", id)
		case p.Disabled != nil && !*p.Disabled && wasDisabled:
			ep, err = s.resume(ctx, tx, ep, wasPaused)
		}
		return err
	})
	if err == nil && p.Disabled != nil && !*p.Disabled {
		s.wakeDelivery()
	}
	return ep, err
}

// resume is enabling a disabled endpoint: its failure count starts again,
// and the deliveries that waited while payd kept it disabled are due at
// once (still one at a time per slot: the claim's caps apply).
func (s *Service) resume(ctx context.Context, tx *store.Tx, ep Endpoint, paused bool) (Endpoint, error) {
	now := store.Micros(tx.Now())
	if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL, disabled_reason = NULL,
		disabled_at = NULL WHERE id = ?`, ep.ID); err != nil {
		return ep, err
	}
	if paused {
		if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ?
			WHERE endpoint_id = ? AND status = 'pending' AND lease IS NULL AND next_attempt_at > ?`, now, now, ep.ID, now); err != nil {
			return ep, err
		}
	}
	ep.DisabledReason, ep.DisabledAt, ep.ConsecutiveFailures, ep.FailingSince = "", nil, 0, nil
	return ep, nil
}

// DeleteEndpoint removes an endpoint: it gets no new deliveries, its pending
// ones end failed, and its past deliveries stay visible on their events.
func (s *Service) DeleteEndpoint(ctx context.Context, o Owner, id string) (DeletedEndpoint, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET deleted_at = ?, updated_at = ?
			WHERE id = ? AND merchant_id = ? AND livemode = ? AND deleted_at IS NULL`,
			store.Micros(tx.Now()), store.Micros(tx.Now()), id, o.MerchantID, o.Livemode)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.NotFound("webhook_endpoint", id)
		}
		return nil
	})
	if err != nil {
		return DeletedEndpoint{}, err
	}
	s.wakeDelivery()
	return DeletedEndpoint{ID: id, Object: "webhook_endpoint", Deleted: true}, nil
}

// subscribers returns the endpoints of a merchant and mode that take new
// deliveries: the enabled ones, and those payd's circuit breaker disabled
// (their deliveries wait until the endpoint is enabled again, so nothing
// that happened meanwhile is missed). Callers that want only enabled ones
// check Status.
func subscribers(ctx context.Context, q store.Querier, merchantID string, livemode bool) ([]Endpoint, error) {
	rows, err := q.Query(ctx, "SELECT "+endpointColumns+` FROM webhook_endpoints
		WHERE merchant_id = ? AND livemode = ? AND (status = 'enabled' OR disabled_reason IS NOT NULL) AND deleted_at IS NULL ORDER BY id`, merchantID, livemode)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Endpoint
	for rows.Next() {
		ep, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, rows.Err()
}
