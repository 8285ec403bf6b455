package terminals

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals/dukpt"
	"github.com/payd/payd/internal/terminals/tlv"
)

// PaymentParams is the body of POST /v1/terminals/{id}/payments: the amount
// and the device's encrypted chip read, both hex.
type PaymentParams struct {
	AmountMinor      *int64  `json:"amount_minor"`
	Currency         *string `json:"currency"`
	KSN              *string `json:"ksn"`
	EncryptedPayload *string `json:"encrypted_payload"`
	// CaptureMethod is automatic (the default) or manual: an approved card
	// is then held at requires_capture until POST
	// /v1/payment_intents/{id}/capture (sandbox card gateway only).
	CaptureMethod *string `json:"capture_method"`
}

// maxAmountMinor is the largest amount a chip read can carry (tag 9F02 holds 12 digits).
const maxAmountMinor = 999_999_999_999

// DeclineExpiredCard is the decline code of a card read after its expiry month.
const DeclineExpiredCard = "expired_card"

// Pay takes one card-present payment from an active terminal: it decrypts the
// device's payload with the DUKPT key of its KSN, reads the card, refuses a
// KSN whose counter does not advance, asks the card gateway, and records the
// outcome as a payment intent (succeeded, or canceled with last_error).
//
// Every refusal before the gateway call writes nothing. idemKey is the
// request's Idempotency-Key: a retry of a request that failed after its KSN
// was accepted (a 5xx) resumes that payment instead of being refused as a
// replay; cl is its claim, on which a remote gateway's call commits a
// recovery point first.
func (s *Service) Pay(ctx context.Context, cl store.Claim, p auth.Principal, terminalID, idemKey string, in PaymentParams) (payments.Intent, error) {
	work := s.db.Within(cl)
	if idemKey == "" {
		return payments.Intent{}, errs.Invalid("Idempotency-Key", "idempotency_key_required", "card-present payments require an Idempotency-Key header")
	}
	if err := validatePayment(in); err != nil {
		return payments.Intent{}, err
	}
	t, err := getTerminal(ctx, work, p, terminalID)
	if err != nil {
		return payments.Intent{}, err
	}
	if t.Status != Active {
		return payments.Intent{}, errs.InvalidState("terminal %s is %s and cannot take payments", t.ID, t.Status)
	}
	alg, ok := t.Model.Algorithm()
	if !ok {
		return payments.Intent{}, fmt.Errorf("terminal %s has unknown model %q", t.ID, t.Model)
	}
	ksn, err := dukpt.ParseKSN(alg, *in.KSN)
	if err == nil && ksn.IsInitial() {
		err = dukpt.ErrInvalidKSN // the initial KSN names the injected key, never a transaction
	}
	if err != nil {
		return payments.Intent{}, decryptionFailed("ksn", fmt.Sprintf("ksn is not a transaction KSN of a %s terminal (%d hex digits, counter above 0)", t.Model, 2*alg.KSNLength()), err)
	}
	ciphertext, err := decodePayload(alg, *in.EncryptedPayload)
	if err != nil {
		return payments.Intent{}, err
	}
	recorder := s.recorder.Load()
	if recorder == nil {
		return payments.Intent{}, errNotWired
	}
	bdk, err := s.keys.BDK(p.Livemode, t.Model)
	if err != nil {
		return payments.Intent{}, err
	}
	gw, err := s.gateways(ctx, p.MerchantID, p.Livemode)
	if err != nil {
		return payments.Intent{}, err
	}
	if in.CaptureMethod != nil && *in.CaptureMethod == payments.CaptureManual {
		// Capturing later needs the gateway's capture and void calls (the
		// payments service makes them); the in-process sandbox gateway's
		// authorisation is held by payd alone.
		_, settles := gw.(Settler)
		if local, ok := gw.(InProcess); !settles && (!ok || !local.InProcess()) {
			return payments.Intent{}, errs.Invalid("capture_method", "parameter_invalid",
				"capture_method manual is not offered by this card gateway")
		}
	}
	read, err := decryptRead(bdk, ksn, ciphertext)
	if err != nil {
		return payments.Intent{}, err
	}
	if err := checkAgainstChip(read, *in.AmountMinor, *in.Currency); err != nil {
		return payments.Intent{}, err
	}

	cp := payments.CardPresent{AmountMinor: *in.AmountMinor, Currency: *in.Currency, TerminalID: t.ID,
		Brand: string(read.Brand()), Last4: read.Last4(), EntryMode: string(read.EntryMode())}
	if in.CaptureMethod != nil {
		cp.CaptureMethod = *in.CaptureMethod
	}
	if t.OutletID != nil {
		cp.OutletID = *t.OutletID
	}
	payID, resumed, err := s.acceptKSN(ctx, work, p, t, ksn, idemKey, cp)
	if err != nil {
		return payments.Intent{}, err
	}
	cp.IdempotencyKey = payID
	if resumed != "" && resumed != statusAuthorizing {
		// A retry of a payment whose outcome was recorded meanwhile (by
		// reconciliation, after the gateway's answer was lost): that
		// outcome, without asking the gateway again. (Canceled before its
		// intent exists: reconciliation found the gateway never received
		// it, and is recording that.)
		if resumed == statusCanceled {
			cp.DeclineCode = DeclineNotReceived
		}
		intent, err := recorder.RecordCardPresent(ctx, cl, p, cp)
		if err != nil {
			return payments.Intent{}, err
		}
		return intent, s.finishPayment(ctx, work, payID, intent)
	}

	if read.ExpiredAt(s.db.Now()) {
		// payd never sends an expired card to the network; the issuer would decline it.
		cp.DeclineCode = DeclineExpiredCard
	} else {
		if local, ok := gw.(InProcess); !ok || !local.InProcess() {
			// A retry resumes here: acceptKSN finds this payment by its
			// key and the gateway answers its reference again.
			if err := cl.RecoveryPoint(ctx, "terminal_payment.authorize", payID); err != nil {
				return payments.Intent{}, err
			}
		}
		auth, err := gw.Authorize(ctx, AuthorizationRequest{Reference: payID, MerchantID: p.MerchantID, TerminalID: t.ID,
			Card: read, AmountMinor: cp.AmountMinor, Currency: cp.Currency, ManualCapture: cp.CaptureMethod == payments.CaptureManual})
		if err != nil {
			// The outcome is unknown (a timeout) or the gateway did not act:
			// the terminal payment stays authorizing. A retry under the same
			// Idempotency-Key resumes it; reconciliation asks the gateway
			// by its reference.
			return payments.Intent{}, err
		}
		cp.Approved, cp.AuthCode, cp.DeclineCode = auth.Approved, auth.AuthCode, auth.DeclineCode
		if !auth.Approved && cp.DeclineCode == "" {
			cp.DeclineCode = "generic_decline"
		}
	}
	intent, err := recorder.RecordCardPresent(ctx, cl, p, cp)
	if err != nil {
		return payments.Intent{}, err
	}
	if err := s.finishPayment(ctx, work, payID, intent); err != nil {
		return payments.Intent{}, err
	}
	return intent, nil
}

func validatePayment(in PaymentParams) error {
	switch {
	case in.AmountMinor == nil:
		return errs.Missing("amount_minor")
	case *in.AmountMinor <= 0 || *in.AmountMinor > maxAmountMinor:
		return errs.Invalid("amount_minor", "parameter_invalid", "amount_minor must be a positive integer of at most 12 digits")
	case in.Currency == nil || *in.Currency == "":
		return errs.Missing("currency")
	case in.KSN == nil || *in.KSN == "":
		return errs.Missing("ksn")
	case in.EncryptedPayload == nil || *in.EncryptedPayload == "":
		return errs.Missing("encrypted_payload")
	case in.CaptureMethod != nil && *in.CaptureMethod != payments.CaptureAutomatic && *in.CaptureMethod != payments.CaptureManual:
		return errs.Invalid("capture_method", "parameter_invalid", "capture_method must be automatic or manual")
	}
	if !Currencies[*in.Currency] {
		return errs.Invalid("currency", "parameter_invalid", "currency must be DJF or USD for card-present payments")
	}
	return nil
}

// Currencies are those a card-present payment may be taken in: the card
// currencies.
var Currencies = map[string]bool{"DJF": true, "USD": true}

// decodePayload reads the ciphertext: hex, a whole number of cipher blocks,
// no longer than the largest chip read the parser accepts.
func decodePayload(alg dukpt.Algorithm, s string) ([]byte, error) {
	const param = "encrypted_payload"
	if len(s) > 2*(tlv.MaxSize+alg.BlockSize()) {
		return nil, decryptionFailed(param, fmt.Sprintf("encrypted_payload is longer than a chip read (at most %d bytes)", tlv.MaxSize), nil)
	}
	ct, err := hex.DecodeString(s)
	if err != nil {
		return nil, decryptionFailed(param, "encrypted_payload must be hex", nil)
	}
	if len(ct) == 0 || len(ct)%alg.BlockSize() != 0 {
		return nil, decryptionFailed(param, fmt.Sprintf("encrypted_payload must be a whole number of %d-byte cipher blocks, got %d bytes", alg.BlockSize(), len(ct)), nil)
	}
	return ct, nil
}

// decryptRead derives the data key of the KSN, decrypts and reads the card.
// CBC with zero padding has no integrity check: a payload tampered with or
// encrypted under another key decrypts to noise, which the TLV parser and the
// card checks (PAN present, Luhn, 8-byte cryptogram) refuse.
func decryptRead(bdk dukpt.Key, ksn dukpt.KSN, ciphertext []byte) (card.Read, error) {
	plain, err := dukpt.DecryptData(bdk, ksn, ciphertext)
	if err != nil {
		return card.Read{}, decryptionFailed("encrypted_payload", "encrypted_payload could not be decrypted with the key of this KSN", err)
	}
	read, err := card.FromTLV(plain)
	clear(plain)
	if err != nil {
		return card.Read{}, decryptionFailed("encrypted_payload", "encrypted_payload did not decrypt to a valid chip read under the key of this KSN", err)
	}
	return read, nil
}

// checkAgainstChip refuses a request whose amount or currency differs from
// what the card authorised (tags 9F02 and 5F2A, when the read carries them):
// the cryptogram covers the chip's amount, not the request's.
func checkAgainstChip(read card.Read, amount int64, currency string) error {
	if chip, ok := read.AmountMinor(); ok && chip != amount {
		return errs.Invalid("amount_minor", "amount_mismatch", "amount_minor differs from the amount the card authorised")
	}
	if chip := read.CurrencyNumeric(); chip != "" {
		if num, _ := money.Numeric(currency); num != chip {
			return errs.Invalid("currency", "currency_mismatch", "currency differs from the currency the card authorised")
		}
	}
	return nil
}

// decryptionFailed is the 400 for a payload that cannot be decrypted or read.
// The cause (tags, offsets, lengths only) stays out of the response.
func decryptionFailed(param, msg string, cause error) error {
	return &errs.Error{Kind: errs.KindInvalid, Code: "decryption_failed", Param: param, Message: msg, Err: cause}
}

// acceptKSN is the replay check: in one transaction it moves the terminal's
// highest accepted counter to the KSN's with a compare-and-set (the terminal
// still active, the counter strictly greater, the KSN of the terminal's
// device key) and records the terminal payment. Two unique indexes make the
// check hold across the whole system: a device key is bound to one terminal
// that is not deregistered (an unbound terminal cannot adopt a device another
// holds), and a KSN is recorded once, whichever terminal, merchant or mode
// submits it. Of two requests racing with one KSN, on one terminal or two,
// exactly one wins. A KSN already accepted under the same
// Idempotency-Key by the same principal, for the same amount, is a retry of a
// request that failed later: its payment id is returned so it resumes, with
// its status (resumed; "" for a new payment).
func (s *Service) acceptKSN(ctx context.Context, work store.Work, p auth.Principal, t Terminal, ksn dukpt.KSN, idemKey string, cp payments.CardPresent) (payID, resumed string, err error) {
	keyID, counter := ksn.InitialKeyID(), ksn.Counter()
	err = work.InTx(ctx, func(tx *store.Tx) error {
		payID, resumed = "", ""
		now := store.Micros(tx.Now())
		// A device belongs to the merchant that first bound it, whatever
		// the mode and even after its terminal is deregistered. The query
		// runs for every read, so a device of another merchant is refused
		// after the same work, and with the same answer, as a device that
		// is not this terminal's.
		foreign, err := deviceOfAnother(ctx, tx, keyID, p.MerchantID)
		if err != nil {
			return err
		}
		if foreign {
			return errNotThisDevice()
		}
		res, err := tx.Exec(ctx, `UPDATE terminals SET ksn_counter = ?, ksn_key_id = ?
			WHERE id = ? AND merchant_id = ? AND livemode = ? AND status = ? AND ksn_counter < ? AND (ksn_key_id IS NULL OR ksn_key_id = ?)`,
			int64(counter), keyID, t.ID, p.MerchantID, p.Livemode, string(Active), int64(counter), keyID)
		if store.IsConflict(err) {
			// The device is bound to another terminal (terminals_device).
			return errNotThisDevice()
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			payID = ids.New("tpay_")
			_, err := tx.Exec(ctx, `INSERT INTO terminal_payments (id, terminal_id, merchant_id, livemode, principal_id,
				idempotency_key, ksn, ksn_counter, amount_minor, currency, brand, last4, entry_mode, status, created_at, updated_at, capture_method)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				payID, t.ID, p.MerchantID, p.Livemode, p.ID, idemKey, ksn.String(), int64(counter), cp.AmountMinor, cp.Currency,
				cp.Brand, cp.Last4, cp.EntryMode, statusAuthorizing, now, now, captureMethodOf(cp))
			if store.IsConflict(err) {
				// Accepted before, by another terminal (terminal_payments_ksn).
				return errKSNReplayed(counter)
			}
			return err
		}
		// Refused: say why, from the terminal as it is now.
		cur, err := getTerminal(ctx, tx, p, t.ID)
		if err != nil {
			return err
		}
		switch {
		case cur.Status != Active:
			return errs.InvalidState("terminal %s is %s and cannot take payments", cur.ID, cur.Status)
		case cur.KSNKeyID != "" && cur.KSNKeyID != keyID:
			return errNotThisDevice()
		}
		err = tx.QueryRow(ctx, `SELECT id, status FROM terminal_payments WHERE terminal_id = ? AND ksn_counter = ? AND principal_id = ?
			AND idempotency_key = ? AND amount_minor = ? AND currency = ?`,
			t.ID, int64(counter), p.ID, idemKey, cp.AmountMinor, cp.Currency).Scan(&payID, &resumed)
		if errors.Is(err, sql.ErrNoRows) {
			return errKSNReplayed(counter)
		}
		return err
	})
	return payID, resumed, err
}

// captureMethodOf is the capture method a terminal payment is recorded
// with, so reconciliation records its approval as the request would have.
func captureMethodOf(cp payments.CardPresent) string {
	if cp.CaptureMethod == payments.CaptureManual {
		return payments.CaptureManual
	}
	return payments.CaptureAutomatic
}

// errNotThisDevice is the one refusal of a read of a device the terminal
// cannot use: another device than the one it is bound to, a device bound to
// another terminal, or a device of another merchant. It is the same answer
// for all of them, so it tells nobody whether the device exists elsewhere.
func errNotThisDevice() error {
	return decryptionFailed("ksn", "ksn does not belong to a device this terminal can use", nil)
}

// deviceOfAnother reports whether the device key was ever bound to a
// terminal (of any status or mode) of a merchant other than merchantID.
func deviceOfAnother(ctx context.Context, q store.Querier, keyID, merchantID string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM terminals WHERE ksn_key_id = ? AND merchant_id <> ?`, keyID, merchantID).Scan(&n)
	return n > 0, err
}

// errKSNReplayed is the refusal of a KSN already used, on this terminal or
// any other.
func errKSNReplayed(counter uint32) error {
	return &errs.Error{Kind: errs.KindInvalid, Code: "ksn_replayed", Param: "ksn",
		Message: fmt.Sprintf("the KSN (counter %d) was already used or does not advance past the last one this terminal used; a device never reuses a KSN", counter)}
}

// Terminal payment statuses (terminal_payments.status).
const (
	statusAuthorizing = "authorizing" // KSN accepted; the gateway's answer not recorded yet
	statusSucceeded   = "succeeded"
	statusCanceled    = "canceled"
)

// finishPayment links the terminal payment to its intent: a compare-and-set
// from authorizing (or from canceled by reconciliation before its intent
// was recorded), so of the request, its retries and reconciliation, the
// first to finish writes it and the others change nothing (they hold the
// same intent: it is recorded under the payment's id).
func (s *Service) finishPayment(ctx context.Context, work store.Work, payID string, intent payments.Intent) error {
	status := statusCanceled
	if intent.Status == payments.Succeeded || intent.Status == payments.RequiresCapture {
		status = statusSucceeded // the card was approved (captured now or later)
	}
	return work.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE terminal_payments SET status = ?, payment_intent_id = ?, updated_at = ?
			WHERE id = ? AND (status = ? OR payment_intent_id IS NULL)`,
			status, intent.ID, store.Micros(tx.Now()), payID, statusAuthorizing)
		return err
	})
}
