package merchants

import (
	"context"
	"database/sql"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// AuditEvent is one row of a merchant's audit log as the API shows it: who
// (Actor) did what (Action) to which object, in which mode, when, and how it
// ended (Outcome: "ok" or the error code that refused it).
type AuditEvent struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	Action    string     `json:"action"`
	Actor     AuditActor `json:"actor"`
	ObjectID  *string    `json:"object_id"`
	Outcome   string     `json:"outcome"`
	Detail    string     `json:"detail"`
	IP        *string    `json:"ip"`
	Livemode  bool       `json:"livemode"`
	CreatedAt time.Time  `json:"created_at"`
}

// AuditActor is the principal an audit event names: a portal user (type
// user, with the user's email), an API key (type api_key) or the operator's
// command line (type operator, id "operator").
type AuditActor struct {
	Type  string  `json:"type"`
	ID    string  `json:"id"`
	Email *string `json:"email"`
}

// AuditQuery is a request for one page of the audit log: the page, and
// filters that each narrow it when set.
type AuditQuery struct {
	Page pagination.Page
	// Action is one action (api_key.create) or, ending in ".*", a family
	// of them (api_key.*).
	Action   string
	Actor    string
	ObjectID string
	// CreatedFrom <= created_at < CreatedUntil, each nil when unbounded.
	CreatedFrom, CreatedUntil *time.Time
}

var (
	auditActionRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?$`)
	auditIDRE     = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

// maxAuditFilter bounds a filter's length (ids and actions are far shorter).
const maxAuditFilter = 64

// ParseAuditQuery reads GET /v1/audit_events' query: limit, starting_after,
// ending_before (audit event ids, aud_...), action, actor, object_id and
// created[gte|gt|lte|lt]. A bad value is a 400 naming its parameter.
func ParseAuditQuery(q url.Values) (AuditQuery, error) {
	var aq AuditQuery
	var err error
	if aq.Page, err = pagination.Parse(q); err != nil {
		return aq, err
	}
	for _, c := range []struct{ param, cur string }{{"starting_after", aq.Page.StartingAfter}, {"ending_before", aq.Page.EndingBefore}} {
		if c.cur != "" && (!strings.HasPrefix(c.cur, "aud_") || len(c.cur) > maxAuditFilter || !auditIDRE.MatchString(c.cur)) {
			return aq, errs.Invalid(c.param, "parameter_invalid", "%s must be an audit event id (aud_...)", c.param)
		}
	}
	one := func(param string) (string, error) {
		v := q[param]
		if len(v) > 1 {
			return "", errs.Invalid(param, "parameter_invalid", "%s may be given once", param)
		}
		if len(v) == 0 {
			return "", nil
		}
		if len(v[0]) > maxAuditFilter {
			return "", errs.Invalid(param, "parameter_invalid", "%s must be at most %d characters", param, maxAuditFilter)
		}
		return v[0], nil
	}
	if aq.Action, err = one("action"); err != nil {
		return aq, err
	}
	if aq.Action != "" && !auditActionRE.MatchString(aq.Action) {
		return aq, errs.Invalid("action", "parameter_invalid", "action must be an action such as api_key.create, or a family such as api_key.*")
	}
	if aq.Actor, err = one("actor"); err != nil {
		return aq, err
	}
	if aq.Actor != "" && aq.Actor != OperatorPrincipal &&
		!((strings.HasPrefix(aq.Actor, "usr_") || strings.HasPrefix(aq.Actor, "key_")) && auditIDRE.MatchString(aq.Actor)) {
		return aq, errs.Invalid("actor", "parameter_invalid", "actor must be a portal user id (usr_...), an API key id (key_...) or operator")
	}
	if aq.ObjectID, err = one("object_id"); err != nil {
		return aq, err
	}
	if aq.ObjectID != "" && !auditIDRE.MatchString(aq.ObjectID) {
		return aq, errs.Invalid("object_id", "parameter_invalid", "object_id must be an object's id (letters, digits and _)")
	}
	if aq.CreatedFrom, aq.CreatedUntil, err = pagination.ParseCreated(q); err != nil {
		return aq, err
	}
	return aq, nil
}

// ListAuditEvents pages through a merchant's audit log in one mode, newest
// first: the log the portal shows (settings, keys, users, approvals and the
// portal's other actions). Another merchant's or the other mode's events are
// never read.
func (s *Service) ListAuditEvents(ctx context.Context, merchantID string, livemode bool, q AuditQuery) (pagination.List[AuditEvent], error) {
	where := ` WHERE a.merchant_id = ? AND a.livemode = ?`
	args := []any{merchantID, livemode}
	switch {
	case strings.HasSuffix(q.Action, ".*"):
		// A family: the actions that start with "api_key." (compared as
		// bytes, not through a collation or LIKE's wildcards).
		family := strings.TrimSuffix(q.Action, "*")
		where += ` AND substr(a.action, 1, ?) = ?`
		args = append(args, len(family), family)
	case q.Action != "":
		where += ` AND a.action = ?`
		args = append(args, q.Action)
	}
	if q.Actor != "" {
		where += ` AND a.principal_id = ?`
		args = append(args, q.Actor)
	}
	if q.ObjectID != "" {
		where += ` AND a.object_id = ?`
		args = append(args, q.ObjectID)
	}
	if q.CreatedFrom != nil {
		where += ` AND a.created_at >= ?`
		args = append(args, store.Micros(*q.CreatedFrom))
	}
	if q.CreatedUntil != nil {
		where += ` AND a.created_at < ?`
		args = append(args, store.Micros(*q.CreatedUntil))
	}
	cond, cargs, tail := q.Page.ClauseScoped("a.id", "a.merchant_id", "a.livemode")
	rows, err := s.db.Query(ctx, `SELECT a.id, a.principal_id, u.email, a.action, a.object_id, a.outcome, a.detail, a.ip, a.livemode, a.created_at
		FROM portal_audit a LEFT JOIN users u ON u.id = a.principal_id AND u.merchant_id = a.merchant_id`+where+cond+tail, append(args, cargs...)...)
	if err != nil {
		return pagination.List[AuditEvent]{}, err
	}
	defer rows.Close()
	var out []AuditEvent
	for rows.Next() {
		var e AuditEvent
		var email sql.NullString
		var object, ip string
		var at int64
		if err := rows.Scan(&e.ID, &e.Actor.ID, &email, &e.Action, &object, &e.Outcome, &e.Detail, &ip, &e.Livemode, &at); err != nil {
			return pagination.List[AuditEvent]{}, err
		}
		e.Object = "audit_event"
		e.Actor.Type = actorType(e.Actor.ID)
		if email.Valid {
			e.Actor.Email = &email.String
		}
		if object != "" {
			e.ObjectID = &object
		}
		if ip != "" {
			e.IP = &ip
		}
		e.CreatedAt = store.FromMicros(at).UTC().Truncate(time.Second)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return pagination.List[AuditEvent]{}, err
	}
	out, more := pagination.Finish(q.Page, out)
	return pagination.NewList(out, more), nil
}

// actorType names the kind of principal an audit row records.
func actorType(principal string) string {
	switch {
	case principal == OperatorPrincipal:
		return "operator"
	case strings.HasPrefix(principal, "usr_"):
		return "user"
	case strings.HasPrefix(principal, "key_"):
		return "api_key"
	}
	return "system"
}
