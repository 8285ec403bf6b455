package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/timestamp"
)

func (s *Server) registerCore() {
	s.Handle("GET /healthz", func(w http.ResponseWriter, r *http.Request) error {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	}, Public())
	s.Handle("GET /readyz", s.readyz, Public())
	metrics := promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})
	s.Handle("GET /metrics", func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	}, Public())
	s.Handle("GET /v1/balance", s.getBalance)
	s.Handle("GET /v1/account", s.getAccount)
	s.HandleClaimed("POST /v1/sandbox/topups", s.createTopup, TestModeOnly(), ClaimAtOnce())
	s.HandleClaimed("GET /v1/settings", s.getSettings)
	s.HandleClaimed("POST /v1/settings", s.updateSettings)
	s.Handle("GET /v1/settings/changes/{id}", s.getSettingsChange)
	s.HandleClaimed("POST /v1/settings/changes/{id}/approve", s.approveSettingsChange)
	s.Handle("GET /v1/audit_events", s.listAuditEvents)
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	// Ready means this process can write now: a database that answers but
	// takes no writes (a standby while a failover is under way) is not.
	if err := s.cfg.DB.CanWrite(ctx); err != nil {
		reason := "database unreachable"
		if errors.Is(err, store.ErrReadOnly) {
			reason = "database read-only (a standby): waiting for a primary"
		}
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
		return nil
	}
	pending, err := s.cfg.DB.Pending(ctx)
	if err != nil || pending > 0 {
		WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "reason": "migrations pending"})
		return nil
	}
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ready", "engine": s.cfg.DB.Dialect().String()})
	return nil
}

// BalanceResponse is GET /v1/balance.
type BalanceResponse struct {
	Object   string           `json:"object"`
	Livemode bool             `json:"livemode"`
	Balances []ledger.Balance `json:"balances"`
}

// balance reads the merchant's balances through q: a request that has just
// written (a top-up) reads them in its own unit of work.
func (s *Server) balance(ctx context.Context, q store.Querier, p auth.Principal) (BalanceResponse, error) {
	b, err := ledger.Balances(ctx, q, p.MerchantID, p.Livemode)
	if err != nil {
		return BalanceResponse{}, err
	}
	if b == nil {
		b = []ledger.Balance{}
	}
	return BalanceResponse{Object: "balance", Livemode: p.Livemode, Balances: b}, nil
}

func (s *Server) getBalance(w http.ResponseWriter, r *http.Request) error {
	b, err := s.balance(r.Context(), s.cfg.DB, auth.Must(r.Context()))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, b)
	return nil
}

type topupRequest struct {
	Currency    string `json:"currency"`
	AmountMinor *int64 `json:"amount_minor"`
	Amount      *int64 `json:"amount"` // the same value under the name payment intents use; one of the two
}

// Topup is the answer of POST /v1/sandbox/topups.
type Topup struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	Currency    string          `json:"currency"`
	AmountMinor int64           `json:"amount_minor"`
	Livemode    bool            `json:"livemode"`
	CreatedAt   string          `json:"created_at"`
	Balance     BalanceResponse `json:"balance"`
}

// createTopup adds sandbox funds: a balanced posting from the sandbox
// funding account to the merchant's available balance.
func (s *Server) createTopup(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req topupRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Currency == "" {
		return errs.Missing("currency")
	}
	if _, err := money.Exponent(req.Currency); err != nil {
		return errs.Invalid("currency", "currency_invalid", "currency %q is not an ISO 4217 code", req.Currency)
	}
	amount, field, err := money.OneAmount(req.Amount, req.AmountMinor)
	if err != nil {
		return err
	}
	if amount == nil {
		return errs.Missing("amount_minor")
	}
	if *amount <= 0 {
		return errs.Invalid(field, "amount_invalid", "%s must be a positive integer", field)
	}
	req.AmountMinor = amount
	p := auth.Must(r.Context())
	var txID string
	var at time.Time
	// The posting and the balance answered with it are the request's: in
	// its unit of work.
	work := s.cfg.DB.Within(cl)
	err = work.InTx(r.Context(), func(tx *store.Tx) error {
		var err error
		at = tx.Now()
		txID, err = ledger.Post(r.Context(), tx, ledger.Transaction{MerchantID: p.MerchantID, Livemode: p.Livemode, Kind: "sandbox_topup",
			Entries: []ledger.Entry{
				{Account: ledger.AccountRef{MerchantID: p.MerchantID, Livemode: p.Livemode, Currency: req.Currency, Kind: ledger.Available}, Amount: *req.AmountMinor},
				{Account: ledger.AccountRef{MerchantID: p.MerchantID, Livemode: p.Livemode, Currency: req.Currency, Kind: ledger.SandboxFunding}, Amount: -*req.AmountMinor},
			}})
		if err != nil {
			return ledgerError(err, "amount_minor")
		}
		return nil
	})
	if err != nil {
		return err
	}
	b, err := s.balance(r.Context(), work, p)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, Topup{ID: txID, Object: "topup", Currency: req.Currency, AmountMinor: *req.AmountMinor,
		Livemode: p.Livemode, CreatedAt: timestamp.Format(at), Balance: b})
	return nil
}

// ledgerError maps ledger refusals to API errors.
func ledgerError(err error, param string) error {
	switch {
	case err == nil:
		return nil
	case errorsIs(err, ledger.ErrInsufficientFunds):
		return errs.PaymentRequired("insufficient_balance", "the available balance is too low")
	case errorsIs(err, ledger.ErrInvalidEntry):
		return errs.Invalid(param, "amount_too_large", "the amount would overflow the balance")
	}
	return err
}
