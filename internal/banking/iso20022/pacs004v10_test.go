package iso20022

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// TestDecodeReturnXMLPacs004v10: a pacs.004.001.10 (the version Fedwire and
// FedNow publish) decodes like a .09, marked with its own source, including
// an element only .10 has (OrgnlTxRef/MndtRltdInf/CdtTrfMndt).
func TestDecodeReturnXMLPacs004v10(t *testing.T) {
	want := ReturnRequest{
		Source: ReturnFromPacs004v10, MsgID: "RTR-20260316-0010", OriginalMsgID: "RT-20260314-0001", OriginalEndToEndID: "RT-E2E-1",
		OriginalUETR: "0c7c6a3e-2b1d-4f5a-9e8d-7c6b5a4f3e21", AmountMinor: 100000, Currency: "DJF",
		OriginalAmountMinor: 250000, OriginalCurrency: "DJF", Paths: pacs004Paths,
		ReasonCode: "AC04", ReasonText: "Account closed",
	}
	body := readReturn(t, "pacs004v10_fednow.xml")
	got, err := DecodeReturnXML(body)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if !IsPacs004(got.Source) || !IsPacs004(ReturnFromPacs004) || IsPacs004(ReturnFromCamt056) {
		t.Fatal("IsPacs004 does not tell the pacs.004 versions from the others")
	}

	t.Run("the .10-only element is refused in a .09", func(t *testing.T) {
		as09 := strings.ReplaceAll(string(body), "pacs.004.001.10", "pacs.004.001.09")
		var se *SchemaError
		if _, err := DecodeReturnXML([]byte(as09)); !errors.As(err, &se) {
			t.Fatalf("got %v, want a *SchemaError", err)
		}
	})
	t.Run("in FedNow's envelope", func(t *testing.T) {
		doc := string(documentElement(t, body))
		in := strings.Replace(fedNow("FedNowPaymentReturn", "", doc), "pacs.008.001.08</MsgDefIdr>", "pacs.004.001.10</MsgDefIdr>", 1)
		got, err := DecodeReturnXML([]byte(in))
		if err != nil || got != want {
			t.Fatalf("got %+v, %v", got, err)
		}
		if _, err := DecodeReturnXML([]byte(fedNow("FedNowReturnRequest", "", doc))); !errors.Is(err, ErrUnsupportedMessage) {
			t.Fatalf("a pacs.004 in the camt.056 wrapper: got %v, want ErrUnsupportedMessage", err)
		}
	})
	t.Run("schema invalid", func(t *testing.T) {
		var se *SchemaError
		if _, err := DecodeReturnXML(readReturn(t, "pacs004v10_schema_invalid.xml")); !errors.As(err, &se) {
			t.Fatalf("got %v, want a *SchemaError (FF01)", err)
		}
	})
}

// TestPacs004v10AgreesWithXSD: for the .10 test messages and variations of
// them, the generated tables and xmllint against the official
// pacs.004.001.10 XSD give the same verdict, so an acceptance above is not
// one payd alone would give.
func TestPacs004v10AgreesWithXSD(t *testing.T) {
	lint := testutil.Tool(t, "libxml2-utils", "xmllint")
	xsd := testutil.TestData(t, "iso20022", "xsd", "pacs.004.001.10.xsd")
	valid := string(readReturn(t, "pacs004v10_fednow.xml"))
	cases := map[string]string{
		"fednow":                  valid,
		"schema invalid":          string(readReturn(t, "pacs004v10_schema_invalid.xml")),
		"signature not base64":    strings.Replace(valid, "c2lnbmVk", "not*base64", 1),
		"signature empty":         strings.Replace(valid, "c2lnbmVk", "", 1),
		"signature with spaces":   strings.Replace(valid, "c2lnbmVk", "c2ln bmVk", 1),
		"unknown charge bearer":   strings.Replace(valid, "<ChrgBr>SLEV</ChrgBr>", "<ChrgBr>XXXX</ChrgBr>", 1),
		"elements out of order":   strings.Replace(valid, "<ChrgBr>SLEV</ChrgBr>", "", 1) + "",
		"reason before amount":    strings.Replace(strings.Replace(valid, "<IntrBkSttlmDt>2026-03-16</IntrBkSttlmDt>", "", 1), "<ChrgBr>SLEV</ChrgBr>", "<ChrgBr>SLEV</ChrgBr><IntrBkSttlmDt>2026-03-16</IntrBkSttlmDt>", 1),
		"uetr of another version": strings.Replace(valid, "0c7c6a3e-2b1d-4f5a-9e8d-7c6b5a4f3e21", "0c7c6a3e-2b1d-1f5a-9e8d-7c6b5a4f3e21", 1),
	}
	dir := t.TempDir()
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".xml")
			if err := os.WriteFile(p, documentElement(t, []byte(in)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, lintErr := exec.Command(lint, "--noout", "--schema", xsd, p).CombinedOutput()
			res, err := scanXML([]byte(in), pacs004v10Schema)
			if err != nil {
				t.Fatal(err)
			}
			if xsdValid, ours := lintErr == nil, len(res.problems) == 0; xsdValid != ours {
				t.Fatalf("xmllint valid=%v (%s), payd valid=%v (%+v)", xsdValid, out, ours, res.problems)
			}
		})
	}
}
