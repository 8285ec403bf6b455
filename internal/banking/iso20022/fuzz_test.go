package iso20022

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// The seed corpora live in testdata/fuzz/<target>: every corpus message,
// the round-trip pair and the return documents. Run a target with
//
//	go test -run '^$' -fuzz FuzzDecodeXML -fuzztime 45s ./internal/banking/iso20022

// FuzzDecodeXML: DecodeXML never panics, answers only with the documented
// error types, and whatever it accepts yields a report that encodes into a
// schema-valid pacs.002.
func FuzzDecodeXML(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"/>`))
	f.Add([]byte(`<E><AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"/><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"/></E>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := DecodeXML(body)
		checkDecodeOutcome(t, m, err)
	})
}

// FuzzDecodeJSON: the same invariants for the JSON envelope.
func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`{"msg_id":"M","transactions":[{}]}`))
	f.Add([]byte(`{"transactions":[{"amount_minor":1e40}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := DecodeJSON(body)
		checkDecodeOutcome(t, m, err)
	})
}

// FuzzDecodeReturn: both return decoders never panic and answer with the
// documented error types; an accepted request has a reason code.
func FuzzDecodeReturn(f *testing.F) {
	f.Add([]byte(`{"reason_code":"AC04","reason_text":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte) (ReturnRequest, error){DecodeReturnXML, DecodeReturnJSON} {
			r, err := decode(body)
			if err != nil {
				requireKnownError(t, err)
				continue
			}
			if r.ReasonCode == "" || r.AmountMinor < 0 || r.Source == "" {
				t.Fatalf("accepted an unusable request: %+v", r)
			}
		}
	})
}

func requireKnownError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	var se *SchemaError
	var fe *FieldError
	if !errors.As(err, &pe) && !errors.As(err, &se) && !errors.As(err, &fe) {
		t.Fatalf("undocumented error type %T: %v", err, err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("error text is not UTF-8: %q", err.Error())
	}
}

func checkDecodeOutcome(t *testing.T, m Message, err error) {
	t.Helper()
	var report StatusReport
	var se *SchemaError
	switch {
	case err == nil:
		verdicts := Validate(m)
		if len(verdicts) != len(m.Transactions) {
			t.Fatalf("%d verdicts for %d transactions", len(verdicts), len(m.Transactions))
		}
		report = StatusReport{MsgID: "FUZZ", CreatedAt: reportTime, OriginalMsgID: m.MsgID, OriginalCreatedAt: m.CreatedAt}
		for _, v := range verdicts {
			if v.OK() != (len(v.Problems) == 0) {
				t.Fatalf("verdict inconsistent: %+v", v)
			}
			s := TxStatus{UETR: v.UETR, EndToEndID: v.EndToEndID, Status: StatusACSC}
			if !v.OK() {
				s.Status, s.Reason = StatusRJCT, v.Reason
			}
			report.Transactions = append(report.Transactions, s)
		}
		if len(report.Transactions) == 0 {
			return // a JSON or XML message always has a transaction once accepted
		}
	case errors.As(err, &se):
		report = GroupRejection("FUZZ", reportTime, m, se.Reason())
	default:
		requireKnownError(t, err)
		return
	}
	out, err := EncodeStatusReport(report)
	if err != nil {
		t.Fatalf("report does not encode: %v", err)
	}
	res, err := scanXML(out, pacs002Schema)
	if err != nil || len(res.problems) > 0 {
		t.Fatalf("emitted pacs.002 is not schema-valid: %v %+v\n%s", err, res, out)
	}
	if _, err := EncodeStatusReportJSON(report); err != nil {
		t.Fatalf("JSON report does not encode: %v", err)
	}
}
