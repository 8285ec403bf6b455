package merchants

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Four-eyes controls are kept per merchant AND mode: a test key can read and
// change test mode's only. There are two: the approval threshold and the
// window of the cumulative rule (default 24 hours). Tightening a control
// (lowering or setting the threshold, lengthening the window) applies at
// once; loosening it (raising or clearing the threshold, shortening the
// window) applies at once only for a portal admin (whose session passed the
// second factor when one is enrolled); from an API key it becomes a pending
// SettingsChange that another person must approve. Every loosening leaves a
// row in the audit log and a settings.updated event.

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
	ApprovalWindowSeconds  int64  `json:"approval_window_seconds"`
}

func settingsOf(livemode bool, c Controls) Settings {
	return Settings{Object: "settings", Livemode: livemode, ApprovalThresholdMinor: c.Threshold, ApprovalWindowSeconds: int64(c.Window / time.Second)}
}

// SettingsUpdate is what a request asks to change; a field it leaves out
// stays as it is.
type SettingsUpdate struct {
	SetThreshold bool   // the request names the threshold
	Threshold    *int64 // the threshold asked for (nil: clear it)
	// WindowSeconds is the window asked for, in seconds; nil leaves it.
	WindowSeconds *int64
}

// Validate checks the values asked for, naming the field of a bad one.
func (u SettingsUpdate) Validate() error {
	if u.SetThreshold && u.Threshold != nil && *u.Threshold < 0 {
		return errs.Invalid("approval_threshold_minor", "parameter_invalid", "approval_threshold_minor must be zero or positive")
	}
	if w := u.WindowSeconds; w != nil && (*w < int64(MinApprovalWindow/time.Second) || *w > int64(MaxApprovalWindow/time.Second)) {
		return errs.Invalid("approval_window_seconds", "parameter_invalid", "approval_window_seconds must be between %d (one hour) and %d (30 days)",
			int64(MinApprovalWindow/time.Second), int64(MaxApprovalWindow/time.Second))
	}
	return nil
}

// SettingsChange is a request to loosen a control, waiting for another
// person's approval (status pending), applied, or canceled. It shows the
// controls as they will be once it is applied: approving it sets the
// threshold and the window to its values (a window of nil, only on changes
// asked for before the window was a setting, leaves the window).
type SettingsChange struct {
	ID                     string     `json:"id"`
	Object                 string     `json:"object"`
	Livemode               bool       `json:"livemode"`
	ApprovalThresholdMinor *int64     `json:"approval_threshold_minor"`
	ApprovalWindowSeconds  *int64     `json:"approval_window_seconds"`
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

// loosensControls reports whether next lets more money leave without a
// second person than cur does in any control: a looser threshold, or a
// shorter window (a shorter window loosens even while there is no threshold,
// since setting one later is a tightening that applies at once).
func loosensControls(cur, next Controls) bool {
	return loosens(cur.Threshold, next.Threshold) || next.Window < cur.Window
}

// Settings returns the merchant's controls in one mode, read in the
// request's unit of work (cl; store.NoClaim without one), so a request that
// has just changed them reads its change.
func (s *Service) Settings(ctx context.Context, cl store.Claim, merchantID string, livemode bool) (Settings, error) {
	c, err := ApprovalControls(ctx, s.db.Within(cl), merchantID, livemode)
	return settingsOf(livemode, c), err
}

// UpdateThreshold asks, as principal by, for a new approval threshold in one
// mode (nil clears it); see UpdateSettings.
func (s *Service) UpdateThreshold(ctx context.Context, cl store.Claim, merchantID string, livemode bool, threshold *int64, by string, admin bool) (*SettingsChange, error) {
	return s.UpdateSettings(ctx, cl, merchantID, livemode, SettingsUpdate{SetThreshold: true, Threshold: threshold}, by, admin)
}

// UpdateSettings asks, as principal by, for new controls in one mode. Any
// change by a portal admin (admin true), or one that loosens nothing,
// applies at once and returns a nil change. A request from an API key that
// loosens a control applies its tightening parts at once and records the
// whole of what it asked for as a pending change, returned. It writes in
// the request's unit of work (cl; store.NoClaim without one).
func (s *Service) UpdateSettings(ctx context.Context, cl store.Claim, merchantID string, livemode bool, u SettingsUpdate, by string, admin bool) (*SettingsChange, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	var change *SettingsChange
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		change = nil
		cur, err := controlsForUpdate(ctx, tx, merchantID, livemode)
		if err != nil {
			return err
		}
		next := cur
		if u.SetThreshold {
			next.Threshold = u.Threshold
		}
		if u.WindowSeconds != nil {
			next.Window = time.Duration(*u.WindowSeconds) * time.Second
		}
		if admin || !loosensControls(cur, next) {
			return applyControls(ctx, tx, merchantID, livemode, cur, next, by, "")
		}
		// The tightening parts need nobody's approval.
		tight := cur
		if !loosens(cur.Threshold, next.Threshold) {
			tight.Threshold = next.Threshold
		}
		if next.Window > cur.Window {
			tight.Window = next.Window
		}
		if err := applyControls(ctx, tx, merchantID, livemode, cur, tight, by, ""); err != nil {
			return err
		}
		window := int64(next.Window / time.Second)
		c := SettingsChange{ID: ids.New("setchg_"), Object: "settings_change", Livemode: livemode, ApprovalThresholdMinor: next.Threshold,
			ApprovalWindowSeconds: &window, Status: "pending", RequestedBy: by, CreatedAt: tx.Now()}
		if _, err := tx.Exec(ctx, `INSERT INTO settings_changes (id, merchant_id, livemode, approval_threshold_minor, approval_window_seconds, status, requested_by, created_at)
			VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`, c.ID, merchantID, livemode, nullable(next.Threshold), window, by, store.Micros(c.CreatedAt)); err != nil {
			return err
		}
		if err := AuditInTx(ctx, tx, merchantID, livemode, by, "settings.change_requested", c.ID,
			describe(tight, next)+", waiting for another person"); err != nil {
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
// approvals apply it once. It writes in the request's unit of work (cl).
func (s *Service) ApproveSettingsChange(ctx context.Context, cl store.Claim, merchantID string, livemode bool, id, approver string) (SettingsChange, error) {
	var c SettingsChange
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
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
		cur, err := controlsForUpdate(ctx, tx, merchantID, livemode)
		if err != nil {
			return err
		}
		next := Controls{Threshold: c.ApprovalThresholdMinor, Window: cur.Window}
		if c.ApprovalWindowSeconds != nil {
			next.Window = time.Duration(*c.ApprovalWindowSeconds) * time.Second
		}
		if err := applyControls(ctx, tx, merchantID, livemode, cur, next, approver, c.ID); err != nil {
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

const changeColumns = "id, livemode, approval_threshold_minor, approval_window_seconds, status, requested_by, approved_by, created_at, decided_at"

func scanChange(row interface{ Scan(...any) error }) (SettingsChange, error) {
	c := SettingsChange{Object: "settings_change"}
	var t, w sql.NullInt64
	var approver sql.NullString
	var created int64
	var decided sql.NullInt64
	if err := row.Scan(&c.ID, &c.Livemode, &t, &w, &c.Status, &c.RequestedBy, &approver, &created, &decided); err != nil {
		return c, err
	}
	if t.Valid {
		c.ApprovalThresholdMinor = &t.Int64
	}
	if w.Valid {
		c.ApprovalWindowSeconds = &w.Int64
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

// controlsForUpdate reads the controls, locking the settings row (made
// first if the merchant has none) so concurrent changes, and the cumulative
// rule's decisions, serialise.
func controlsForUpdate(ctx context.Context, tx *store.Tx, merchantID string, livemode bool) (Controls, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO merchant_settings (merchant_id, livemode, approval_threshold_minor, updated_at) VALUES (?, ?, NULL, ?)
		ON CONFLICT (merchant_id, livemode) DO NOTHING`, merchantID, livemode, store.Micros(tx.Now())); err != nil {
		if store.IsConflict(err) || store.IsNotFound(err) {
			return Controls{}, errs.NotFound("merchant", merchantID)
		}
		return Controls{}, err
	}
	return LockedControls(ctx, tx, merchantID, livemode)
}

// applyControls writes the new controls (the window only when it changes, so
// a merchant that never set one keeps the default); a loosening also leaves
// an audit row, and every change a settings.updated event.
func applyControls(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, cur, next Controls, by, changeID string) error {
	if sameThreshold(cur.Threshold, next.Threshold) && cur.Window == next.Window {
		return nil
	}
	if _, err := tx.Exec(ctx, "UPDATE merchant_settings SET approval_threshold_minor = ?, updated_at = ? WHERE merchant_id = ? AND livemode = ?",
		nullable(next.Threshold), store.Micros(tx.Now()), merchantID, livemode); err != nil {
		return err
	}
	if cur.Window != next.Window {
		if _, err := tx.Exec(ctx, "UPDATE merchant_settings SET approval_window_seconds = ? WHERE merchant_id = ? AND livemode = ?",
			int64(next.Window/time.Second), merchantID, livemode); err != nil {
			return err
		}
	}
	if loosensControls(cur, next) {
		detail := describe(cur, next)
		if changeID != "" {
			detail += " (approved change " + changeID + ")"
		}
		if err := AuditInTx(ctx, tx, merchantID, livemode, by, "settings.loosened", changeID, detail); err != nil {
			return err
		}
	}
	_, err := events.Emit(ctx, tx, merchantID, livemode, EventSettingsUpdated, "settings", "settings_"+modeName(livemode), settingsOf(livemode, next))
	return err
}

// describe says what moves from cur to next, for the audit log.
func describe(cur, next Controls) string {
	var parts []string
	if !sameThreshold(cur.Threshold, next.Threshold) {
		parts = append(parts, fmt.Sprintf("approval_threshold_minor %s → %s", showThreshold(cur.Threshold), showThreshold(next.Threshold)))
	}
	if cur.Window != next.Window {
		parts = append(parts, fmt.Sprintf("approval_window_seconds %d → %d", int64(cur.Window/time.Second), int64(next.Window/time.Second)))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// AuditInTx writes a row of the merchant's audit log (the log the portal
// shows and GET /v1/audit_events reads) in the change's own transaction, so
// the row and the change commit together.
func AuditInTx(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, principal, action, objectID, detail string) error {
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
