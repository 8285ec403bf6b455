package iso20022

import "time"

// Message is a customer credit transfer in payd's profile, read from a
// pacs.008.001.08 Document or from the JSON envelope. Decoding never judges
// the content: values are kept as received (or as close as the Go type
// allows) and Validate applies the profile's rules.
type Message struct {
	// MsgID is GrpHdr/MsgId, JSON msg_id.
	MsgID string
	// CreatedAt is GrpHdr/CreDtTm in UTC, JSON created_at; zero when
	// CreatedAtText is not an RFC 3339 date-time.
	CreatedAt time.Time
	// CreatedAtText is the creation date-time exactly as received, kept so
	// Validate can reject a timestamp that is not RFC 3339 UTC (CH16).
	CreatedAtText string
	// SettlementMethod is GrpHdr/SttlmInf/SttlmMtd, JSON settlement.method.
	SettlementMethod string
	// DeclaredTxCount is GrpHdr/NbOfTxs as received; the JSON envelope has no
	// such field, so its decoder sets the number of transactions.
	DeclaredTxCount string
	// Transactions are the CdtTrfTxInf blocks, JSON transactions, in order.
	Transactions []Transaction
}

// Transaction is one credit transfer transaction (CdtTrfTxInf).
type Transaction struct {
	// UETR is PmtId/UETR, JSON uetr.
	UETR string
	// EndToEndID is PmtId/EndToEndId, JSON end_to_end_id.
	EndToEndID string
	// AmountMinor is IntrBkSttlmAmt in minor units of Currency (francs for
	// DJF), truncated toward zero when the amount has a finer part (see
	// AmountFraction). JSON amount_minor.
	AmountMinor int64
	// Currency is IntrBkSttlmAmt/@Ccy, JSON currency.
	Currency string
	// AmountFraction holds the digits of the amount below one minor unit of
	// Currency, without trailing zeros: "5" for DJF 1000.5. Empty when the
	// amount is a whole number of minor units. Validate reports it as AM12.
	AmountFraction string
	// AmountIssue says why the amount could not be read (missing, not a
	// number, negative, out of range); empty when it was read. Validate
	// reports it as AM12.
	AmountIssue string
	// ChargeBearer is ChrgBr, JSON charge_bearer.
	ChargeBearer string
	// Debtor is Dbtr/Nm and DbtrAcct, JSON debtor.
	Debtor Party
	// DebtorAgent is DbtrAgt/FinInstnId/BICFI, JSON debtor_agent.
	DebtorAgent string
	// Creditor is Cdtr/Nm and CdtrAcct, JSON creditor.
	Creditor Party
	// CreditorAgent is CdtrAgt/FinInstnId/BICFI, JSON creditor_agent.
	CreditorAgent string
	// RemittanceInfo is RmtInf/Ustrd (several lines are joined with one
	// space), JSON remittance_info.
	RemittanceInfo string
}

// Party is a debtor or a creditor: a name and an account.
type Party struct {
	// Name is Nm, JSON name.
	Name string
	// Account is Acct/Id/IBAN, or Acct/Id/Othr/Id when the account is not an
	// IBAN; JSON account.
	Account string
	// IBAN says the account is an IBAN, so it must pass the ISO 13616 check:
	// it was written in an IBAN element (XML), or it has the IBAN shape (JSON,
	// which has one account field). An Othr/Id is never taken for an IBAN,
	// whatever its shape: "US88664715164441" is a US account number.
	IBAN bool
}
