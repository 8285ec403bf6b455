package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
)

// A dispute is a cardholder's bank contesting a payment. The simulator opens
// one when asked (POST /_sim/disputes, or Dispute from Go) and posts the
// signed dispute.created callback to the payment's callback URL; it posts
// dispute.closed (won or lost) when asked to close it, at once or after a
// delay given with the opening.

// dispute is one dispute at the provider.
type dispute struct {
	protocol.Dispute
	callbackURL string
	acct        *account
}

// DisputeRequest is the body of POST /_sim/disputes.
type DisputeRequest struct {
	// PaymentReference is the payment's reference (payd's pi_...) or the
	// provider's payment id.
	PaymentReference string `json:"payment_reference"`
	Reason           string `json:"reason"` // default general
	// Close, when won or lost, closes the dispute CloseAfter later
	// (default: the simulator's push delay).
	Close      string `json:"close"`
	CloseAfter string `json:"close_after"`
}

// errNoPayment: no succeeded payment has that reference.
var errNoPayment = errors.New("sim: no succeeded payment with this reference")

// Dispute opens a dispute of a succeeded payment: dispute.created is sent,
// and, when close is won or lost, dispute.closed after closeAfter. It
// returns the provider's dispute id.
func (s *Sim) Dispute(paymentRef, reason, close string, closeAfter time.Duration) (string, error) {
	a, p := s.findPayment(paymentRef)
	if p == nil {
		return "", errNoPayment
	}
	if reason == "" {
		reason = "general"
	}
	now := s.cfg.Now().UTC()
	a.mu.Lock()
	d := &dispute{Dispute: protocol.Dispute{ID: newID("dsp_"), Object: "dispute", PaymentReference: p.Reference,
		Status: protocol.DisputeOpen, Reason: reason, AmountMinor: p.CapturedMinor, Currency: p.Currency, CreatedAt: now, UpdatedAt: now},
		callbackURL: p.callbackURL, acct: a}
	s.disputes.Store(d.ID, d)
	ev := s.disputeEvent(protocol.EventDisputeCreated, d, now)
	a.mu.Unlock()
	s.send(a, ev)
	if close == protocol.DisputeWon || close == protocol.DisputeLost {
		if closeAfter <= 0 {
			closeAfter = s.cfg.PushDelay
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if s.sleep(closeAfter) {
				s.CloseDispute(d.ID, close)
			}
		}()
	}
	return d.ID, nil
}

// CloseDispute decides an open dispute (won or lost) and sends
// dispute.closed. A dispute closed already is left as it is (false).
func (s *Sim) CloseDispute(id, status string) bool {
	v, ok := s.disputes.Load(id)
	if !ok || (status != protocol.DisputeWon && status != protocol.DisputeLost) {
		return false
	}
	d := v.(*dispute)
	now := s.cfg.Now().UTC()
	d.acct.mu.Lock()
	if d.Status != protocol.DisputeOpen {
		d.acct.mu.Unlock()
		return false
	}
	d.Status, d.UpdatedAt = status, now
	ev := s.disputeEvent(protocol.EventDisputeClosed, d, now)
	d.acct.mu.Unlock()
	s.send(d.acct, ev)
	return true
}

// disputeEvent makes the callback of a dispute's change (the caller holds
// the account's lock).
func (s *Sim) disputeEvent(typ string, d *dispute, now time.Time) *outgoing {
	v := d.Dispute
	return &outgoing{ev: protocol.Event{ID: newID("pevt_"), Object: "event", Type: typ, CreatedAt: now,
		Data: protocol.EventData{Dispute: &v}}, url: d.callbackURL}
}

// findPayment finds a succeeded payment by reference or id in any account.
func (s *Sim) findPayment(ref string) (*account, *payment) {
	s.mu.Lock()
	accts := make([]*account, 0, len(s.accounts))
	for _, a := range s.accounts {
		accts = append(accts, a)
	}
	s.mu.Unlock()
	for _, a := range accts {
		a.mu.Lock()
		p := a.payRefs[ref]
		if p == nil {
			p = a.payments[ref]
		}
		ok := p != nil && p.Status == protocol.StatusSucceeded
		a.mu.Unlock()
		if ok {
			return a, p
		}
	}
	return nil, nil
}

// serveDispute handles POST /_sim/disputes (simulator only).
func (s *Sim) serveDispute(w http.ResponseWriter, r *http.Request) {
	var req DisputeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "the body is not a dispute request", "")
		return
	}
	var after time.Duration
	if req.CloseAfter != "" {
		d, err := time.ParseDuration(req.CloseAfter)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, "parameter_invalid", "close_after is a Go duration", "close_after")
			return
		}
		after = d
	}
	if req.Close != "" && req.Close != protocol.DisputeWon && req.Close != protocol.DisputeLost {
		writeError(w, http.StatusBadRequest, "parameter_invalid", "close is won or lost", "close")
		return
	}
	id, err := s.Dispute(req.PaymentReference, req.Reason, req.Close, after)
	if err != nil {
		writeError(w, http.StatusNotFound, "payment_not_found", err.Error(), "payment_reference")
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id, "object": "dispute", "status": protocol.DisputeOpen})
}

// serveCloseDispute handles POST /_sim/disputes/{id}/close {"status"}.
func (s *Sim) serveCloseDispute(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil ||
		(req.Status != protocol.DisputeWon && req.Status != protocol.DisputeLost) {
		writeError(w, http.StatusBadRequest, "parameter_invalid", "status is won or lost", "status")
		return
	}
	if !s.CloseDispute(r.PathValue("id"), req.Status) {
		writeError(w, http.StatusConflict, "invalid_state", "no open dispute with this id", "id")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id"), "object": "dispute", "status": req.Status})
}
