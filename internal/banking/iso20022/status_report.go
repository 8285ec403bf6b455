package iso20022

import (
	"encoding/xml"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// OriginalMessageName is the OrgnlMsgNmId of every report payd sends.
const OriginalMessageName = "pacs.008.001.08"

// NotProvided replaces an original reference that cannot be echoed in a
// schema-valid pacs.002 (missing, or longer than the schema allows).
const NotProvided = "NOTPROVIDED"

// StatusReport is a payment status report (pacs.002) about one pacs.008.
type StatusReport struct {
	// MsgID identifies the report itself (GrpHdr/MsgId, at most 35 characters).
	MsgID string
	// CreatedAt is when the report was made (GrpHdr/CreDtTm).
	CreatedAt time.Time
	// OriginalMsgID is the reported message's MsgId.
	OriginalMsgID string
	// OriginalCreatedAt is the reported message's CreDtTm; it is omitted when
	// zero or outside years 1 to 9999.
	OriginalCreatedAt time.Time
	// OriginalCreatedAtText is the reported message's CreDtTm as received;
	// when it is a valid xs:dateTime it is echoed unchanged instead of
	// OriginalCreatedAt re-formatted.
	OriginalCreatedAtText string `json:",omitempty"`
	// GroupReason rejects the whole group (FF01 for a schema-invalid
	// message); zero when each transaction has its own status.
	GroupReason StatusReason
	// Transactions are the per-transaction statuses, in message order.
	Transactions []TxStatus
}

// TxStatus is the status of one transaction of the reported message.
type TxStatus struct {
	// UETR and EndToEndID echo the transaction's references.
	UETR, EndToEndID string
	// Status is ACSC, ACSP, ACWP or RJCT.
	Status string
	// Reason is required for RJCT and optional otherwise.
	Reason StatusReason
	// AcceptedAt is when payd accepted the transaction (AccptncDtTm); zero
	// for a rejection.
	AcceptedAt time.Time `json:",omitzero"`
	// SettledAt is when it settled (FctvIntrBkSttlmDt, the date in UTC);
	// zero until then.
	SettledAt time.Time `json:",omitzero"`
	// InstructingAgent and InstructedAgent are the BICs of the original
	// transaction's debtor agent (which instructed it) and creditor agent
	// (which was instructed) (InstgAgt, InstdAgt); left out when not a BIC.
	InstructingAgent, InstructedAgent string `json:",omitempty"`
}

// GroupStatus is RJCT when the whole group is rejected, the transactions'
// status when they all share one, and PART otherwise.
func (r StatusReport) GroupStatus() string {
	if !r.GroupReason.IsZero() {
		return StatusRJCT
	}
	if len(r.Transactions) == 0 {
		return ""
	}
	s := r.Transactions[0].Status
	for _, tx := range r.Transactions[1:] {
		if tx.Status != s {
			return StatusPART
		}
	}
	return s
}

// GroupRejection builds the report rejecting a whole message with one
// reason: every transaction that could be read is listed as RJCT with it too.
// For a *SchemaError use its Reason.
func GroupRejection(msgID string, createdAt time.Time, original Message, reason StatusReason) StatusReport {
	r := StatusReport{
		MsgID:                 msgID,
		CreatedAt:             createdAt,
		OriginalMsgID:         original.MsgID,
		OriginalCreatedAt:     original.CreatedAt,
		OriginalCreatedAtText: original.CreatedAtText,
		GroupReason:           reason,
	}
	for _, tx := range original.Transactions {
		r.Transactions = append(r.Transactions, TxStatus{UETR: tx.UETR, EndToEndID: tx.EndToEndID, Status: StatusRJCT, Reason: reason,
			InstructingAgent: tx.DebtorAgent, InstructedAgent: tx.CreditorAgent})
	}
	return r
}

// Reason is the FF01 status reason for a schema-invalid message.
func (e *SchemaError) Reason() StatusReason { return NewStatusReason(ReasonFF01, e.Detail()) }

// check enforces what a schema-valid report needs from its caller.
func (r StatusReport) check() error {
	if n := utf8.RuneCountInString(r.MsgID); n == 0 || n > 35 {
		return &FieldError{Path: "GrpHdr/MsgId", Reason: "report MsgID must be 1 to 35 characters"}
	}
	if !representableTime(r.CreatedAt) {
		return &FieldError{Path: "GrpHdr/CreDtTm", Reason: "report CreatedAt must be in years 1 to 9999"}
	}
	if len(r.Transactions) == 0 && r.GroupReason.IsZero() {
		return &FieldError{Path: "TxInfAndSts", Reason: "a report needs transactions or a group reason"}
	}
	if !r.GroupReason.IsZero() && !validReasonCode(r.GroupReason.Code) {
		return &FieldError{Path: "OrgnlGrpInfAndSts/StsRsnInf", Reason: "reason code must be 1 to 4 upper-case letters or digits"}
	}
	for i, tx := range r.Transactions {
		path := "TxInfAndSts[" + strconv.Itoa(i+1) + "]"
		switch tx.Status {
		case StatusACSC, StatusACSP, StatusACWP, StatusRJCT:
		default:
			return &FieldError{Path: path + "/TxSts", Reason: "status must be ACSC, ACSP, ACWP or RJCT"}
		}
		if tx.Status == StatusRJCT && tx.Reason.IsZero() {
			return &FieldError{Path: path + "/StsRsnInf", Reason: "a rejection needs a reason"}
		}
		if !tx.Reason.IsZero() && !validReasonCode(tx.Reason.Code) {
			return &FieldError{Path: path + "/StsRsnInf", Reason: "reason code must be 1 to 4 upper-case letters or digits"}
		}
	}
	return nil
}

func validReasonCode(code string) bool {
	if len(code) == 0 || len(code) > 4 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// representableTime reports whether t can be written as an xs:dateTime with a
// four-digit year and is set; XSD has no year 0, which RFC 3339 allows.
func representableTime(t time.Time) bool {
	y := t.UTC().Year()
	return !t.IsZero() && y >= 1 && y <= 9999
}

// formatTimestamp renders an ISO 20022 / RFC 3339 date-time in UTC with
// milliseconds.
func formatTimestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// EncodeStatusReport writes report as a pacs.002.001.10 Document that
// validates against the official schema: GrpHdr, one OrgnlGrpInfAndSts
// (OrgnlMsgId, OrgnlMsgNmId pacs.008.001.08, GrpSts, group reason, counts per
// status for PART) and one TxInfAndSts per transaction. References that the
// schema cannot carry are handled as it allows: an unusable OriginalMsgID
// becomes NOTPROVIDED, an unusable end-to-end id or UETR is left out. Reason
// texts longer than 105 characters are split over several AddtlInf.
func EncodeStatusReport(report StatusReport) ([]byte, error) {
	if err := report.check(); err != nil {
		return nil, err
	}
	doc := pacs002Document{}
	doc.Report.GrpHdr.MsgID = report.MsgID
	doc.Report.GrpHdr.CreDtTm = formatTimestamp(report.CreatedAt)
	g := &doc.Report.Group
	g.OrgnlMsgID = NotProvided
	if n := utf8.RuneCountInString(report.OriginalMsgID); n >= 1 && n <= 35 {
		g.OrgnlMsgID = report.OriginalMsgID
	}
	g.OrgnlMsgNmID = OriginalMessageName
	g.OrgnlCreDtTm = report.originalCreatedText()
	g.GrpSts = report.GroupStatus()
	if !report.GroupReason.IsZero() {
		g.StsRsnInf = []xmlStatusReason{xmlReason(report.GroupReason)}
	}
	if g.GrpSts == StatusPART {
		g.NbOfTxsPerSts = countPerStatus(report.Transactions)
	}
	for _, tx := range report.Transactions {
		x := xmlTxStatus{TxSts: tx.Status}
		if n := utf8.RuneCountInString(tx.EndToEndID); n >= 1 && n <= 35 {
			x.OrgnlEndToEndID = tx.EndToEndID
		}
		if ValidUETR(tx.UETR) {
			x.OrgnlUETR = tx.UETR
		}
		if !tx.Reason.IsZero() {
			x.StsRsnInf = []xmlStatusReason{xmlReason(tx.Reason)}
		}
		x.AccptncDtTm = tx.acceptedText()
		if d := tx.settledDateText(); d != "" {
			x.FctvIntrBkSttlmDt = &xmlDateChoice{Dt: d}
		}
		x.InstgAgt, x.InstdAgt = agentByBIC(tx.InstructingAgent), agentByBIC(tx.InstructedAgent)
		doc.Report.Txs = append(doc.Report.Txs, x)
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// originalCreatedText is the OrgnlCreDtTm both encodings carry: the text as
// received when it is a valid date-time, else OriginalCreatedAt formatted,
// else "" (left out).
func (r StatusReport) originalCreatedText() string {
	switch {
	case validDateTimeText(r.OriginalCreatedAtText):
		return r.OriginalCreatedAtText
	case representableTime(r.OriginalCreatedAt):
		return formatTimestamp(r.OriginalCreatedAt)
	}
	return ""
}

// acceptedText is the AccptncDtTm of a transaction that was not rejected,
// "" otherwise.
func (tx TxStatus) acceptedText() string {
	if tx.Status != StatusRJCT && representableTime(tx.AcceptedAt) {
		return formatTimestamp(tx.AcceptedAt)
	}
	return ""
}

// settledDateText is the FctvIntrBkSttlmDt (YYYY-MM-DD, UTC) of a settled
// transaction, "" until it settles.
func (tx TxStatus) settledDateText() string {
	if tx.Status == StatusACSC && representableTime(tx.SettledAt) {
		return tx.SettledAt.UTC().Format("2006-01-02")
	}
	return ""
}

// agentBIC is the BIC an agent element carries, upper case; "" when bic is
// not a BIC (the element is left out).
func agentBIC(bic string) string {
	if !ValidBIC(bic) {
		return ""
	}
	return strings.ToUpper(bic)
}

func countPerStatus(txs []TxStatus) []xmlStatusCount {
	var out []xmlStatusCount
	index := map[string]int{}
	counts := []int{}
	for _, tx := range txs {
		i, ok := index[tx.Status]
		if !ok {
			i = len(counts)
			index[tx.Status] = i
			counts = append(counts, 0)
			out = append(out, xmlStatusCount{DtldSts: tx.Status})
		}
		counts[i]++
	}
	for i := range out {
		out[i].DtldNbOfTxs = strconv.Itoa(counts[i])
	}
	return out
}

func xmlReason(r StatusReason) xmlStatusReason {
	x := xmlStatusReason{}
	x.Rsn.Cd = r.Code
	x.AddtlInf = append(splitText(r.Text, 105), splitText(r.Detail, 105)...)
	return x
}

// splitText cuts s into pieces of at most max characters, preferring to cut
// after a space.
func splitText(s string, max int) []string {
	var out []string
	for s != "" {
		if utf8.RuneCountInString(s) <= max {
			out = append(out, s)
			break
		}
		cut, n := 0, 0
		lastSpace := -1
		for i, r := range s {
			if n == max {
				cut = i
				break
			}
			if r == ' ' {
				lastSpace = i + 1
			}
			n++
		}
		if lastSpace > 0 {
			cut = lastSpace
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// pacs002Document is the pacs.002.001.10 subset payd writes, in schema order.
type pacs002Document struct {
	XMLName xml.Name `xml:"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10 Document"`
	Report  struct {
		GrpHdr struct {
			MsgID   string `xml:"MsgId"`
			CreDtTm string `xml:"CreDtTm"`
		} `xml:"GrpHdr"`
		Group xmlGroupStatus `xml:"OrgnlGrpInfAndSts"`
		Txs   []xmlTxStatus  `xml:"TxInfAndSts"`
	} `xml:"FIToFIPmtStsRpt"`
}

type xmlGroupStatus struct {
	OrgnlMsgID    string            `xml:"OrgnlMsgId"`
	OrgnlMsgNmID  string            `xml:"OrgnlMsgNmId"`
	OrgnlCreDtTm  string            `xml:"OrgnlCreDtTm,omitempty"`
	GrpSts        string            `xml:"GrpSts,omitempty"`
	StsRsnInf     []xmlStatusReason `xml:"StsRsnInf"`
	NbOfTxsPerSts []xmlStatusCount  `xml:"NbOfTxsPerSts"`
}

type xmlStatusCount struct {
	DtldNbOfTxs string `xml:"DtldNbOfTxs"`
	DtldSts     string `xml:"DtldSts"`
}

type xmlTxStatus struct {
	OrgnlEndToEndID   string            `xml:"OrgnlEndToEndId,omitempty"`
	OrgnlUETR         string            `xml:"OrgnlUETR,omitempty"`
	TxSts             string            `xml:"TxSts"`
	StsRsnInf         []xmlStatusReason `xml:"StsRsnInf"`
	AccptncDtTm       string            `xml:"AccptncDtTm,omitempty"`
	FctvIntrBkSttlmDt *xmlDateChoice    `xml:"FctvIntrBkSttlmDt"`
	InstgAgt          *xmlAgent         `xml:"InstgAgt"`
	InstdAgt          *xmlAgent         `xml:"InstdAgt"`
}

// xmlDateChoice is a DateAndDateTime2Choice holding a date.
type xmlDateChoice struct {
	Dt string `xml:"Dt"`
}

// agentByBIC identifies an agent by BIC; nil (left out) when bic is not one.
func agentByBIC(bic string) *xmlAgent {
	if !ValidBIC(bic) {
		return nil
	}
	a := &xmlAgent{}
	a.FinInstnID.BICFI = strings.ToUpper(bic)
	return a
}

// validDateTimeText reports whether s can be echoed as an ISODateTime as it
// is (the xs:dateTime lexical form, a day that exists).
func validDateTimeText(s string) bool {
	return len(s) <= 64 && validDateTime(s, isoDateTime)
}

type xmlStatusReason struct {
	Rsn struct {
		Cd string `xml:"Cd"`
	} `xml:"Rsn"`
	AddtlInf []string `xml:"AddtlInf"`
}
