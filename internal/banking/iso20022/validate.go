package iso20022

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Profile values.
const (
	// ProfileCurrency is the only currency payd settles.
	ProfileCurrency = "DJF"
	// ProfileSettlementMethod is the only settlement method: clearing system.
	ProfileSettlementMethod = "CLRG"
	// ProfileChargeBearer is the only charge bearer: following the service level.
	ProfileChargeBearer = "SLEV"
	// MaxMsgIDLength is the longest msg_id (Max35Text).
	MaxMsgIDLength = 35
	// MaxRemittanceLength is the longest remittance_info.
	MaxRemittanceLength = 140
)

// TxVerdict is the outcome of the pure profile rules for one transaction.
type TxVerdict struct {
	// Index is the transaction's position in the message, from 0.
	Index int
	// UETR and EndToEndID identify the transaction as received.
	UETR, EndToEndID string
	// Reason is why the transaction is rejected; zero when it passes.
	Reason StatusReason
	// Problems lists every rule the transaction breaks, group-level rules
	// first, in the order of the rule table in docs/iso20022.md; Reason comes
	// from the first.
	Problems []FieldError
}

// OK reports whether the transaction passed every pure rule.
func (v TxVerdict) OK() bool { return v.Reason.IsZero() }

// Validate applies payd's profile rules that need no database to every
// transaction of m. A rule broken in the group header (msg_id, created_at,
// settlement method, number of transactions) rejects every transaction.
//
// Reason codes: CH16 for malformed content, AC01 for an account, RC01 for a
// BIC, AM03 for a currency other than DJF, AM12 for a missing, negative,
// oversized or fractional amount, AM01 for a zero amount, and DUPL for a UETR
// already used earlier in the same message. Duplicates across messages,
// unknown agents, balances and screening are the banking service's.
func Validate(m Message) []TxVerdict {
	group := groupProblems(m)
	verdicts := make([]TxVerdict, len(m.Transactions))
	seen := make(map[string]bool, len(m.Transactions))
	for i, tx := range m.Transactions {
		problems := append([]FieldError(nil), group...)
		problems = append(problems, transactionProblems(i, tx)...)
		if ValidUETR(tx.UETR) {
			if seen[tx.UETR] {
				problems = append(problems, FieldError{Path: txPath(i, "PmtId/UETR"), Code: ReasonDUPL, Reason: "UETR repeated within the message"})
			}
			seen[tx.UETR] = true
		}
		v := TxVerdict{Index: i, UETR: tx.UETR, EndToEndID: tx.EndToEndID, Problems: problems}
		if len(problems) > 0 {
			v.Reason = NewStatusReason(problems[0].Code, problems[0].Path+": "+problems[0].Reason)
		}
		verdicts[i] = v
	}
	return verdicts
}

func groupProblems(m Message) []FieldError {
	var out []FieldError
	add := func(path, reason string) {
		out = append(out, FieldError{Path: path, Code: ReasonCH16, Reason: reason})
	}
	switch n := utf8.RuneCountInString(m.MsgID); {
	case n == 0:
		add("GrpHdr/MsgId", "missing")
	case n > MaxMsgIDLength:
		add("GrpHdr/MsgId", "longer than 35 characters")
	}
	if reason := checkTimestamp(m.CreatedAtText); reason != "" {
		add("GrpHdr/CreDtTm", reason)
	}
	if m.SettlementMethod != ProfileSettlementMethod {
		add("GrpHdr/SttlmInf/SttlmMtd", "settlement method must be CLRG")
	}
	if n, err := strconv.Atoi(m.DeclaredTxCount); err != nil || n != len(m.Transactions) {
		add("GrpHdr/NbOfTxs", "does not match the number of transactions")
	}
	return out
}

// checkTimestamp accepts an RFC 3339 date-time in UTC ("Z" or "+00:00").
func checkTimestamp(s string) string {
	if s == "" {
		return "missing"
	}
	if parseCreatedAt(s).IsZero() {
		return "not an RFC 3339 date-time with a UTC offset"
	}
	if !strings.HasSuffix(s, "Z") && !strings.HasSuffix(s, "+00:00") {
		return "not in UTC"
	}
	return ""
}

func txPath(i int, field string) string {
	return "CdtTrfTxInf[" + strconv.Itoa(i+1) + "]/" + field
}

func transactionProblems(i int, tx Transaction) []FieldError {
	var out []FieldError
	add := func(code, field, reason string) {
		out = append(out, FieldError{Path: txPath(i, field), Code: code, Reason: reason})
	}
	switch {
	case tx.UETR == "":
		add(ReasonCH16, "PmtId/UETR", "missing")
	case !ValidUETR(tx.UETR):
		add(ReasonCH16, "PmtId/UETR", "not a lower-case version 4 UUID")
	}
	if r := textRule(tx.EndToEndID, 35); r != "" {
		add(ReasonCH16, "PmtId/EndToEndId", r)
	}
	if tx.ChargeBearer != ProfileChargeBearer {
		add(ReasonCH16, "ChrgBr", "charge bearer must be SLEV")
	}
	if utf8.RuneCountInString(tx.RemittanceInfo) > MaxRemittanceLength {
		add(ReasonCH16, "RmtInf/Ustrd", "longer than 140 characters")
	}
	if r := textRule(tx.Debtor.Name, 140); r != "" {
		add(ReasonCH16, "Dbtr/Nm", r)
	}
	if r := textRule(tx.Creditor.Name, 140); r != "" {
		add(ReasonCH16, "Cdtr/Nm", r)
	}
	if r := accountRule(tx.Debtor); r != "" {
		add(ReasonAC01, "DbtrAcct/Id", r)
	}
	if r := accountRule(tx.Creditor); r != "" {
		add(ReasonAC01, "CdtrAcct/Id", r)
	}
	if r := bicRule(tx.DebtorAgent); r != "" {
		add(ReasonRC01, "DbtrAgt/FinInstnId/BICFI", r)
	}
	if r := bicRule(tx.CreditorAgent); r != "" {
		add(ReasonRC01, "CdtrAgt/FinInstnId/BICFI", r)
	}
	switch {
	case tx.Currency == "":
		add(ReasonAM03, "IntrBkSttlmAmt/@Ccy", "currency missing")
	case tx.Currency != ProfileCurrency:
		add(ReasonAM03, "IntrBkSttlmAmt/@Ccy", "only DJF is accepted")
	}
	switch {
	case tx.AmountIssue != "":
		add(ReasonAM12, "IntrBkSttlmAmt", tx.AmountIssue)
	case tx.AmountFraction != "":
		add(ReasonAM12, "IntrBkSttlmAmt", "amount has a fraction finer than the currency's minor unit")
	case tx.AmountMinor == 0:
		add(ReasonAM01, "IntrBkSttlmAmt", "amount is zero")
	}
	return out
}

func textRule(s string, max int) string {
	switch n := utf8.RuneCountInString(s); {
	case strings.TrimSpace(s) == "":
		return "missing"
	case n > max:
		return "longer than " + strconv.Itoa(max) + " characters"
	}
	return ""
}

func accountRule(p Party) string {
	s := p.Account
	switch {
	case strings.TrimSpace(s) == "":
		return "account missing"
	case utf8.RuneCountInString(s) > 34:
		return "account identifier longer than 34 characters"
	case p.IBAN && !ValidIBAN(s):
		return "IBAN fails its mod-97 check"
	}
	return ""
}

func bicRule(s string) string {
	switch {
	case s == "":
		return "BIC missing"
	case !ValidBIC(s):
		return "not an ISO 9362 BIC"
	}
	return ""
}
