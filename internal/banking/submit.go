package banking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
)

// Submission is the answer to a pacs.008: its status report.
type Submission struct {
	Report iso20022.StatusReport
	// Replayed is true when the report is the stored answer to an earlier,
	// identical message with the same MsgId.
	Replayed bool
}

// HTTPStatus is 202 when any transaction is held (ACWP), 200 otherwise.
func (s Submission) HTTPStatus() int {
	for _, tx := range s.Report.Transactions {
		if tx.Status == StatusACWP {
			return http.StatusAccepted
		}
	}
	return http.StatusOK
}

// Reasons the service adds beyond the pure rules of the iso20022 package.
const (
	detailMsgIDReused = "GrpHdr/MsgId: already used by this participant for a different message"
	detailUETRTaken   = "PmtId/UETR: already used by an earlier transfer"
	detailAM04        = "the debtor agent's settlement account cannot cover the amount"
)

// Submit processes a credit transfer message from the participant caller,
// read by iso20022.DecodeXML or DecodeJSON. schemaErr is the decoder's
// *SchemaError, if any: the whole message is then rejected with FF01 and
// nothing is stored.
//
// A transaction naming a debtor agent (a well-formed BIC) other than the
// caller's makes the whole request a 403 permission_denied, with nothing
// written. Otherwise every transaction gets a status in the report:
// the pure profile rules first, then DUPL (UETR already used), RC01 (creditor
// agent not a participant) and AM04 (debtor settlement balance short); a
// transaction passing them all is ACWP when screening hits either name, ACSP
// when the creditor agent settles deferred, and ACSC (settled now)
// otherwise.
//
// A message whose MsgId the caller already used is answered with the stored
// report when it is the identical message (same content, whatever its
// format or envelope), and rejected whole with DUPL otherwise.
//
// Its writes run in the request's unit of work (cl; store.NoClaim without
// one).
func (s *Service) Submit(ctx context.Context, cl store.Claim, p auth.Principal, caller Participant, msg iso20022.Message, schemaErr *iso20022.SchemaError) (Submission, error) {
	for i, tx := range msg.Transactions {
		if iso20022.ValidBIC(tx.DebtorAgent) && !sameBIC(tx.DebtorAgent, caller.BIC) {
			return Submission{}, &errs.Error{Kind: errs.KindPermission, Code: "permission_denied",
				Message: "transaction " + itoa(int64(i+1)) + ": the debtor agent must be the calling participant (" + caller.BIC + ")"}
		}
	}
	if err := s.screeningAvailable(p.Livemode); err != nil {
		return Submission{}, err
	}
	reportID := NewReportID()
	if schemaErr != nil {
		return Submission{Report: iso20022.GroupRejection(reportID, s.db.Now(), msg, schemaErr.Reason())}, nil
	}
	verdicts := iso20022.Validate(msg)
	// Screening is CPU work on the in-memory list: do it before the database
	// transaction so the transaction stays short.
	screened := make([]*ScreeningRecord, len(msg.Transactions))
	for i, v := range verdicts {
		if v.OK() {
			screened[i] = screenParties(s.screener, msg.Transactions[i].Debtor.Name, msg.Transactions[i].Creditor.Name)
		}
	}
	hash, err := contentHash(msg)
	if err != nil {
		return Submission{}, err
	}
	var out Submission
	err = s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		out = Submission{}
		run := &submission{svc: s, tx: tx, p: p, caller: caller, msg: msg, participants: map[string]participantLookup{}, balances: map[string]int64{}}
		recorded := recordable(msg.MsgID)
		if recorded {
			prior, err := claimMsgID(ctx, tx, p, msg.MsgID, hash, &run.messageID)
			if err != nil {
				return err
			}
			if prior != nil {
				if prior.hash == hash && prior.report != "" {
					var rep iso20022.StatusReport
					if err := json.Unmarshal([]byte(prior.report), &rep); err != nil {
						return err
					}
					out = Submission{Report: rep, Replayed: true}
					return nil
				}
				out.Report = iso20022.GroupRejection(reportID, tx.Now(), msg, iso20022.NewStatusReason(iso20022.ReasonDUPL, detailMsgIDReused))
				return nil
			}
		}
		if err := run.lockAccounts(ctx, verdicts); err != nil {
			return err
		}
		rep := iso20022.StatusReport{MsgID: reportID, CreatedAt: tx.Now(), OriginalMsgID: msg.MsgID, OriginalCreatedAt: msg.CreatedAt,
			OriginalCreatedAtText: msg.CreatedAtText}
		for i, v := range verdicts {
			st, err := run.transaction(ctx, i, v, screened[i])
			if err != nil {
				return err
			}
			rep.Transactions = append(rep.Transactions, st)
		}
		if recorded {
			b, err := json.Marshal(rep)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE transfer_messages SET report = ? WHERE id = ?", string(b), run.messageID); err != nil {
				return err
			}
		}
		if run.queued && s.notify != nil {
			tx.AfterCommit(s.notify)
		}
		out.Report = rep
		return nil
	})
	return out, err
}

// recordable reports whether a MsgId can key duplicate detection: one that
// breaks the profile (empty, over 35 characters) is not recorded.
func recordable(msgID string) bool {
	n := utf8.RuneCountInString(msgID)
	return strings.TrimSpace(msgID) != "" && n <= iso20022.MaxMsgIDLength
}

// contentHash identifies a message by what it says rather than by its bytes,
// so the same message resent with another envelope, namespace prefixes,
// whitespace or in the other format is recognised as identical.
func contentHash(msg iso20022.Message) (string, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

type priorMessage struct{ hash, report string }

// claimMsgID records the caller's MsgId, or returns the message already
// recorded under it. On PostgreSQL the insert waits for a concurrent
// transaction claiming the same MsgId, so exactly one of them processes it.
func claimMsgID(ctx context.Context, tx *store.Tx, p auth.Principal, msgID, hash string, id *string) (*priorMessage, error) {
	*id = ids.New("tmsg_")
	res, err := tx.Exec(ctx, `INSERT INTO transfer_messages (id, merchant_id, livemode, msg_id, content_hash, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, *id, p.MerchantID, p.Livemode, msgID, hash, p.ID, store.Micros(tx.Now()))
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return nil, err
	}
	var prior priorMessage
	err = tx.QueryRow(ctx, "SELECT content_hash, report FROM transfer_messages WHERE merchant_id = ? AND livemode = ? AND msg_id = ?",
		p.MerchantID, p.Livemode, msgID).Scan(&prior.hash, &prior.report)
	return &prior, err
}

type participantLookup struct {
	p  Participant
	ok bool
}

// submission is one message being processed inside its transaction.
type submission struct {
	svc          *Service
	tx           *store.Tx
	p            auth.Principal
	caller       Participant
	msg          iso20022.Message
	messageID    string
	participants map[string]participantLookup
	balances     map[string]int64 // the debtor agent's settlement balance per currency, once read
	queued       bool             // a settlement job was queued
}

// lockAccounts reads and locks, in the ledger's order, every settlement
// account the message may post to: the debtor agent's available and
// clearing accounts and each known creditor agent's available account.
// Taking them all at once, in one order, lets two banks pay each other at
// the same moment without deadlocking, and makes the debtor's balance a
// figure the whole message can rely on.
func (r *submission) lockAccounts(ctx context.Context, verdicts []iso20022.TxVerdict) error {
	var refs []ledger.AccountRef
	for i, v := range verdicts {
		if !v.OK() {
			continue
		}
		x := r.msg.Transactions[i]
		refs = append(refs, account(r.caller.MerchantID, r.p.Livemode, x.Currency, ledger.Available),
			account(r.caller.MerchantID, r.p.Livemode, x.Currency, ledger.SettlementClearing))
		creditor, ok, err := r.participant(ctx, x.CreditorAgent)
		if err != nil {
			return err
		}
		if ok {
			refs = append(refs, account(creditor.MerchantID, r.p.Livemode, x.Currency, ledger.Available))
		}
	}
	if len(refs) == 0 {
		return nil
	}
	locked, err := ledger.LockBalances(ctx, r.tx, refs...)
	if err != nil {
		return err
	}
	for ref, bal := range locked {
		if ref.MerchantID == r.caller.MerchantID && ref.Kind == ledger.Available {
			r.balances[ref.Currency] = bal
		}
	}
	return nil
}

// available returns the debtor agent's settlement balance in currency as it
// stands in this transaction (locked by lockAccounts).
func (r *submission) available(ctx context.Context, currency string) (int64, error) {
	if b, ok := r.balances[currency]; ok {
		return b, nil
	}
	locked, err := ledger.LockBalances(ctx, r.tx, account(r.caller.MerchantID, r.p.Livemode, currency, ledger.Available))
	if err != nil {
		return 0, err
	}
	for _, b := range locked {
		r.balances[currency] = b
	}
	return r.balances[currency], nil
}

func (r *submission) participant(ctx context.Context, bic string) (Participant, bool, error) {
	if l, ok := r.participants[bic]; ok {
		return l.p, l.ok, nil
	}
	p, ok, err := participantByBIC(ctx, r.tx, bic)
	if err == nil {
		r.participants[bic] = participantLookup{p, ok}
	}
	return p, ok, err
}

// newTransfer is the row for transaction i as received.
func (r *submission) newTransfer(i int) *Transfer {
	x := r.msg.Transactions[i]
	t := &Transfer{
		ID: ids.New("tr_"), Livemode: r.p.Livemode, UETR: x.UETR, MsgID: r.msg.MsgID, MsgCreatedAt: r.msg.CreatedAt, MsgCreatedAtText: r.msg.CreatedAtText,
		EndToEndID: x.EndToEndID, AmountMinor: x.AmountMinor, Currency: x.Currency,
		Debtor: Party{Name: x.Debtor.Name, Account: x.Debtor.Account}, DebtorAgent: x.DebtorAgent,
		Creditor: Party{Name: x.Creditor.Name, Account: x.Creditor.Account}, CreditorAgent: x.CreditorAgent,
		DebtorMerchantID: r.caller.MerchantID, CreatedBy: r.p.ID, CreatedAt: r.tx.Now(),
	}
	if x.RemittanceInfo != "" {
		s := x.RemittanceInfo
		t.RemittanceInfo = &s
	}
	return t
}

func rejected(x iso20022.Transaction, reason iso20022.StatusReason) iso20022.TxStatus {
	return iso20022.TxStatus{UETR: x.UETR, EndToEndID: x.EndToEndID, Status: StatusRJCT, Reason: reason,
		InstructingAgent: x.DebtorAgent, InstructedAgent: x.CreditorAgent}
}

// transaction decides and records the status of transaction i.
func (r *submission) transaction(ctx context.Context, i int, v iso20022.TxVerdict, screened *ScreeningRecord) (iso20022.TxStatus, error) {
	x := r.msg.Transactions[i]
	if !v.OK() {
		// Rejected by the pure rules: keep a row when the UETR can key one
		// (and is free), so the debtor agent can look the rejection up.
		if iso20022.ValidUETR(x.UETR) {
			t := r.newTransfer(i)
			t.Status, t.Reason = StatusRJCT, v.Reason
			if err := r.store(ctx, t); err != nil {
				return iso20022.TxStatus{}, err
			}
		}
		return rejected(x, v.Reason), nil
	}
	taken, err := uetrTaken(ctx, r.tx, r.p.Livemode, x.UETR)
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	if taken {
		return rejected(x, iso20022.NewStatusReason(iso20022.ReasonDUPL, detailUETRTaken)), nil
	}
	t := r.newTransfer(i)
	creditor, ok, err := r.participant(ctx, x.CreditorAgent)
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	if !ok {
		t.Status, t.Reason = StatusRJCT, iso20022.NewStatusReason(iso20022.ReasonRC01, "CdtrAgt/FinInstnId/BICFI: the creditor agent is not a participant")
		return r.storeOrDuplicate(ctx, t, x)
	}
	// The debtor agent's settlement balance is locked for the whole message,
	// so the running figure decides AM04 exactly and the posting below
	// cannot be refused for funds.
	balance, err := r.available(ctx, t.Currency)
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	if balance < t.AmountMinor {
		// Rejected before reaching the creditor agent: only the debtor
		// agent sees it.
		t.Status, t.Reason = StatusRJCT, iso20022.NewStatusReason(iso20022.ReasonAM04, detailAM04)
		return r.storeOrDuplicate(ctx, t, x)
	}
	t.CreditorMerchantID = creditor.MerchantID
	t.Screening = screened
	now := r.tx.Now()
	switch {
	case screened.Hit():
		t.Status = StatusACWP
	case creditor.DeferredSettlement:
		t.Status = StatusACSP
	default:
		t.Status, t.SettledAt = StatusACSC, &now
	}
	// The row first: a UETR taken by a concurrent message since the check
	// above is a DUPL, and nothing has moved yet.
	inserted, err := insertTransfer(ctx, r.tx, t, r.messageID)
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	if !inserted {
		return rejected(x, iso20022.NewStatusReason(iso20022.ReasonDUPL, detailUETRTaken)), nil
	}
	if t.Status == StatusACSC {
		err = postSettleNow(ctx, r.tx, t)
	} else {
		err = postAccept(ctx, r.tx, t)
	}
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	r.balances[t.Currency] = balance - t.AmountMinor
	if t.Status == StatusACSC && t.CreditorMerchantID == t.DebtorMerchantID {
		r.balances[t.Currency] = balance // a bank paying itself
	}
	switch t.Status {
	case StatusACSC:
		if err := emit(ctx, r.tx, t, EventSettled); err != nil {
			return iso20022.TxStatus{}, err
		}
	case StatusACSP:
		if err := enqueueSettlement(ctx, r.tx, t.ID, now.Add(r.svc.delay)); err != nil {
			return iso20022.TxStatus{}, err
		}
		r.queued = true
	}
	return t.txStatus(), nil
}

// store writes a rejected transfer and its event; a UETR already taken is
// left alone (the report still carries the rejection).
func (r *submission) store(ctx context.Context, t *Transfer) error {
	inserted, err := insertTransfer(ctx, r.tx, t, r.messageID)
	if err != nil || !inserted {
		return err
	}
	return emit(ctx, r.tx, t, EventRejected)
}

// storeOrDuplicate writes a rejected transfer, answering DUPL if a
// concurrent message took its UETR meanwhile.
func (r *submission) storeOrDuplicate(ctx context.Context, t *Transfer, x iso20022.Transaction) (iso20022.TxStatus, error) {
	inserted, err := insertTransfer(ctx, r.tx, t, r.messageID)
	if err != nil {
		return iso20022.TxStatus{}, err
	}
	if !inserted {
		return rejected(x, iso20022.NewStatusReason(iso20022.ReasonDUPL, detailUETRTaken)), nil
	}
	if err := emit(ctx, r.tx, t, EventRejected); err != nil {
		return iso20022.TxStatus{}, err
	}
	return rejected(x, t.Reason), nil
}

// settleJobKind is the background job that settles an ACSP transfer.
const settleJobKind = "transfer_settle"

type settlePayload struct {
	TransferID string `json:"transfer_id"`
}

func enqueueSettlement(ctx context.Context, tx *store.Tx, transferID string, at time.Time) error {
	return jobs.Enqueue(ctx, tx, settleJobKind, settlePayload{TransferID: transferID}, at, settleJobKind+":"+transferID)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
