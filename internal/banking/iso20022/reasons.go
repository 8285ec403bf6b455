package iso20022

// Transaction and group status codes of pacs.002 (ExternalPaymentTransactionStatus1Code
// and ExternalPaymentGroupStatus1Code) that payd uses.
const (
	// StatusACSC: accepted, settlement completed.
	StatusACSC = "ACSC"
	// StatusACSP: accepted, settlement in process.
	StatusACSP = "ACSP"
	// StatusACWP: accepted without posting; payd holds it for compliance review.
	StatusACWP = "ACWP"
	// StatusRJCT: rejected; always carries a status reason.
	StatusRJCT = "RJCT"
	// StatusPART: group status when the transactions do not share one status.
	StatusPART = "PART"
)

// Reason codes (ExternalStatusReason1Code) payd puts on a rejection. The
// pure rules of this package produce FF01, CH16, AC01, RC01, AM01, AM03,
// AM12 and DUPL (for a UETR repeated inside one message); the banking service
// adds DUPL across messages, RC01 for an unknown creditor agent and AM04.
const (
	// ReasonFF01 (InvalidFileFormat): the message breaks its schema.
	ReasonFF01 = "FF01"
	// ReasonCH16 (ElementContentFormallyIncorrect): a value breaks the profile.
	ReasonCH16 = "CH16"
	// ReasonAC01 (IncorrectAccountNumber): an account is missing or fails its check.
	ReasonAC01 = "AC01"
	// ReasonRC01 (BankIdentifierIncorrect): a BIC is malformed or unknown.
	ReasonRC01 = "RC01"
	// ReasonAM01 (ZeroAmount): the amount is zero.
	ReasonAM01 = "AM01"
	// ReasonAM03 (NotAllowedCurrency): the currency is not DJF.
	ReasonAM03 = "AM03"
	// ReasonAM04 (InsufficientFunds): the debtor agent's settlement balance is short.
	ReasonAM04 = "AM04"
	// ReasonAM12 (InvalidAmount): the amount is missing, malformed or fractional.
	ReasonAM12 = "AM12"
	// ReasonDUPL (DuplicatePayment): the msg_id or UETR was used before.
	ReasonDUPL = "DUPL"
)

// reasonTexts are the names and definitions of the ISO 20022 external code
// list ExternalStatusReason1Code.
var reasonTexts = map[string]struct{ name, definition string }{
	ReasonFF01: {"InvalidFileFormat", "File Format incomplete or invalid"},
	ReasonCH16: {"ElementContentFormallyIncorrect", "Content is incorrect"},
	ReasonAC01: {"IncorrectAccountNumber", "Format of the account number specified is not correct"},
	ReasonRC01: {"BankIdentifierIncorrect", "Bank identifier code specified in the message has an incorrect format (formerly IncorrectFormatForRoutingCode)."},
	ReasonAM01: {"ZeroAmount", "Specified message amount is equal to zero"},
	ReasonAM03: {"NotAllowedCurrency", "Specified message amount is an non processable currency outside of existing agreement"},
	ReasonAM04: {"InsufficientFunds", "Amount of funds available to cover specified message amount is insufficient."},
	ReasonAM12: {"InvalidAmount", "Amount is invalid or missing"},
	ReasonDUPL: {"DuplicatePayment", "Payment is a duplicate of another payment"},
}

// ReasonText returns the ISO 20022 definition of a status reason code, or ""
// for a code payd does not use.
func ReasonText(code string) string { return reasonTexts[code].definition }

// ReasonName returns the ISO 20022 name of a status reason code (for example
// "InsufficientFunds" for AM04), or "" for a code payd does not use.
func ReasonName(code string) string { return reasonTexts[code].name }

// StatusReason is why a transaction (or a whole group) has its status: an ISO
// 20022 reason code, its standard text, and payd's detail.
type StatusReason struct {
	// Code is the ExternalStatusReason1Code, e.g. "CH16".
	Code string
	// Text is the code's ISO 20022 definition.
	Text string
	// Detail says which field broke which rule, without quoting the message.
	Detail string
}

// IsZero reports whether no reason is set.
func (r StatusReason) IsZero() bool { return r.Code == "" }

// NewStatusReason returns the reason for code with its ISO text and detail.
func NewStatusReason(code, detail string) StatusReason {
	return StatusReason{Code: code, Text: ReasonText(code), Detail: detail}
}
