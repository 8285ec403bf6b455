package banking_test

import (
	"fmt"
	"strings"
	"text/template"
)

// xmlTx is one transaction of a test pacs.008 in XML.
type xmlTx struct {
	UETR, E2E, Amount, Debtor, DebtorAgent, Creditor, CreditorAgent string
}

var pacs008 = template.Must(template.New("pacs008").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">
  <FIToFICstmrCdtTrf>
    <GrpHdr><MsgId>{{.MsgID}}</MsgId><CreDtTm>2026-03-14T09:26:50Z</CreDtTm><NbOfTxs>{{len .Txs}}</NbOfTxs><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf></GrpHdr>
{{- range .Txs}}
    <CdtTrfTxInf>
      <PmtId><EndToEndId>{{.E2E}}</EndToEndId><UETR>{{.UETR}}</UETR></PmtId>
      <IntrBkSttlmAmt Ccy="DJF">{{.Amount}}</IntrBkSttlmAmt>
      <ChrgBr>SLEV</ChrgBr>
      <Dbtr><Nm>{{.Debtor}}</Nm></Dbtr>
      <DbtrAcct><Id><IBAN>DJ2100010000000154000100186</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId><BICFI>{{.DebtorAgent}}</BICFI></FinInstnId></DbtrAgt>
      <CdtrAgt><FinInstnId><BICFI>{{.CreditorAgent}}</BICFI></FinInstnId></CdtrAgt>
      <Cdtr><Nm>{{.Creditor}}</Nm></Cdtr>
      <CdtrAcct><Id><Othr><Id>0012345678</Id></Othr></Id></CdtrAcct>
    </CdtTrfTxInf>
{{- end}}
  </FIToFICstmrCdtTrf>
</Document>
`))

// xmlMessage builds a pacs.008.001.08 with one transaction per xmlTx; empty
// fields take valid defaults (the debtor agent has none: set it).
func xmlMessage(msgID string, txs ...xmlTx) []byte {
	for i := range txs {
		x := &txs[i]
		if x.UETR == "" {
			x.UETR = newUETR()
		}
		if x.E2E == "" {
			x.E2E = fmt.Sprintf("X-E2E-%d", i+1)
		}
		if x.Amount == "" {
			x.Amount = "1000"
		}
		if x.Debtor == "" {
			x.Debtor = "Amina Hassan"
		}
		if x.Creditor == "" {
			x.Creditor = "Omar Farah Trading SARL"
		}
	}
	var b strings.Builder
	if err := pacs008.Execute(&b, map[string]any{"MsgID": msgID, "Txs": txs}); err != nil {
		panic(err)
	}
	return []byte(b.String())
}

var pacs004 = template.Must(template.New("pacs004").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09">
  <PmtRtr>
    <GrpHdr><MsgId>{{.MsgID}}</MsgId><CreDtTm>2026-03-15T08:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf></GrpHdr>
    <TxInf>
      <RtrId>RTR-1</RtrId>
      <OrgnlUETR>{{.UETR}}</OrgnlUETR>
      <RtrdIntrBkSttlmAmt Ccy="DJF">{{.Amount}}</RtrdIntrBkSttlmAmt>
      <RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>Account closed</AddtlInf></RtrRsnInf>
    </TxInf>
  </PmtRtr>
</Document>
`))

func pacs004Return(msgID, uetr, amount string) []byte {
	var b strings.Builder
	if err := pacs004.Execute(&b, map[string]string{"MsgID": msgID, "UETR": uetr, "Amount": amount}); err != nil {
		panic(err)
	}
	return []byte(b.String())
}

var camt056 = template.Must(template.New("camt056").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.056.001.08">
  <FIToFIPmtCxlReq>
    <Assgnmt>
      <Id>{{.MsgID}}</Id>
      <Assgnr><Agt><FinInstnId><BICFI>{{.BIC}}</BICFI></FinInstnId></Agt></Assgnr>
      <Assgne><Agt><FinInstnId><BICFI>PAYDDJJDXXX</BICFI></FinInstnId></Agt></Assgne>
      <CreDtTm>2026-03-15T08:00:00Z</CreDtTm>
    </Assgnmt>
    <Undrlyg>
      <TxInf>
        <OrgnlUETR>{{.UETR}}</OrgnlUETR>
        <CxlRsnInf><Rsn><Cd>DUPL</Cd></Rsn><AddtlInf>Sent twice by mistake</AddtlInf></CxlRsnInf>
      </TxInf>
    </Undrlyg>
  </FIToFIPmtCxlReq>
</Document>
`))

func camt056Cancel(msgID, bic, uetr string) []byte {
	var b strings.Builder
	if err := camt056.Execute(&b, map[string]string{"MsgID": msgID, "BIC": bic, "UETR": uetr}); err != nil {
		panic(err)
	}
	return []byte(b.String())
}

// pacs004v10Return is a pacs.004.001.10 return, the version Fedwire and
// FedNow publish; fedNowEnvelope wraps it the way FedNow nests it.
func pacs004v10Return(msgID, uetr, amount string, fedNowEnvelope bool) []byte {
	doc := strings.Replace(string(pacs004Return(msgID, uetr, amount)), "pacs.004.001.09", "pacs.004.001.10", 1)
	if !fedNowEnvelope {
		return []byte(doc)
	}
	doc = strings.TrimPrefix(doc, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<FedNowIncoming xmlns="urn:fednow:incoming:v001"><FedNowIncomingMessage><FedNowPaymentReturn>` +
		`<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"><BizMsgIdr>` + msgID + `</BizMsgIdr>` +
		`<MsgDefIdr>pacs.004.001.10</MsgDefIdr><CreDt>2026-03-15T08:00:00Z</CreDt></AppHdr>` + doc +
		`</FedNowPaymentReturn></FedNowIncomingMessage></FedNowIncoming>`)
}
