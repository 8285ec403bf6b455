package terminals

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals/dukpt"
)

// Limits on registration fields. The label limit is the documented 60 characters; the others follow
// common practice for identifiers and metadata.
const (
	MaxLabelLength       = 60
	MaxSerialLength      = 64
	MaxOutletIDLength    = 64
	MaxMetadataKeys      = 50
	MaxMetadataKeyLength = 40
	MaxMetadataValue     = 500
)

// RegisterParams is the body of POST /v1/terminals.
type RegisterParams struct {
	SerialNumber *string           `json:"serial_number"`
	Model        *string           `json:"model"`
	OutletID     *string           `json:"outlet_id"`
	Label        *string           `json:"label"`
	Metadata     map[string]string `json:"metadata"`
}

// ListParams filters GET /v1/terminals. Without Status, deregistered
// terminals are left out.
type ListParams struct {
	Page     pagination.Page
	Status   string
	OutletID string
}

const terminalColumns = `id, merchant_id, livemode, serial_number, model, outlet_id, label, metadata, status,
	ksn_key_id, ksn_counter, created_at, activated_at, deregistered_at`

// Register records a new terminal, inactive. A serial number that the
// merchant has registered in this mode and not deregistered is a 409.
func (s *Service) Register(ctx context.Context, cl store.Claim, p auth.Principal, in RegisterParams) (Terminal, error) {
	work := s.db.Within(cl)
	if err := validateRegistration(in); err != nil {
		return Terminal{}, err
	}
	meta := in.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return Terminal{}, err
	}
	t := Terminal{ID: ids.New("term_"), Object: "terminal", Status: Inactive, SerialNumber: *in.SerialNumber,
		Model: Model(*in.Model), OutletID: in.OutletID, Label: in.Label, Metadata: meta, Livemode: p.Livemode,
		MerchantID: p.MerchantID}
	err = work.InTx(ctx, func(tx *store.Tx) error {
		t.CreatedAt = tx.Now()
		_, err := tx.Exec(ctx, `INSERT INTO terminals (id, merchant_id, livemode, serial_number, model, outlet_id, label,
			metadata, status, ksn_counter, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
			t.ID, t.MerchantID, t.Livemode, t.SerialNumber, string(t.Model), t.OutletID, t.Label, string(metaJSON),
			string(t.Status), store.Micros(t.CreatedAt))
		return err
	})
	if store.IsConflict(err) {
		return Terminal{}, &errs.Error{Kind: errs.KindConflict, Code: "serial_number_in_use", Param: "serial_number",
			Message: "a terminal with this serial number is already registered; deregister it first"}
	}
	if err != nil {
		return Terminal{}, err
	}
	return t.public(), nil
}

func validateRegistration(in RegisterParams) error {
	switch {
	case in.SerialNumber == nil || strings.TrimSpace(*in.SerialNumber) == "":
		return errs.Missing("serial_number")
	case !printable(*in.SerialNumber) || utf8.RuneCountInString(*in.SerialNumber) > MaxSerialLength:
		return errs.Invalid("serial_number", "parameter_invalid", "serial_number must be at most %d printable characters", MaxSerialLength)
	case in.Model == nil || *in.Model == "":
		return errs.Missing("model")
	}
	if _, ok := Model(*in.Model).Algorithm(); !ok {
		return errs.Invalid("model", "parameter_invalid", "model must be one of %s and %s", Countertop, Mobile)
	}
	if in.OutletID != nil && (*in.OutletID == "" || !printable(*in.OutletID) || utf8.RuneCountInString(*in.OutletID) > MaxOutletIDLength) {
		return errs.Invalid("outlet_id", "parameter_invalid", "outlet_id must be 1 to %d printable characters", MaxOutletIDLength)
	}
	if in.Label != nil && (!utf8.ValidString(*in.Label) || utf8.RuneCountInString(*in.Label) > MaxLabelLength) {
		return errs.Invalid("label", "parameter_invalid", "label must be at most %d characters", MaxLabelLength)
	}
	return validateMetadata(in.Metadata)
}

func validateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataKeys {
		return errs.Invalid("metadata", "parameter_invalid", "metadata may hold at most %d keys", MaxMetadataKeys)
	}
	for k, v := range m {
		if k == "" || utf8.RuneCountInString(k) > MaxMetadataKeyLength || !utf8.ValidString(k) {
			return errs.Invalid("metadata", "parameter_invalid", "metadata keys must be 1 to %d characters", MaxMetadataKeyLength)
		}
		if utf8.RuneCountInString(v) > MaxMetadataValue || !utf8.ValidString(v) {
			return errs.Invalid("metadata["+k+"]", "parameter_invalid", "metadata values must be at most %d characters", MaxMetadataValue)
		}
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// Get returns one of the caller's terminals, in any status.
func (s *Service) Get(ctx context.Context, p auth.Principal, id string) (Terminal, error) {
	t, err := getTerminal(ctx, s.db, p, id)
	if err != nil {
		return Terminal{}, err
	}
	return t.public(), nil
}

// getTerminal reads a terminal scoped to the principal's merchant and mode,
// with its KSN state.
func getTerminal(ctx context.Context, q store.Querier, p auth.Principal, id string) (Terminal, error) {
	t, err := scanTerminal(q.QueryRow(ctx, "SELECT "+terminalColumns+" FROM terminals WHERE id = ? AND merchant_id = ? AND livemode = ?",
		id, p.MerchantID, p.Livemode))
	if store.IsNotFound(err) {
		return Terminal{}, errs.NotFound("terminal", id)
	}
	return t, err
}

// List returns a page of the caller's terminals, newest first.
func (s *Service) List(ctx context.Context, p auth.Principal, in ListParams) ([]Terminal, bool, error) {
	q := "SELECT " + terminalColumns + " FROM terminals WHERE merchant_id = ? AND livemode = ?"
	args := []any{p.MerchantID, p.Livemode}
	switch {
	case in.Status == "":
		q += " AND status <> ?"
		args = append(args, string(Deregistered))
	case Status(in.Status).valid():
		q += " AND status = ?"
		args = append(args, in.Status)
	default:
		return nil, false, errs.Invalid("status", "parameter_invalid", "status must be one of %s, %s and %s", Inactive, Active, Deregistered)
	}
	if in.OutletID != "" {
		q += " AND outlet_id = ?"
		args = append(args, in.OutletID)
	}
	cond, cargs, tail := in.Page.Clause("id")
	rows, err := s.db.Query(ctx, q+cond+tail, append(args, cargs...)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []Terminal
	for rows.Next() {
		t, err := scanTerminal(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, t.public())
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	out, more := pagination.Finish(in.Page, out)
	return out, more, nil
}

// ActivateParams is the optional body of POST /v1/terminals/{id}/activate.
type ActivateParams struct {
	// KSN is a key serial number the device shows at activation (its initial
	// KSN, counter 0, or any later one). It binds the terminal to that device
	// at once: only reads whose KSN names the same device key are accepted.
	// Required in live mode; in test mode, without it the terminal is bound
	// by its first accepted read.
	KSN *string `json:"ksn"`
}

// Activate enables transaction processing on an inactive terminal and, when
// the device's KSN is given, binds the terminal to that device. A device is
// bound to one terminal (that is not deregistered) in the whole system: a KSN
// of a device another terminal of this merchant holds is a 409
// device_in_use; another merchant's device answers as an unknown one.
func (s *Service) Activate(ctx context.Context, cl store.Claim, p auth.Principal, id string, in ActivateParams) (Terminal, error) {
	work := s.db.Within(cl)
	if in.KSN == nil && p.Livemode {
		// A live terminal never learns its device from whatever read
		// reaches it first.
		return Terminal{}, &errs.Error{Kind: errs.KindInvalid, Code: "parameter_missing", Param: "ksn",
			Message: "a live terminal is activated with its device's KSN (the initial KSN the device shows), which binds the terminal to that device"}
	}
	if in.KSN == nil {
		return s.apply(ctx, work, p, id, activateTransition, "", nil)
	}
	t, err := getTerminal(ctx, work, p, id)
	if err != nil {
		return Terminal{}, err
	}
	alg, ok := t.Model.Algorithm()
	if !ok {
		return Terminal{}, fmt.Errorf("terminal %s has unknown model %q", t.ID, t.Model)
	}
	ksn, err := dukpt.ParseKSN(alg, *in.KSN)
	if err != nil {
		return Terminal{}, errs.Invalid("ksn", "parameter_invalid", "ksn must be a KSN of a %s terminal (%d hex digits)", t.Model, 2*alg.KSNLength())
	}
	keyID := ksn.InitialKeyID()
	// A device belongs to the merchant that first bound it, in both modes
	// and after its terminal is deregistered: another merchant never binds
	// it. To that merchant it answers as a device payd never saw does: the
	// activation succeeds, after the same work, but binds the terminal to
	// no device anyone has (unusableKeyID), so every read is refused as not
	// this terminal's device.
	bind, err := s.bindingFor(ctx, work, p, id, keyID)
	if err != nil {
		return Terminal{}, err
	}
	out, err := s.apply(ctx, work, p, id, activateTransition, "ksn_key_id = ?", []any{bind})
	if store.IsConflict(err) {
		// Bound meanwhile: by another terminal of this merchant (which
		// this merchant may know), or by another merchant's.
		if bind, err = s.bindingFor(ctx, work, p, id, keyID); err != nil {
			return Terminal{}, err
		}
		if bind == keyID {
			return Terminal{}, errDeviceInUse()
		}
		out, err = s.apply(ctx, work, p, id, activateTransition, "ksn_key_id = ?", []any{bind})
	}
	return out, err
}

// bindingFor is the device key id an activation of terminal id with keyID
// records: keyID itself, or, for a device of another merchant, a key id no
// device has.
func (s *Service) bindingFor(ctx context.Context, work store.Work, p auth.Principal, id, keyID string) (string, error) {
	foreign, err := deviceOfAnother(ctx, work, keyID, p.MerchantID)
	if err != nil || !foreign {
		return keyID, err
	}
	return unusableKeyID(id), nil
}

// unusableKeyID is the device key id of a terminal activated with another
// merchant's device: unique per terminal (terminals_device) and never a
// KSN's key id (those are hex digits only).
func unusableKeyID(terminalID string) string {
	return "none:" + terminalID
}

// errDeviceInUse is the refusal of a device already bound to another terminal.
func errDeviceInUse() error {
	return &errs.Error{Kind: errs.KindConflict, Code: "device_in_use", Param: "ksn",
		Message: "the device of this KSN is bound to another terminal; deregister that terminal first"}
}

// Deregister blocks all future transactions of a terminal; the terminal can
// still be read.
func (s *Service) Deregister(ctx context.Context, p auth.Principal, id string) (Deleted, error) {
	t, err := s.apply(ctx, s.db.Within(store.NoClaim), p, id, deregisterTransition, "", nil)
	if err != nil {
		return Deleted{}, err
	}
	return Deleted{ID: t.ID, Object: "terminal", Deleted: true}, nil
}

// apply runs one transition as a compare-and-set: of two racing requests
// only one finds the terminal in a from-state, the other gets 409. set and
// setArgs add columns the transition writes with the status ("" for none).
func (s *Service) apply(ctx context.Context, work store.Work, p auth.Principal, id string, tr transition, set string, setArgs []any) (Terminal, error) {
	var out Terminal
	if set != "" {
		set = ", " + set
	}
	err := work.InTx(ctx, func(tx *store.Tx) error {
		in := make([]string, len(tr.from))
		args := append([]any{string(tr.to), store.Micros(tx.Now())}, setArgs...)
		args = append(args, id, p.MerchantID, p.Livemode)
		for i, f := range tr.from {
			in[i] = "?"
			args = append(args, string(f))
		}
		res, err := tx.Exec(ctx, "UPDATE terminals SET status = ?, "+tr.stampCol+" = ?"+set+" WHERE id = ? AND merchant_id = ? AND livemode = ? AND status IN ("+
			strings.Join(in, ", ")+")", args...)
		if err != nil {
			return err
		}
		t, err := getTerminal(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return tr.refusal(id, t.Status)
		}
		out = t
		return nil
	})
	if err != nil {
		return Terminal{}, err
	}
	return out.public(), nil
}

type scanner interface{ Scan(...any) error }

func scanTerminal(row scanner) (Terminal, error) {
	var t Terminal
	var outlet, label, keyID sql.NullString
	var meta, model, status string
	var counter, created int64
	var activated, deregistered sql.NullInt64
	if err := row.Scan(&t.ID, &t.MerchantID, &t.Livemode, &t.SerialNumber, &model, &outlet, &label, &meta, &status,
		&keyID, &counter, &created, &activated, &deregistered); err != nil {
		return Terminal{}, err
	}
	t.Object = "terminal"
	t.Model, t.Status = Model(model), Status(status)
	if outlet.Valid {
		t.OutletID = &outlet.String
	}
	if label.Valid {
		t.Label = &label.String
	}
	t.KSNKeyID = keyID.String
	t.KSNCounter = uint32(counter)
	if err := json.Unmarshal([]byte(meta), &t.Metadata); err != nil {
		return Terminal{}, fmt.Errorf("terminal %s metadata: %w", t.ID, err)
	}
	if t.Metadata == nil {
		t.Metadata = map[string]string{}
	}
	t.CreatedAt = store.FromMicros(created)
	t.ActivatedAt = store.NullMicros(activated)
	t.DeregisteredAt = store.NullMicros(deregistered)
	return t, nil
}

// public returns the terminal as the API shows it: times in whole seconds.
func (t Terminal) public() Terminal {
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Second)
	t.ActivatedAt = truncate(t.ActivatedAt)
	t.DeregisteredAt = truncate(t.DeregisteredAt)
	return t
}

func truncate(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Second)
	return &v
}
