package portal

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// auditEntry is one row of the audit log: who did what to which object, in
// which merchant and mode, when, and how it ended.
type auditEntry struct {
	ID          string
	PrincipalID string
	Email       string
	Action      string
	ObjectID    string
	Outcome     string // "ok" or the error code that refused it
	Detail      string
	IP          string
	Livemode    bool
	CreatedAt   time.Time
}

// audit records an action. It is written after the action, in its own
// transaction (the action's transaction belongs to the capability that did
// it); a failure to write is logged, never shown to the user as the action
// failing.
func (p *Portal) audit(ctx context.Context, c *reqCtx, action, objectID string, actionErr error, detail string) {
	outcome := "ok"
	if actionErr != nil {
		outcome = "error"
		if e := errs.As(actionErr); e != nil {
			outcome = e.Code
		}
	}
	p.auditAs(ctx, c.sess.MerchantID, c.live, c.sess.UserID, c.ip, action, objectID, outcome, detail)
}

func (p *Portal) auditAs(ctx context.Context, merchantID string, live bool, principal, ip, action, objectID, outcome, detail string) {
	if len(detail) > 500 {
		detail = detail[:500]
	}
	_, err := p.cfg.DB.Exec(context.WithoutCancel(ctx), `INSERT INTO portal_audit (id, merchant_id, livemode, principal_id, action, object_id, outcome, detail, ip, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ids.New("aud_"), merchantID, live, principal, action, objectID, outcome, detail, ip,
		store.Micros(p.cfg.DB.Now()))
	if err != nil {
		p.cfg.Logger.Error("portal audit write", "err", err, "action", action, "merchant_id", merchantID)
	}
}

// listAudit pages through a merchant's audit log in one mode, newest first.
func (p *Portal) listAudit(ctx context.Context, merchantID string, live bool, page pagination.Page) ([]auditEntry, bool, error) {
	cond, args, tail := page.Clause("a.id")
	rows, err := p.cfg.DB.Query(ctx, `SELECT a.id, a.principal_id, COALESCE(u.email, ''), a.action, a.object_id, a.outcome, a.detail, a.ip, a.livemode, a.created_at
		FROM portal_audit a LEFT JOIN users u ON u.id = a.principal_id
		WHERE a.merchant_id = ? AND a.livemode = ?`+cond+tail, append([]any{merchantID, live}, args...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []auditEntry
	for rows.Next() {
		var e auditEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.PrincipalID, &e.Email, &e.Action, &e.ObjectID, &e.Outcome, &e.Detail, &e.IP, &e.Livemode, &at); err != nil {
			return nil, false, err
		}
		e.CreatedAt = store.FromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(page, out)
	return out, more, nil
}
