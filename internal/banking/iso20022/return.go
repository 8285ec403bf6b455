package iso20022

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// IsPacs004 reports whether a ReturnRequest's Source is a pacs.004 of either
// version.
func IsPacs004(source string) bool {
	return source == ReturnFromPacs004 || source == ReturnFromPacs004v10
}

// Sources of a ReturnRequest.
const (
	// ReturnFromPacs004 marks a request read from a pacs.004.001.09.
	ReturnFromPacs004 = "pacs.004.001.09"
	// ReturnFromPacs004v10 marks a request read from a pacs.004.001.10, the
	// version Fedwire and FedNow publish.
	ReturnFromPacs004v10 = "pacs.004.001.10"
	// ReturnFromCamt056 marks a request read from a camt.056.001.08.
	ReturnFromCamt056 = "camt.056.001.08"
	// ReturnFromJSON marks a request read from the JSON body.
	ReturnFromJSON = "json"
)

// ReturnRequest is a return (by the creditor agent) or a cancellation (by the
// debtor agent) of one settled transfer, read from a pacs.004 (.09 or .10), a
// camt.056.001.08 or the JSON body {reason_code, reason_text, amount_minor?}.
type ReturnRequest struct {
	// Source is ReturnFromPacs004, ReturnFromPacs004v10, ReturnFromCamt056
	// or ReturnFromJSON.
	Source string
	// MsgID is the request's own message id (pacs.004 GrpHdr/MsgId, camt.056
	// Assgnmt/Id); empty for JSON.
	MsgID string
	// OriginalMsgID, OriginalEndToEndID and OriginalUETR identify the
	// original pacs.008 transaction (XML OrgnlMsgId, OrgnlEndToEndId,
	// OrgnlUETR; JSON original_msg_id, original_end_to_end_id,
	// original_uetr). An XML message must give OrgnlUETR; the JSON body may
	// leave them all out and rely on the UETR in the URL.
	OriginalMsgID, OriginalEndToEndID, OriginalUETR string
	// OriginalAmountMinor and OriginalCurrency are the original interbank
	// settlement amount the message names (OrgnlIntrBkSttlmAmt; JSON
	// original_amount_minor and original_currency); zero and empty when not
	// given.
	OriginalAmountMinor int64
	OriginalCurrency    string
	// Paths names, per reference, the element (XML) or member (JSON) it
	// was read from, so that a refusal can name it.
	Paths ReferencePaths
	// AmountMinor is the amount returned, in minor units; 0 means the full
	// original amount (JSON without amount_minor, and every camt.056, which
	// cancels the whole transaction).
	AmountMinor int64
	// Currency is the returned amount's currency (camt.056: the original
	// amount's, when given); empty for JSON.
	Currency string
	// ReasonCode is the ISO 20022 return or cancellation reason code.
	ReasonCode string
	// ReasonText is the additional information (several AddtlInf lines are
	// joined with one space).
	ReasonText string
}

// ReferencePaths are the element paths of a ReturnRequest's references.
type ReferencePaths struct {
	UETR, MsgID, EndToEndID, Amount, Currency, ReturnedCurrency string
}

// pacs004Paths, camt056Paths and jsonPaths name where each form carries the
// references. OrgnlMsgId of a pacs.004 may also be at the group level (see
// pacs004Document.request).
var (
	pacs004Paths = ReferencePaths{UETR: "TxInf[1]/OrgnlUETR", MsgID: "TxInf[1]/OrgnlGrpInf/OrgnlMsgId",
		EndToEndID: "TxInf[1]/OrgnlEndToEndId", Amount: "TxInf[1]/OrgnlIntrBkSttlmAmt",
		Currency: "TxInf[1]/OrgnlIntrBkSttlmAmt/@Ccy", ReturnedCurrency: "TxInf[1]/RtrdIntrBkSttlmAmt/@Ccy"}
	camt056Paths = ReferencePaths{UETR: "Undrlyg/TxInf/OrgnlUETR", MsgID: "Undrlyg/TxInf/OrgnlGrpInf/OrgnlMsgId",
		EndToEndID: "Undrlyg/TxInf/OrgnlEndToEndId", Amount: "Undrlyg/TxInf/OrgnlIntrBkSttlmAmt",
		Currency: "Undrlyg/TxInf/OrgnlIntrBkSttlmAmt/@Ccy", ReturnedCurrency: "Undrlyg/TxInf/OrgnlIntrBkSttlmAmt/@Ccy"}
	jsonPaths = ReferencePaths{UETR: "original_uetr", MsgID: "original_msg_id", EndToEndID: "original_end_to_end_id",
		Amount: "original_amount_minor", Currency: "original_currency", ReturnedCurrency: "original_currency"}
)

// MaxReasonTextLength is the longest JSON reason_text accepted.
const MaxReasonTextLength = 140

var reasonCodePattern = regexp.MustCompile(`^[A-Z0-9]{4}$`)

// DecodeReturnXML reads a pacs.004.001.09, pacs.004.001.10 or camt.056.001.08
// Document, bare or in an envelope, holding exactly one transaction. The two
// pacs.004 versions carry everything payd reads at the same paths. Errors: *ParseError
// when the body is unusable, *SchemaError when it breaks its schema, and
// *FieldError when it is valid but not usable by payd (not exactly one
// transaction, no reason code, an amount finer than its currency allows).
func DecodeReturnXML(body []byte) (ReturnRequest, error) {
	res, err := scanXML(body, pacs004Schema, pacs004v10Schema, camt056Schema)
	if err != nil {
		return ReturnRequest{}, err
	}
	if len(res.problems) > 0 {
		return ReturnRequest{}, &SchemaError{Problems: res.problems}
	}
	if res.schema == pacs004Schema || res.schema == pacs004v10Schema {
		var doc pacs004Document
		if err := decodeDocument(body, res.docDepth, &doc); err != nil {
			return ReturnRequest{}, err
		}
		source := ReturnFromPacs004
		if res.schema == pacs004v10Schema {
			source = ReturnFromPacs004v10
		}
		return doc.request(source)
	}
	var doc camt056Document
	if err := decodeDocument(body, res.docDepth, &doc); err != nil {
		return ReturnRequest{}, err
	}
	return doc.request()
}

// DecodeReturnJSON reads the JSON return/cancel body. reason_code must be a
// four-character ISO 20022 code, reason_text 1 to 140 characters, and
// amount_minor, when present, a positive whole number of minor units.
// Errors: *ParseError, *SchemaError (unknown member, wrong JSON type) or
// *FieldError.
func DecodeReturnJSON(body []byte) (ReturnRequest, error) {
	problem, err := checkJSONShape(body, returnShape)
	if err != nil {
		return ReturnRequest{}, err
	}
	if problem != nil {
		return ReturnRequest{}, &SchemaError{Problems: []FieldError{*problem}}
	}
	var in struct {
		ReasonCode          string          `json:"reason_code"`
		ReasonText          string          `json:"reason_text"`
		AmountMinor         json.RawMessage `json:"amount_minor"`
		OriginalUETR        string          `json:"original_uetr"`
		OriginalMsgID       string          `json:"original_msg_id"`
		OriginalEndToEndID  string          `json:"original_end_to_end_id"`
		OriginalAmountMinor json.RawMessage `json:"original_amount_minor"`
		OriginalCurrency    string          `json:"original_currency"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return ReturnRequest{}, &ParseError{Kind: ErrMalformed, Reason: "not valid JSON"}
	}
	r := ReturnRequest{Source: ReturnFromJSON, ReasonCode: in.ReasonCode, ReasonText: in.ReasonText,
		OriginalUETR: in.OriginalUETR, OriginalMsgID: in.OriginalMsgID, OriginalEndToEndID: in.OriginalEndToEndID,
		OriginalCurrency: in.OriginalCurrency, Currency: in.OriginalCurrency, Paths: jsonPaths}
	if len(in.OriginalAmountMinor) > 0 && string(in.OriginalAmountMinor) != "null" {
		amt := readMinorAmount(string(in.OriginalAmountMinor))
		if amt.issue != "" || amt.fraction != "" || amt.minor == 0 {
			return ReturnRequest{}, &FieldError{Path: "original_amount_minor", Code: ReasonAM12, Reason: "must be a positive whole number of minor units"}
		}
		r.OriginalAmountMinor = amt.minor
	}
	if !reasonCodePattern.MatchString(r.ReasonCode) {
		return ReturnRequest{}, &FieldError{Path: "reason_code", Code: ReasonCH16, Reason: "must be a four-character ISO 20022 reason code"}
	}
	switch n := utf8.RuneCountInString(r.ReasonText); {
	case strings.TrimSpace(r.ReasonText) == "":
		return ReturnRequest{}, &FieldError{Path: "reason_text", Code: ReasonCH16, Reason: "missing"}
	case n > MaxReasonTextLength:
		return ReturnRequest{}, &FieldError{Path: "reason_text", Code: ReasonCH16, Reason: "longer than 140 characters"}
	}
	if len(in.AmountMinor) > 0 && string(in.AmountMinor) != "null" {
		amt := readMinorAmount(string(in.AmountMinor))
		switch {
		case amt.issue != "":
			return ReturnRequest{}, &FieldError{Path: "amount_minor", Code: ReasonAM12, Reason: amt.issue}
		case amt.fraction != "":
			return ReturnRequest{}, &FieldError{Path: "amount_minor", Code: ReasonAM12, Reason: "must be a whole number of minor units"}
		case amt.minor == 0:
			return ReturnRequest{}, &FieldError{Path: "amount_minor", Code: ReasonAM01, Reason: "must be positive; leave it out to return the full amount"}
		}
		r.AmountMinor = amt.minor
	}
	return r, nil
}

// xmlReturnReason is a return or cancellation reason (PaymentReturnReason6,
// PaymentCancellationReason5).
type xmlReturnReason struct {
	Rsn struct {
		Cd    string `xml:"Cd"`
		Prtry string `xml:"Prtry"`
	} `xml:"Rsn"`
	AddtlInf []string `xml:"AddtlInf"`
}

// firstReason picks the first reason carrying a code, from the transaction
// level before the group level, and returns its code and text.
func firstReason(levels ...[]xmlReturnReason) (code, text string) {
	for _, reasons := range levels {
		for _, r := range reasons {
			c := r.Rsn.Cd
			if c == "" {
				c = r.Rsn.Prtry
			}
			if c != "" {
				return c, strings.Join(r.AddtlInf, " ")
			}
		}
	}
	return "", ""
}

// pacs004Document holds the parts of a pacs.004 (.09 or .10) payd reads.
type pacs004Document struct {
	Rtr struct {
		GrpHdr struct {
			MsgID string `xml:"MsgId"`
		} `xml:"GrpHdr"`
		OrgnlGrpInf struct {
			OrgnlMsgID string            `xml:"OrgnlMsgId"`
			RtrRsnInf  []xmlReturnReason `xml:"RtrRsnInf"`
		} `xml:"OrgnlGrpInf"`
		TxInf []struct {
			OrgnlGrpInf struct {
				OrgnlMsgID string `xml:"OrgnlMsgId"`
			} `xml:"OrgnlGrpInf"`
			OrgnlEndToEndID string            `xml:"OrgnlEndToEndId"`
			OrgnlUETR       string            `xml:"OrgnlUETR"`
			Original        xmlAmount         `xml:"OrgnlIntrBkSttlmAmt"`
			Amount          xmlAmount         `xml:"RtrdIntrBkSttlmAmt"`
			RtrRsnInf       []xmlReturnReason `xml:"RtrRsnInf"`
		} `xml:"TxInf"`
	} `xml:"PmtRtr"`
}

func (doc *pacs004Document) request(source string) (ReturnRequest, error) {
	if len(doc.Rtr.TxInf) != 1 {
		return ReturnRequest{}, &FieldError{Path: "TxInf", Reason: "payd takes exactly one transaction per return"}
	}
	tx := doc.Rtr.TxInf[0]
	r := ReturnRequest{
		Source:             source,
		MsgID:              doc.Rtr.GrpHdr.MsgID,
		OriginalMsgID:      firstNonEmpty(tx.OrgnlGrpInf.OrgnlMsgID, doc.Rtr.OrgnlGrpInf.OrgnlMsgID),
		OriginalEndToEndID: tx.OrgnlEndToEndID,
		OriginalUETR:       tx.OrgnlUETR,
		Currency:           tx.Amount.Ccy,
		Paths:              pacs004Paths,
	}
	if tx.OrgnlGrpInf.OrgnlMsgID == "" && doc.Rtr.OrgnlGrpInf.OrgnlMsgID != "" {
		r.Paths.MsgID = "OrgnlGrpInf/OrgnlMsgId"
	}
	if err := r.readOriginalAmount(tx.Original); err != nil {
		return ReturnRequest{}, err
	}
	r.ReasonCode, r.ReasonText = firstReason(tx.RtrRsnInf, doc.Rtr.OrgnlGrpInf.RtrRsnInf)
	if r.ReasonCode == "" {
		return ReturnRequest{}, &FieldError{Path: "TxInf[1]/RtrRsnInf/Rsn", Reason: "a return reason code is required"}
	}
	amt := readMajorAmount(tx.Amount.Value, tx.Amount.Ccy)
	switch {
	case amt.issue != "":
		return ReturnRequest{}, &FieldError{Path: "TxInf[1]/RtrdIntrBkSttlmAmt", Code: ReasonAM12, Reason: amt.issue}
	case amt.fraction != "":
		return ReturnRequest{}, &FieldError{Path: "TxInf[1]/RtrdIntrBkSttlmAmt", Code: ReasonAM12, Reason: "amount has a fraction finer than the currency's minor unit"}
	case amt.minor == 0:
		return ReturnRequest{}, &FieldError{Path: "TxInf[1]/RtrdIntrBkSttlmAmt", Code: ReasonAM01, Reason: "amount is zero"}
	}
	r.AmountMinor = amt.minor
	return r, nil
}

// camt056Document holds the parts of a camt.056.001.08 payd reads.
type camt056Document struct {
	Req struct {
		Assgnmt struct {
			ID string `xml:"Id"`
		} `xml:"Assgnmt"`
		Undrlyg []struct {
			OrgnlGrpInfAndCxl struct {
				OrgnlMsgID string            `xml:"OrgnlMsgId"`
				CxlRsnInf  []xmlReturnReason `xml:"CxlRsnInf"`
			} `xml:"OrgnlGrpInfAndCxl"`
			TxInf []struct {
				OrgnlGrpInf struct {
					OrgnlMsgID string `xml:"OrgnlMsgId"`
				} `xml:"OrgnlGrpInf"`
				OrgnlEndToEndID string            `xml:"OrgnlEndToEndId"`
				OrgnlUETR       string            `xml:"OrgnlUETR"`
				Amount          xmlAmount         `xml:"OrgnlIntrBkSttlmAmt"`
				CxlRsnInf       []xmlReturnReason `xml:"CxlRsnInf"`
			} `xml:"TxInf"`
		} `xml:"Undrlyg"`
	} `xml:"FIToFIPmtCxlReq"`
}

func (doc *camt056Document) request() (ReturnRequest, error) {
	count, under := 0, 0
	for i, u := range doc.Req.Undrlyg {
		count += len(u.TxInf)
		if len(u.TxInf) > 0 {
			under = i
		}
	}
	if count != 1 {
		return ReturnRequest{}, &FieldError{Path: "Undrlyg/TxInf", Reason: "payd takes exactly one transaction per cancellation request"}
	}
	u := doc.Req.Undrlyg[under]
	tx := u.TxInf[0]
	r := ReturnRequest{
		Source:             ReturnFromCamt056,
		MsgID:              doc.Req.Assgnmt.ID,
		OriginalMsgID:      firstNonEmpty(tx.OrgnlGrpInf.OrgnlMsgID, u.OrgnlGrpInfAndCxl.OrgnlMsgID),
		OriginalEndToEndID: tx.OrgnlEndToEndID,
		OriginalUETR:       tx.OrgnlUETR,
		Currency:           tx.Amount.Ccy,
		Paths:              camt056Paths,
	}
	if tx.OrgnlGrpInf.OrgnlMsgID == "" && u.OrgnlGrpInfAndCxl.OrgnlMsgID != "" {
		r.Paths.MsgID = "Undrlyg/OrgnlGrpInfAndCxl/OrgnlMsgId"
	}
	if err := r.readOriginalAmount(tx.Amount); err != nil {
		return ReturnRequest{}, err
	}
	r.ReasonCode, r.ReasonText = firstReason(tx.CxlRsnInf, u.OrgnlGrpInfAndCxl.CxlRsnInf)
	if r.ReasonCode == "" {
		return ReturnRequest{}, &FieldError{Path: "Undrlyg/TxInf/CxlRsnInf/Rsn", Reason: "a cancellation reason code is required"}
	}
	return r, nil
}

// readOriginalAmount reads the original interbank settlement amount, when
// the message gives it.
func (r *ReturnRequest) readOriginalAmount(a xmlAmount) error {
	if a.Value == "" && a.Ccy == "" {
		return nil
	}
	amt := readMajorAmount(a.Value, a.Ccy)
	switch {
	case amt.issue != "":
		return &FieldError{Path: r.Paths.Amount, Code: ReasonAM12, Reason: amt.issue}
	case amt.fraction != "":
		return &FieldError{Path: r.Paths.Amount, Code: ReasonAM12, Reason: "amount has a fraction finer than the currency's minor unit"}
	}
	r.OriginalAmountMinor, r.OriginalCurrency = amt.minor, a.Ccy
	return nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
