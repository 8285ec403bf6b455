package iso20022

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeReturnXML(t *testing.T) {
	cases := []struct {
		file string
		want ReturnRequest
	}{
		{"pacs004_partial.xml", ReturnRequest{
			Source: ReturnFromPacs004, MsgID: "RTR-20260315-0001", OriginalMsgID: "RT-20260314-0001", OriginalEndToEndID: "RT-E2E-1",
			OriginalUETR: "0c7c6a3e-2b1d-4f5a-9e8d-7c6b5a4f3e21", AmountMinor: 100000, Currency: "DJF",
			OriginalAmountMinor: 250000, OriginalCurrency: "DJF", Paths: pacs004Paths,
			ReasonCode: "AC04", ReasonText: "Account closed on 14 March",
		}},
		{"pacs004_group_reason.xml", ReturnRequest{
			Source: ReturnFromPacs004, MsgID: "RTR-20260315-0002", OriginalMsgID: "RT-20260314-0001",
			OriginalUETR: "1d8d7b4f-3c2e-4a6b-8f9e-8d7c6b5a4f32", AmountMinor: 100, Currency: "DJF",
			Paths:      withMsgIDPath(pacs004Paths, "OrgnlGrpInf/OrgnlMsgId"), // OrgnlMsgId at the group level
			ReasonCode: "CUST", ReasonText: "Requested by the customer",
		}},
		{"camt056_cancel.xml", ReturnRequest{
			Source: ReturnFromCamt056, MsgID: "CXL-20260315-0001", OriginalMsgID: "RT-20260314-0001", OriginalEndToEndID: "RT-E2E-2",
			OriginalUETR: "1d8d7b4f-3c2e-4a6b-8f9e-8d7c6b5a4f32", Currency: "DJF",
			OriginalAmountMinor: 100, OriginalCurrency: "DJF", Paths: camt056Paths,
			ReasonCode: "DUPL", ReasonText: "Sent twice by mistake",
		}},
		{"camt056_group_reason.xml", ReturnRequest{
			Source: ReturnFromCamt056, MsgID: "CXL-20260315-0002", OriginalMsgID: "RT-20260314-0001",
			OriginalUETR: "2e9e8c5a-4d3f-4b7c-a0af-9e8d7c6b5a43", ReasonCode: "FRAD",
			Paths: withMsgIDPath(camt056Paths, "Undrlyg/OrgnlGrpInfAndCxl/OrgnlMsgId"),
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := DecodeReturnXML(readReturn(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func withMsgIDPath(p ReferencePaths, msgID string) ReferencePaths {
	p.MsgID = msgID
	return p
}

func readReturn(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "returns", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeReturnXMLErrors(t *testing.T) {
	var fe *FieldError
	var se *SchemaError
	var pe *ParseError
	cases := []struct {
		name   string
		body   []byte
		target any
		code   string
	}{
		{"two transactions", readReturn(t, "pacs004_two_transactions.xml"), &fe, ""},
		{"fractional DJF", readReturn(t, "pacs004_fractional.xml"), &fe, ReasonAM12},
		{"no reason", readReturn(t, "camt056_no_reason.xml"), &fe, ""},
		{"pacs.004 schema", readReturn(t, "pacs004_schema_invalid.xml"), &se, ReasonFF01},
		{"camt.056 schema", readReturn(t, "camt056_schema_invalid.xml"), &se, ReasonFF01},
		{"a pacs.008", []byte(`<Document xmlns="` + NamespacePacs008 + `"/>`), &pe, ""},
		{"doctype", append([]byte(`<!DOCTYPE x>`), readReturn(t, "camt056_cancel.xml")[39:]...), &pe, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeReturnXML(c.body)
			if !errors.As(err, c.target) {
				t.Fatalf("got %v (%T)", err, err)
			}
			if fe != nil && fe.Code != c.code {
				t.Fatalf("code %q, want %q", fe.Code, c.code)
			}
			fe = nil
		})
	}
}

func TestDecodeReturnJSON(t *testing.T) {
	ok := []struct {
		in   string
		want ReturnRequest
	}{
		{`{"reason_code":"AC04","reason_text":"Account closed"}`, ReturnRequest{Source: ReturnFromJSON, ReasonCode: "AC04", ReasonText: "Account closed", Paths: jsonPaths}},
		{`{"reason_code":"CUST","reason_text":"Customer asked","amount_minor":500}`, ReturnRequest{Source: ReturnFromJSON, ReasonCode: "CUST", ReasonText: "Customer asked", AmountMinor: 500, Paths: jsonPaths}},
		{`{"reason_code":"CUST","reason_text":"y","original_uetr":"u","original_msg_id":"m","original_end_to_end_id":"e","original_amount_minor":7,"original_currency":"DJF"}`,
			ReturnRequest{Source: ReturnFromJSON, ReasonCode: "CUST", ReasonText: "y", OriginalUETR: "u", OriginalMsgID: "m", OriginalEndToEndID: "e",
				OriginalAmountMinor: 7, OriginalCurrency: "DJF", Currency: "DJF", Paths: jsonPaths}},
		{`{"reason_code":"DUPL","reason_text":"x","amount_minor":null}`, ReturnRequest{Source: ReturnFromJSON, ReasonCode: "DUPL", ReasonText: "x", Paths: jsonPaths}},
	}
	for _, c := range ok {
		got, err := DecodeReturnJSON([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v", c.in, got, err)
		}
	}
	bad := []struct {
		in   string
		path string
	}{
		{`{"reason_text":"x"}`, "reason_code"},
		{`{"reason_code":"ac04","reason_text":"x"}`, "reason_code"},
		{`{"reason_code":"AC0","reason_text":"x"}`, "reason_code"},
		{`{"reason_code":"AC04"}`, "reason_text"},
		{`{"reason_code":"AC04","reason_text":"   "}`, "reason_text"},
		{`{"reason_code":"AC04","reason_text":"` + strings.Repeat("t", 141) + `"}`, "reason_text"},
		{`{"reason_code":"AC04","reason_text":"x","amount_minor":0}`, "amount_minor"},
		{`{"reason_code":"AC04","reason_text":"x","amount_minor":-3}`, "amount_minor"},
		{`{"reason_code":"AC04","reason_text":"x","amount_minor":2.5}`, "amount_minor"},
		{`{"reason_code":"AC04","reason_text":"x","original_amount_minor":0}`, "original_amount_minor"},
		{`{"reason_code":"AC04","reason_text":"x","original_amount_minor":1.5}`, "original_amount_minor"},
	}
	for _, c := range bad {
		_, err := DecodeReturnJSON([]byte(c.in))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != c.path {
			t.Errorf("%s: got %v, want a FieldError at %s", c.in, err, c.path)
		}
	}
	var se *SchemaError
	if _, err := DecodeReturnJSON([]byte(`{"reason_code":"AC04","reason_text":"x","amount":5}`)); !errors.As(err, &se) {
		t.Errorf("unknown member: %v", err)
	}
	if _, err := DecodeReturnJSON([]byte(`{"reason_code":"AC04","reason_text":"x","amount_minor":"5"}`)); !errors.As(err, &se) {
		t.Errorf("string amount: %v", err)
	}
	var pe *ParseError
	if _, err := DecodeReturnJSON([]byte(`{"reason_code":`)); !errors.As(err, &pe) {
		t.Errorf("truncated: %v", err)
	}
}
