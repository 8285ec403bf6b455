package banking

import (
	"time"

	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/timestamp"
)

// Transfer statuses are the pacs.002 transaction status codes.
const (
	StatusACSC = iso20022.StatusACSC // settled (terminal)
	StatusACSP = iso20022.StatusACSP // accepted, settlement in process
	StatusACWP = iso20022.StatusACWP // held for compliance review
	StatusRJCT = iso20022.StatusRJCT // rejected (terminal)
)

// Transfer is one credit transfer transaction, identified by its UETR.
type Transfer struct {
	ID                  string
	Livemode            bool
	UETR                string
	MsgID               string
	MsgCreatedAt        time.Time // the pacs.008's CreDtTm; zero when unreadable
	MsgCreatedAtText    string    // the pacs.008's CreDtTm as received, echoed in every pacs.002
	EndToEndID          string
	Status              string
	Reason              iso20022.StatusReason // zero unless RJCT
	AmountMinor         int64
	Currency            string
	Debtor              Party
	DebtorAgent         string
	Creditor            Party
	CreditorAgent       string
	RemittanceInfo      *string
	DebtorMerchantID    string
	CreditorMerchantID  string // empty when the transfer never reached the creditor agent
	ReturnedAmountMinor int64
	Returns             []Return
	Screening           *ScreeningRecord // nil unless screened
	CreatedBy           string           // principal that sent the pacs.008
	ReviewedBy          string
	ReviewNote          string
	ReviewedAt          *time.Time
	CreatedAt           time.Time
	SettledAt           *time.Time
}

// Party is a debtor or creditor: a name and an account identifier.
type Party struct {
	Name    string `json:"name"`
	Account string `json:"account"`
}

// Return kinds: a return is sent by the creditor agent (pacs.004), a
// cancellation by the debtor agent (camt.056); both move money back.
const (
	KindReturn = "return"
	KindCancel = "cancel"
)

// Return is one return or cancellation applied to a settled transfer.
type Return struct {
	ID          string
	Kind        string // KindReturn or KindCancel
	Source      string // iso20022.ReturnFromJSON, ReturnFromPacs004 or ReturnFromCamt056
	MsgID       string // the XML message's id; empty for JSON
	AmountMinor int64
	ReasonCode  string
	ReasonText  string
	CreatedBy   string
	CreatedAt   time.Time
}

// ScreeningRecord is what screening said about the two names of a transfer;
// kept for the compliance queue, never shown in the transfer row.
type ScreeningRecord struct {
	Debtor   NameScreening `json:"debtor"`
	Creditor NameScreening `json:"creditor"`
}

// Hit reports whether either name matched the list.
func (r *ScreeningRecord) Hit() bool {
	return r != nil && (r.Debtor.Status == ScreenHit || r.Creditor.Status == ScreenHit)
}

// TransferRow is the JSON transfer row, exactly its
// fields.
type TransferRow struct {
	UETR                string       `json:"uetr"`
	MsgID               string       `json:"msg_id"`
	EndToEndID          string       `json:"end_to_end_id"`
	Status              string       `json:"status"`
	StatusReason        *ReasonJSON  `json:"status_reason"`
	AmountMinor         int64        `json:"amount_minor"`
	Currency            string       `json:"currency"`
	Debtor              Party        `json:"debtor"`
	DebtorAgent         string       `json:"debtor_agent"`
	Creditor            Party        `json:"creditor"`
	CreditorAgent       string       `json:"creditor_agent"`
	RemittanceInfo      *string      `json:"remittance_info"`
	ReturnedAmountMinor int64        `json:"returned_amount_minor"`
	Returns             []ReturnJSON `json:"returns"`
	CreatedAt           string       `json:"created_at"`
	SettledAt           *string      `json:"settled_at"`
}

// ReasonJSON is a status reason in JSON: the ISO 20022 code, its text and
// payd's detail.
type ReasonJSON struct {
	Code   string `json:"code"`
	Text   string `json:"text"`
	Detail string `json:"detail,omitempty"`
}

// ReturnJSON is one entry of returns[].
type ReturnJSON struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	AmountMinor int64  `json:"amount_minor"`
	ReasonCode  string `json:"reason_code"`
	ReasonText  string `json:"reason_text"`
	CreatedAt   string `json:"created_at"`
}

func formatTime(t time.Time) string { return timestamp.Format(t) }

// Row renders the transfer as its JSON row.
func (t *Transfer) Row() TransferRow {
	r := TransferRow{
		UETR: t.UETR, MsgID: t.MsgID, EndToEndID: t.EndToEndID, Status: t.Status,
		AmountMinor: t.AmountMinor, Currency: t.Currency,
		Debtor: t.Debtor, DebtorAgent: t.DebtorAgent, Creditor: t.Creditor, CreditorAgent: t.CreditorAgent,
		RemittanceInfo: t.RemittanceInfo, ReturnedAmountMinor: t.ReturnedAmountMinor,
		Returns: make([]ReturnJSON, 0, len(t.Returns)), CreatedAt: formatTime(t.CreatedAt),
	}
	if !t.Reason.IsZero() {
		r.StatusReason = &ReasonJSON{Code: t.Reason.Code, Text: t.Reason.Text, Detail: t.Reason.Detail}
	}
	for _, x := range t.Returns {
		r.Returns = append(r.Returns, ReturnJSON{ID: x.ID, Type: x.Kind, AmountMinor: x.AmountMinor,
			ReasonCode: x.ReasonCode, ReasonText: x.ReasonText, CreatedAt: formatTime(x.CreatedAt)})
	}
	if t.SettledAt != nil {
		s := formatTime(*t.SettledAt)
		r.SettledAt = &s
	}
	return r
}

// Report is the transfer's current status as a one-transaction pacs.002
// (GET with Accept: application/xml).
func (t *Transfer) Report(reportID string, now time.Time) iso20022.StatusReport {
	return iso20022.StatusReport{
		MsgID: reportID, CreatedAt: now, OriginalMsgID: t.MsgID, OriginalCreatedAt: t.MsgCreatedAt,
		OriginalCreatedAtText: t.MsgCreatedAtText, Transactions: []iso20022.TxStatus{t.txStatus()},
	}
}

// txStatus is the transfer's line of a pacs.002: its references and status,
// when it was accepted (AccptncDtTm, unless rejected) and settled
// (FctvIntrBkSttlmDt), and the original's instructing (debtor) and
// instructed (creditor) agents.
func (t *Transfer) txStatus() iso20022.TxStatus {
	st := iso20022.TxStatus{UETR: t.UETR, EndToEndID: t.EndToEndID, Status: t.Status, Reason: t.Reason,
		InstructingAgent: t.DebtorAgent, InstructedAgent: t.CreditorAgent}
	if t.Status != StatusRJCT {
		st.AcceptedAt = t.CreatedAt
	}
	if t.Status == StatusACSC && t.SettledAt != nil {
		st.SettledAt = *t.SettledAt
	}
	return st
}

// remainingMinor is what can still be returned.
func (t *Transfer) remainingMinor() int64 { return t.AmountMinor - t.ReturnedAmountMinor }
