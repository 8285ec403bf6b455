// Command banking measures pacs.008 → pacs.002 round trips over HTTP: POST
// /banking/v1/transfers with a fresh MsgId and UETRs each time, answered
// synchronously with the status report after the transfer settled between
// two participants' settlement accounts (the ledger posting, the transfer
// row, two events and the stored report, in one database transaction). XML
// and JSON, one and ten transactions per message, at several client counts.
//
// It starts its own payd on a loopback port, over a temporary SQLite file or
// a fresh schema of the PostgreSQL database given:
//
//	go run ./bench/banking -engine sqlite
//	go run ./bench/banking -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_bench?sslmode=disable'
//
// or drives a running one on loopback, given a secret key of a funded
// participant (-debtor is its BIC) and another participant's BIC:
//
//	go run ./bench/banking -url http://127.0.0.1:8080 -key sk_test_... -debtor BANKDJJDXXX -creditor CACEDJJDXXX
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	target := flag.String("url", "", "drive a running payd at this loopback URL instead of starting one")
	key := flag.String("key", "", "with -url: secret key of a funded participant")
	debtor := flag.String("debtor", "BANKDJJDXXX", "with -url: the BIC of the key's participant")
	creditor := flag.String("creditor", "CACEDJJDXXX", "with -url: another participant's BIC")
	dur := flag.Duration("duration", 5*time.Second, "duration of each step")
	maxOps := flag.Int64("max", 20000, "at most this many messages per step")
	clients := flag.String("clients", "1,8,32", "concurrency levels")
	large := flag.Int("large", 2000, "finally post one XML message with this many transactions (0 skips)")
	flag.Parse()
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}

	api, engine := harness.API{Base: *target, Key: *key}, "external"
	if api.Base == "" {
		m, cleanup, k, err := start(db, *debtor, *creditor)
		if err != nil {
			harness.Fatal(err)
		}
		defer cleanup()
		api, engine = harness.API{Base: m.URL(), Key: k}, db.Engine
	} else if err := harness.RequireLoopback(api.Base); err != nil {
		harness.Fatal(err)
	} else if api.Key == "" {
		harness.Fatal(fmt.Errorf("-url needs -key"))
	}
	fmt.Printf("engine=%s url=%s step=%s max=%d\n", engine, api.Base, *dur, *maxOps)
	run := harness.RandomHex(4)
	for _, sc := range []struct {
		name, contentType string
		txs               int
	}{
		{"XML pacs.008, 1 transaction", "application/xml", 1},
		{"JSON envelope, 1 transaction", "application/json", 1},
		{"XML pacs.008, 10 transactions", "application/xml", 10},
	} {
		fmt.Printf("\nPOST /banking/v1/transfers: %s → pacs.002 (ACSC)\n", sc.name)
		for _, n := range levels {
			step := run + strconv.Itoa(n) + strconv.Itoa(sc.txs) + sc.contentType[12:13]
			res := loadgen.RunWith(loadgen.Options{Clients: n, Duration: *dur, MaxOps: *maxOps}, func(c *loadgen.Call) error {
				return transfer(api.With(c.HTTP), sc.contentType, message(sc.contentType, step+"-"+strconv.FormatInt(c.N, 10), sc.txs, *debtor, *creditor))
			})
			fmt.Printf("%s  transactions/s=%.0f\n", res, res.Throughput()*float64(sc.txs))
			res.WriteFailures(os.Stderr)
		}
	}
	if *large > 0 {
		body := message("application/xml", run+"-large", *large, *debtor, *creditor)
		t := time.Now()
		err := transfer(api.With(&http.Client{Timeout: 5 * time.Minute}), "application/xml", body)
		fmt.Printf("\nOne XML pacs.008 of %d transactions (%d bytes): %s, err=%v\n", *large, len(body), time.Since(t).Round(time.Millisecond), err)
	}
}

// start runs payd on a fresh database with two participants and funds the
// debtor; it returns the debtor's key.
func start(db *harness.Database, debtor, creditor string) (*app.Main, func(), string, error) {
	ctx := context.Background()
	m, cleanup, err := db.Start(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	d, err := harness.NewMerchant(ctx, m, "Debtor bank", debtor)
	if err == nil {
		_, err = harness.NewMerchant(ctx, m, "Creditor bank", creditor)
	}
	if err == nil {
		err = harness.API{Base: m.URL(), Key: d.SecretKeys[0]}.TopUp("DJF", 1_000_000_000_000)
	}
	if err != nil {
		cleanup()
		return nil, nil, "", err
	}
	return m, cleanup, d.SecretKeys[0], nil
}

// transfer posts a pacs.008 and accepts a 200 whose every transaction settled.
func transfer(api harness.API, contentType string, body []byte) error {
	var report []byte
	if err := api.Do(harness.Request{Method: "POST", Path: "/banking/v1/transfers", Body: body, ContentType: contentType}, &report); err != nil {
		return err
	}
	if bytes.Contains(report, []byte("RJCT")) || bytes.Contains(report, []byte("PART")) {
		return fmt.Errorf("not settled: %.200s", report)
	}
	return nil
}

// message builds a pacs.008 (XML or JSON) with txs transactions of 1 DJF.
func message(contentType, msgID string, txs int, debtor, creditor string) []byte {
	var b bytes.Buffer
	if contentType == "application/json" {
		fmt.Fprintf(&b, `{"msg_id":%q,"created_at":"2026-03-14T09:26:50Z","settlement":{"method":"CLRG"},"transactions":[`, msgID)
		for i := range txs {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"uetr":%q,"end_to_end_id":"E2E-%d","amount_minor":1,"currency":"DJF","charge_bearer":"SLEV",`+
				`"debtor":{"name":"Amina Hassan","account":"DJ2100010000000154000100186"},"debtor_agent":%q,`+
				`"creditor":{"name":"Omar Farah Trading SARL","account":"GB82WEST12345698765432"},"creditor_agent":%q,"remittance_info":"Invoice %d"}`,
				uuid4(), i+1, debtor, creditor, i+1)
		}
		b.WriteString("]}")
		return b.Bytes()
	}
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="urn:swift:xsd:envelope">
<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"><BizMsgIdr>%s</BizMsgIdr><MsgDefIdr>pacs.008.001.08</MsgDefIdr></AppHdr>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>
<GrpHdr><MsgId>%s</MsgId><CreDtTm>2026-03-14T09:26:50Z</CreDtTm><NbOfTxs>%d</NbOfTxs><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf></GrpHdr>
`, msgID, msgID, txs)
	for i := range txs {
		fmt.Fprintf(&b, `<CdtTrfTxInf><PmtId><EndToEndId>E2E-%d</EndToEndId><UETR>%s</UETR></PmtId>`+
			`<IntrBkSttlmAmt Ccy="DJF">1</IntrBkSttlmAmt><ChrgBr>SLEV</ChrgBr><Dbtr><Nm>Amina Hassan</Nm></Dbtr>`+
			`<DbtrAcct><Id><IBAN>DJ2100010000000154000100186</IBAN></Id></DbtrAcct><DbtrAgt><FinInstnId><BICFI>%s</BICFI></FinInstnId></DbtrAgt>`+
			`<CdtrAgt><FinInstnId><BICFI>%s</BICFI></FinInstnId></CdtrAgt><Cdtr><Nm>Omar Farah Trading SARL</Nm></Cdtr>`+
			`<CdtrAcct><Id><IBAN>GB82WEST12345698765432</IBAN></Id></CdtrAcct><RmtInf><Ustrd>Invoice %d</Ustrd></RmtInf></CdtTrfTxInf>
`, i+1, uuid4(), debtor, creditor, i+1)
	}
	b.WriteString("</FIToFICstmrCdtTrf></Document>\n</Envelope>\n")
	return b.Bytes()
}

// uuid4 is a random lower-case version 4 UUID (a UETR).
func uuid4() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
