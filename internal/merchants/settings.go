package merchants

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Four-eyes controls are kept per merchant AND mode: a test key can read and
// change test mode's only. Tightening a control applies at once; loosening
// it (raising or clearing the approval threshold) applies at once only for a
// portal admin (whose session passed the second factor when one is
// enrolled); from an API key it becomes a pending SettingsChange that
// another person must approve. Every loosening leaves a row in the audit log
// and a settings.updated event.

// Event types of the settings.
const (
	EventSettingsUpdated         = "settings.updated"
	EventSettingsChangeRequested = "settings.change_requested"
)

// Settings are a merchant's controls in one mode.
type Settings struct {
	Object                 string `json:"object"`
	Livemode               bool   `json:"livemode"`
	ApprovalThresholdMinor *int64 `json:"approval_threshold_minor"`
}

// SettingsChange is a request to loosen a control, waiting for another
// person's approval (status pending), applied, or canceled.
type SettingsChange struct {
	ID                     string     `json:"id"`
	Object                 string     `json:"object"`
	Livemode               bool       `json:"livemode"`
	ApprovalThresholdMinor *int64     `json:"approval_threshold_minor"`
	Status                 string     `json:"status"`
	RequestedBy            string     `json:"requested_by"`
	ApprovedBy             *string    `json:"approved_by"`
	CreatedAt              time.Time  `json:"created_at"`
	DecidedAt              *time.Time `json:"decided_at"`
}

// loosens reports whether moving the threshold from cur to next lets more
// money leave without a second person: clearing it, or raising it.
func loosens(cur, next *int64) bool {
	if cur == nil {
		return false
	}
	return next == nil || *next > *cur
}

// Settings returns the merchant's controls in one mode.
func (s *Service) Settings(ctx context.Context, merchantID string, livemode bool) (Settings, error) {
	t, err := ApprovalThreshold(ctx, s.db, merchantID, livemode)
	return Settings{Object: "settings", Livemode: livemode, ApprovalThresholdMinor: t}, err
}

// UpdateThreshold asks, as principal by, for a new approval threshold in one
// mode (nil clears it). A tightening, or any change by a portal admin
// (admin true), applies at once and returns a nil change; a loosening from an
// API key is recorded as a pending change and returned.
func (s *Service) UpdateThreshold(ctx context.Context, merchantID string, livemode bool, threshold *int64, by string, admin bool) (*SettingsChange, error) {
	if threshold != nil && *threshold < 0 {
		return nil, errs.Invalid("approval_threshold_minor", "parameter_invalid", "approval_threshold_minor must be zero or positive")
	}
	var change *SettingsChange
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		change = nil
		cur, err := thresholdForUpdate(ctx, tx, merchantID, livemode)
		if err != nil {
			return err
		}
		if !loosens(cur, threshold) || admin {
			return applyThreshold(ctx, tx, merchantID, livemode, cur, threshold, by, "")
		}
		c := SettingsChange{ID: ids.New("setchg_"), Object: "settings_change", Livemode: livemode, ApprovalThresholdMinor: threshold,
			Status: "pending", RequestedBy: by, CreatedAt: tx.Now()}
		if _, err := tx.Exec(ctx, `INSERT INTO settings_changes (id, merchant_id, livemode, approval_threshold_minor, status, requested_by, created_at)
			VALUES (?, ?, ?, ?, 'pending', ?, ?)`, c.ID, merchantID, livemode, nullable(threshold), by, store.Micros(c.CreatedAt)); err != nil {
			return err
		}
		if err := auditSettings(ctx, tx, merchantID, livemode, by, "settings.change_requested", c.ID,
			fmt.Sprintf("approval_threshold_minor %s → %s, waiting for another person", showThreshold(cur), showThreshold(threshold))); err != nil {
			return err
		}
		if _, err := events.Emit(ctx, tx, merchantID, livemode, EventSettingsChangeRequested, "settings_change", c.ID, c); err != nil {
			return err
		}
		change = &c
		return nil
	})
	return change, err
}

// ApproveSettingsChange applies a pending change. The approver must be
// another person than the requester (403 self_approval_not_allowed); the
// change moves pending → applied with a compare-and-set, so two racing
// approvals apply it once.
func (s *Service) ApproveSettingsChange(ctx context.Context, merchantID string, livemode bool, id, approver string) (SettingsChange, error) {
	var c SettingsChange
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = getSettingsChange(ctx, tx, merchantID, livemode, id); err != nil {
			return err
		}
		if c.Status != "pending" {
			return errs.InvalidState("settings change %s is %s", id, c.Status)
		}
		same, err := SamePerson(ctx, tx, c.RequestedBy, approver, c.CreatedAt)
		if err != nil {
			return err
		}
		if same {
			return errs.Permission("self_approval_not_allowed", "the person who asked for this settings change cannot approve it; another key's or portal user's owner must")
		}
		res, err := tx.Exec(ctx, "UPDATE settings_changes SET status = 'applied', approved_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
			approver, store.Micros(tx.Now()), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.InvalidState("settings change %s is no longer pending", id)
		}
		cur, err := thresholdForUpdate(ctx, tx, merchantID, livemode)
		if err != nil {
			return err
		}
		if err := applyThreshold(ctx, tx, merchantID, livemode, cur, c.ApprovalThresholdMinor, approver, c.ID); err != nil {
			return err
		}
		c, err = getSettingsChange(ctx, tx, merchantID, livemode, id)
		return err
	})
	return c, err
}

// SettingsChange returns one change of the merchant in one mode (another
// merchant's or mode's: not found).
func (s *Service) SettingsChange(ctx context.Context, merchantID string, livemode bool, id string) (SettingsChange, error) {
	return getSettingsChange(ctx, s.db, merchantID, livemode, id)
}

// PendingSettingsChanges lists the changes waiting for approval, oldest first.
func (s *Service) PendingSettingsChanges(ctx context.Context, merchantID string, livemode bool) ([]SettingsChange, error) {
	rows, err := s.db.Query(ctx, "SELECT "+changeColumns+" FROM settings_changes WHERE merchant_id = ? AND livemode = ? AND status = 'pending' ORDER BY id LIMIT 100",
		merchantID, livemode)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SettingsChange
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

const changeColumns = "id, livemode, approval_threshold_minor, status, requested_by, approved_by, created_at, decided_at"

func scanChange(row interface{ Scan(...any) error }) (SettingsChange, error) {
	c := SettingsChange{Object: "settings_change"}
	var t sql.NullInt64
	var approver sql.NullString
	var created int64
	var decided sql.NullInt64
	if err := row.Scan(&c.ID, &c.Livemode, &t, &c.Status, &c.RequestedBy, &approver, &created, &decided); err != nil {
		return c, err
	}
	if t.Valid {
		c.ApprovalThresholdMinor = &t.Int64
	}
	if approver.Valid {
		c.ApprovedBy = &approver.String
	}
	c.CreatedAt = store.FromMicros(created)
	c.DecidedAt = store.NullMicros(decided)
	return c, nil
}

func getSettingsChange(ctx context.Context, q store.Querier, merchantID string, livemode bool, id string) (SettingsChange, error) {
	c, err := scanChange(q.QueryRow(ctx, "SELECT "+changeColumns+" FROM settings_changes WHERE id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, livemode))
	if store.IsNotFound(err) {
		return c, errs.NotFound("settings_change", id)
	}
	return c, err
}

// thresholdForUpdate reads the threshold, locking the settings row (made
// first if the merchant has none) so concurrent changes serialise.
func thresholdForUpdate(ctx context.Context, tx *store.Tx, merchantID string, livemode bool) (*int64, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO merchant_settings (merchant_id, livemode, approval_threshold_minor, updated_at) VALUES (?, ?, NULL, ?)
		ON CONFLICT (merchant_id, livemode) DO NOTHING`, merchantID, livemode, store.Micros(tx.Now())); err != nil {
		if store.IsConflict(err) || store.IsNotFound(err) {
			return nil, errs.NotFound("merchant", merchantID)
		}
		return nil, err
	}
	var t sql.NullInt64
	if err := tx.QueryRow(ctx, "SELECT approval_threshold_minor FROM merchant_settings WHERE merchant_id = ? AND livemode = ?"+tx.Dialect().ForUpdate(),
		merchantID, livemode).Scan(&t); err != nil {
		return nil, err
	}
	if !t.Valid {
		return nil, nil
	}
	return &t.Int64, nil
}

// applyThreshold writes the new threshold; a loosening also leaves an audit
// row and a settings.updated event (a tightening needs neither, but emits the
// event too so receivers see every change).
func applyThreshold(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, cur, next *int64, by, changeID string) error {
	if _, err := tx.Exec(ctx, "UPDATE merchant_settings SET approval_threshold_minor = ?, updated_at = ? WHERE merchant_id = ? AND livemode = ?",
		nullable(next), store.Micros(tx.Now()), merchantID, livemode); err != nil {
		return err
	}
	if sameThreshold(cur, next) {
		return nil
	}
	if loosens(cur, next) {
		detail := fmt.Sprintf("approval_threshold_minor %s → %s", showThreshold(cur), showThreshold(next))
		if changeID != "" {
			detail += " (approved change " + changeID + ")"
		}
		if err := auditSettings(ctx, tx, merchantID, livemode, by, "settings.loosened", changeID, detail); err != nil {
			return err
		}
	}
	_, err := events.Emit(ctx, tx, merchantID, livemode, EventSettingsUpdated, "settings", "settings_"+modeName(livemode),
		Settings{Object: "settings", Livemode: livemode, ApprovalThresholdMinor: next})
	return err
}

// auditSettings writes a row of the merchant's audit log (the log the portal
// shows) in the change's own transaction.
func auditSettings(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, principal, action, objectID, detail string) error {
	_, err := tx.Exec(ctx, `INSERT INTO portal_audit (id, merchant_id, livemode, principal_id, action, object_id, outcome, detail, ip, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 'ok', ?, '', ?)`, ids.New("aud_"), merchantID, livemode, principal, action, objectID, detail, store.Micros(tx.Now()))
	return err
}

func sameThreshold(a, b *int64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func showThreshold(t *int64) string {
	if t == nil {
		return "none"
	}
	return fmt.Sprint(*t)
}

func modeName(livemode bool) string {
	if livemode {
		return "live"
	}
	return "test"
}

func nullable(t *int64) any {
	if t == nil {
		return nil
	}
	return *t
}
