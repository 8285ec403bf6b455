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

// fedNowHeader is a head.001.001.02 AppHdr as FedNow's customer credit
// transfer carries it (Fr is the sender's routing number, To the FedNow
// service, 021150706; the market practice frb.fednow.01).
const fedNowHeader = `<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02">` +
	`<Fr><FIId><FinInstnId><ClrSysMmbId><MmbId>011104238</MmbId></ClrSysMmbId></FinInstnId></FIId></Fr>` +
	`<To><FIId><FinInstnId><ClrSysMmbId><MmbId>021150706</MmbId></ClrSysMmbId></FinInstnId></FIId></To>` +
	`<BizMsgIdr>20250110011104238FEDNOW0001</BizMsgIdr><MsgDefIdr>pacs.008.001.08</MsgDefIdr>` +
	`<MktPrctc><Regy>www2.swift.com/mystandards/#/group/Federal_Reserve_Financial_Services/FedNow_Service</Regy><Id>frb.fednow.01</Id></MktPrctc>` +
	`<CreDt>2025-01-10T09:26:50Z</CreDt></AppHdr>`

// fedNow wraps a Document the way FedNow nests it.
func fedNow(wrapper, techHeader, document string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<FedNowIncoming xmlns="urn:fednow:incoming:v001">` + techHeader +
		`<FedNowIncomingMessage><` + wrapper + `>` + fedNowHeader + document + `</` + wrapper + `></FedNowIncomingMessage></FedNowIncoming>`
}

// TestDecodeXMLFedNowEnvelope: a pacs.008 in FedNow's envelope
// (FedNowIncoming / optional FedNowTechnicalHeader / FedNowIncomingMessage /
// FedNowCustomerCreditTransfer / AppHdr + Document) decodes like the bare
// Document; a broken envelope is ErrUnsupportedMessage, as before.
func TestDecodeXMLFedNowEnvelope(t *testing.T) {
	doc := strings.TrimPrefix(validBare(t), `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	tech := `<FedNowTechnicalHeader><ConnectionId>CONN0001</ConnectionId></FedNowTechnicalHeader>`
	accepted := map[string]string{
		"FedNow envelope":            fedNow("FedNowCustomerCreditTransfer", "", doc),
		"with the technical header":  fedNow("FedNowCustomerCreditTransfer", tech, doc),
		"indented":                   strings.ReplaceAll(fedNow("FedNowCustomerCreditTransfer", tech, doc), "><FedNow", ">\n  <FedNow"),
		"prefixed envelope elements": strings.NewReplacer("<FedNow", "<fn:FedNow", "</FedNow", "</fn:FedNow", `xmlns="urn:fednow:incoming:v001"`, `xmlns:fn="urn:fednow:incoming:v001"`).Replace(fedNow("FedNowCustomerCreditTransfer", tech, doc)),
	}
	for name, in := range accepted {
		t.Run(name, func(t *testing.T) {
			m, err := DecodeXML([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if v := Validate(m); len(v) != 1 || !v[0].OK() || m.MsgID != "CORPUS-XML-001" || m.Transactions[0].Creditor.Name != "Omar Farah Trading SARL" {
				t.Fatalf("decoded %+v, verdicts %+v", m, v)
			}
		})
	}
	refused := map[string]string{
		"wrapper of another message": fedNow("FedNowPaymentReturn", "", doc),
		"no AppHdr":                  strings.Replace(fedNow("FedNowCustomerCreditTransfer", "", doc), fedNowHeader, "", 1),
		"no message element":         strings.NewReplacer("<FedNowIncomingMessage>", "", "</FedNowIncomingMessage>", "").Replace(fedNow("FedNowCustomerCreditTransfer", "", doc)),
		"no wrapper":                 strings.NewReplacer("<FedNowCustomerCreditTransfer>", "", "</FedNowCustomerCreditTransfer>", "").Replace(fedNow("FedNowCustomerCreditTransfer", "", doc)),
		"two technical headers":      fedNow("FedNowCustomerCreditTransfer", tech+tech, doc),
		"unknown element at the top": fedNow("FedNowCustomerCreditTransfer", "<Other/>", doc),
		"empty message element":      `<FedNowIncoming xmlns="urn:fednow:incoming:v001"><FedNowIncomingMessage/></FedNowIncoming>`,
		"two wrappers":               strings.Replace(fedNow("FedNowCustomerCreditTransfer", "", doc), "</FedNowIncomingMessage>", "<FedNowCustomerCreditTransfer/></FedNowIncomingMessage>", 1),
		"content after the Document": strings.Replace(fedNow("FedNowCustomerCreditTransfer", "", doc), "</FedNowCustomerCreditTransfer>", "<Extra/></FedNowCustomerCreditTransfer>", 1),
	}
	for name, in := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeXML([]byte(in))
			if !errors.Is(err, ErrUnsupportedMessage) {
				t.Fatalf("got %v, want ErrUnsupportedMessage", err)
			}
		})
	}
	t.Run("text in the envelope", func(t *testing.T) {
		in := strings.Replace(fedNow("FedNowCustomerCreditTransfer", "", doc), "<FedNowIncomingMessage>", "<FedNowIncomingMessage>text", 1)
		if _, err := DecodeXML([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("got %v, want ErrMalformed", err)
		}
	})
	t.Run("schema fault inside", func(t *testing.T) {
		in := strings.Replace(fedNow("FedNowCustomerCreditTransfer", "", doc), "<ChrgBr>SLEV</ChrgBr>", "<ChrgBr>XXXX</ChrgBr>", 1)
		var se *SchemaError
		if m, err := DecodeXML([]byte(in)); !errors.As(err, &se) || m.MsgID != "CORPUS-XML-001" {
			t.Fatalf("got %v (%+v), want a *SchemaError with the message read", err, m)
		}
	})
}

// TestFedNowDocumentAgreesWithXSD: the Document the FedNow test wraps is
// valid against the pacs.008.001.08 XSD (xmllint), so the envelope test
// does not pass on a Document payd alone accepts.
func TestFedNowDocumentAgreesWithXSD(t *testing.T) {
	lint := testutil.Tool(t, "libxml2-utils", "xmllint")
	xsd := testutil.TestData(t, "iso20022", "xsd", "pacs.008.001.08.xsd")
	in := fedNow("FedNowCustomerCreditTransfer", "", strings.TrimPrefix(validBare(t), `<?xml version="1.0" encoding="UTF-8"?>`+"\n"))
	p := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(p, documentElement(t, []byte(in)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, "--noout", "--schema", xsd, p).CombinedOutput(); err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
}
