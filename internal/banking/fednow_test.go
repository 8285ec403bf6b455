package banking_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// fedNowWrap nests a pacs.008 Document the way FedNow publishes its
// envelope: FedNowIncoming / FedNowTechnicalHeader / FedNowIncomingMessage /
// FedNowCustomerCreditTransfer / AppHdr + Document.
func fedNowWrap(document string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<FedNowIncoming xmlns="urn:fednow:incoming:v001">
  <FedNowTechnicalHeader><ConnectionId>CONN0001</ConnectionId></FedNowTechnicalHeader>
  <FedNowIncomingMessage>
    <FedNowCustomerCreditTransfer>
      <AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"><Fr><FIId><FinInstnId><ClrSysMmbId><MmbId>011104238</MmbId></ClrSysMmbId></FinInstnId></FIId></Fr><To><FIId><FinInstnId><ClrSysMmbId><MmbId>021150706</MmbId></ClrSysMmbId></FinInstnId></FIId></To><BizMsgIdr>B1</BizMsgIdr><MsgDefIdr>pacs.008.001.08</MsgDefIdr><CreDt>2026-03-14T09:26:50Z</CreDt></AppHdr>
      ` + document + `
    </FedNowCustomerCreditTransfer>
  </FedNowIncomingMessage>
</FedNowIncoming>`)
}

// TestFedNowEnvelopeTransfer: a pacs.008 in FedNow's envelope is accepted
// and settled like the bare Document (it was 400 message_unsupported), on
// both engines, and the pacs.002 payd answers validates against its XSD.
func TestFedNowEnvelopeTransfer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDir, "xml", "ok_single_bare.xml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.TrimPrefix(string(raw), `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		debtor := newBank(t, e, "Debtor bank", "BANKDJJDXXX", false)
		newBank(t, e, "Creditor bank", "CACEDJJDXXX", false)
		fund(t, e, debtor, 100_000)
		r := postXML(e, debtor.SK, "/banking/v1/transfers", fedNowWrap(doc))
		if r.Status != 200 {
			t.Fatalf("FedNow envelope: %d %s", r.Status, r.Body)
		}
		group, txs := readReport(t, "xml", r.Body)
		if group != "ACSC" || len(txs) != 1 || txs[0].status != "ACSC" {
			t.Fatalf("FedNow envelope: group %s, transactions %+v", group, txs)
		}
		if got := available(t, e, debtor); got != 100_000-1500 {
			t.Errorf("debtor balance %d, want %d", got, 100_000-1500)
		}
		docs := &xmlDocs{}
		docs.add("fednow", r.Body)
		docs.lint(t)
		verifyLedger(t, e)
	})
}
