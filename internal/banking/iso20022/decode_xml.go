package iso20022

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"time"
)

// Namespaces of the message versions payd speaks.
const (
	// NamespacePacs008 is the customer credit transfer payd accepts.
	NamespacePacs008 = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"
	// NamespacePacs002 is the payment status report payd sends.
	NamespacePacs002 = "urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"
	// NamespacePacs004 is the payment return payd accepts (the version of
	// CBPR+ and most ISO 20022 market practice).
	NamespacePacs004 = "urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09"
	// NamespacePacs004v10 is the payment return version Fedwire and FedNow
	// publish, accepted beside .09.
	NamespacePacs004v10 = "urn:iso:std:iso:20022:tech:xsd:pacs.004.001.10"
	// NamespaceCamt056 is the cancellation request payd accepts.
	NamespaceCamt056 = "urn:iso:std:iso:20022:tech:xsd:camt.056.001.08"
)

// DecodeXML reads a pacs.008.001.08 Document, bare or in an envelope (any
// single root element holding a head.001 AppHdr and then the Document).
//
// It returns a *ParseError when the body cannot be used at all (not
// well-formed, forbidden markup, over the limits, another message type): the
// HTTP layer answers 400. It returns a *SchemaError together with what could
// be read of the message when the XML parses but breaks the pacs.008 schema:
// the caller answers with a pacs.002 rejecting the whole group with FF01 (see
// GroupRejection). Otherwise the error is nil and the Message is ready for
// Validate.
func DecodeXML(body []byte) (Message, error) {
	res, err := scanXML(body, pacs008Schema)
	if err != nil {
		return Message{}, err
	}
	var doc pacs008Document
	if err := decodeDocument(body, res.docDepth, &doc); err != nil {
		return Message{}, err
	}
	m := doc.message()
	if len(res.problems) > 0 {
		return m, &SchemaError{Problems: res.problems}
	}
	return m, nil
}

// decodeDocument unmarshals the Document element of a body that scanXML
// already accepted as well-formed.
func decodeDocument(body []byte, want int, v any) error {
	d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))))
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &ParseError{Kind: ErrMalformed, Reason: syntaxReason(err)}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == want && t.Name.Local == "Document" {
				if err := d.DecodeElement(v, &t); err != nil {
					return &ParseError{Kind: ErrMalformed, Reason: syntaxReason(err)}
				}
				return nil
			}
		case xml.EndElement:
			depth--
		}
	}
	return &ParseError{Kind: ErrUnsupportedMessage, Reason: "no Document"}
}

// pacs008Document holds the parts of a pacs.008.001.08 Document that payd
// reads. Names match local names only; scanXML has already checked that every
// element is in the pacs.008 namespace and where the schema allows it.
type pacs008Document struct {
	Msg struct {
		GrpHdr struct {
			MsgID    string `xml:"MsgId"`
			CreDtTm  string `xml:"CreDtTm"`
			NbOfTxs  string `xml:"NbOfTxs"`
			SttlmInf struct {
				SttlmMtd string `xml:"SttlmMtd"`
			} `xml:"SttlmInf"`
		} `xml:"GrpHdr"`
		Txs []pacs008Transaction `xml:"CdtTrfTxInf"`
	} `xml:"FIToFICstmrCdtTrf"`
}

type pacs008Transaction struct {
	PmtID struct {
		EndToEndID string `xml:"EndToEndId"`
		UETR       string `xml:"UETR"`
	} `xml:"PmtId"`
	Amount   xmlAmount  `xml:"IntrBkSttlmAmt"`
	ChrgBr   string     `xml:"ChrgBr"`
	Dbtr     xmlParty   `xml:"Dbtr"`
	DbtrAcct xmlAccount `xml:"DbtrAcct"`
	DbtrAgt  xmlAgent   `xml:"DbtrAgt"`
	CdtrAgt  xmlAgent   `xml:"CdtrAgt"`
	Cdtr     xmlParty   `xml:"Cdtr"`
	CdtrAcct xmlAccount `xml:"CdtrAcct"`
	RmtInf   struct {
		Ustrd []string `xml:"Ustrd"`
	} `xml:"RmtInf"`
}

// xmlAmount is an ISO 20022 amount: decimal text with a Ccy attribute.
type xmlAmount struct {
	Value string `xml:",chardata"`
	Ccy   string `xml:"Ccy,attr"`
}

type xmlParty struct {
	Nm string `xml:"Nm"`
}

type xmlAccount struct {
	ID struct {
		IBAN string `xml:"IBAN"`
		Othr struct {
			ID string `xml:"Id"`
		} `xml:"Othr"`
	} `xml:"Id"`
}

// party returns the name and account of a debtor or creditor; the account
// is an IBAN only when written in the IBAN element.
func (a xmlAccount) party(name string) Party {
	if a.ID.IBAN != "" {
		return Party{Name: name, Account: a.ID.IBAN, IBAN: true}
	}
	return Party{Name: name, Account: a.ID.Othr.ID}
}

type xmlAgent struct {
	FinInstnID struct {
		BICFI string `xml:"BICFI"`
	} `xml:"FinInstnId"`
}

func (doc *pacs008Document) message() Message {
	h := doc.Msg.GrpHdr
	m := Message{
		MsgID:            h.MsgID,
		CreatedAtText:    h.CreDtTm,
		CreatedAt:        parseCreatedAt(h.CreDtTm),
		SettlementMethod: h.SttlmInf.SttlmMtd,
		DeclaredTxCount:  h.NbOfTxs,
		Transactions:     make([]Transaction, 0, len(doc.Msg.Txs)),
	}
	for _, x := range doc.Msg.Txs {
		amt := readMajorAmount(x.Amount.Value, x.Amount.Ccy)
		m.Transactions = append(m.Transactions, Transaction{
			UETR:           x.PmtID.UETR,
			EndToEndID:     x.PmtID.EndToEndID,
			AmountMinor:    amt.minor,
			Currency:       x.Amount.Ccy,
			AmountFraction: amt.fraction,
			AmountIssue:    amt.issue,
			ChargeBearer:   x.ChrgBr,
			Debtor:         x.DbtrAcct.party(x.Dbtr.Nm),
			DebtorAgent:    x.DbtrAgt.FinInstnID.BICFI,
			Creditor:       x.CdtrAcct.party(x.Cdtr.Nm),
			CreditorAgent:  x.CdtrAgt.FinInstnID.BICFI,
			RemittanceInfo: strings.Join(x.RmtInf.Ustrd, " "),
		})
	}
	return m
}

// rfc3339 is the RFC 3339 date-time grammar, with the upper-case T and Z
// that time.Parse requires; time.Parse alone also takes one-digit hours.
var rfc3339 = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)

// parseCreatedAt reads an RFC 3339 date-time (year 0001 or later) into UTC;
// anything else is the zero time, and Validate reports CH16 from the text.
func parseCreatedAt(s string) time.Time {
	if !rfc3339.MatchString(s) || strings.HasPrefix(s, "0000") {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
