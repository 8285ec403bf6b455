// Command banking measures pacs.008 → pacs.002 round trips over HTTP: POST
// /banking/v1/transfers with a fresh MsgId and UETRs each time, answered
// synchronously with the status report after the transfer settled between
// two participants' settlement accounts (the ledger posting, the transfer
// row, two events and the stored report, in one database transaction). XML
// and JSON, one and ten transactions per message, at several client counts.
//
// It starts its own payd on a loopback port:
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
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres (when payd is started here)")
	dbURL := flag.String("database-url", "", "database URL (postgres: an empty database you can drop)")
	target := flag.String("url", "", "drive a running payd at this loopback URL instead of starting one")
	key := flag.String("key", "", "with -url: secret key of a funded participant")
	debtor := flag.String("debtor", "BANKDJJDXXX", "with -url: the BIC of the key's participant")
	creditor := flag.String("creditor", "CACEDJJDXXX", "with -url: another participant's BIC")
	dur := flag.Duration("duration", 5*time.Second, "duration of each step")
	maxOps := flag.Int64("max", 20000, "at most this many messages per step")
	clients := flag.String("clients", "1,8,32", "concurrency levels")
	large := flag.Int("large", 2000, "finally post one XML message with this many transactions (0 skips)")
	flag.Parse()

	base, sk := *target, *key
	if base == "" {
		m, k, err := start(*engine, *dbURL, *debtor, *creditor)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer m.Close()
		base, sk = m.URL(), k
	} else if err := loopbackOnly(base); err != nil || sk == "" {
		fmt.Fprintln(os.Stderr, "-url must be a loopback http URL and -key is required:", err)
		os.Exit(2)
	}
	var levels []int
	for _, s := range strings.Split(*clients, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			levels = append(levels, n)
		}
	}
	fmt.Printf("engine=%s url=%s step=%s max=%d\n", *engine, base, *dur, *maxOps)
	run := randomTag()
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
			res := loadgen.Run(n, *dur, *maxOps, func(c *http.Client, i int64) error {
				body := message(sc.contentType, step+"-"+strconv.FormatInt(i, 10), sc.txs, *debtor, *creditor)
				req, _ := http.NewRequest("POST", base+"/banking/v1/transfers", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+sk)
				req.Header.Set("Content-Type", sc.contentType)
				resp, err := c.Do(req)
				return settled(resp, err)
			})
			fmt.Printf("%s  transactions/s=%.0f\n", res, res.Throughput()*float64(sc.txs))
		}
	}
	if *large > 0 {
		body := message("application/xml", run+"-large", *large, *debtor, *creditor)
		req, _ := http.NewRequest("POST", base+"/banking/v1/transfers", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+sk)
		req.Header.Set("Content-Type", "application/xml")
		t := time.Now()
		resp, err := http.DefaultClient.Do(req)
		err = settled(resp, err)
		fmt.Printf("\nOne XML pacs.008 of %d transactions (%d bytes): %s, err=%v\n", *large, len(body), time.Since(t).Round(time.Millisecond), err)
	}
}

// start runs payd on a fresh database with two participants and funds the
// debtor; it returns the debtor's key.
func start(engine, dbURL, debtor, creditor string) (*app.Main, string, error) {
	if engine == "sqlite" && dbURL == "" {
		dir, err := os.MkdirTemp("", "payd-bench-banking")
		if err != nil {
			return nil, "", err
		}
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
	}
	if dbURL == "" {
		return nil, "", fmt.Errorf("-database-url is required for postgres")
	}
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return nil, "", err
	}
	cfg.Addr, cfg.PublicURL, cfg.DatabaseURL, cfg.RateLimit = "127.0.0.1:0", "", dbURL, 0
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	ctx := context.Background()
	if err := m.Run(ctx); err != nil {
		return nil, "", err
	}
	tag := randomTag()[:3]
	d, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Debtor bank " + tag, BIC: debtor})
	if err != nil {
		m.Close()
		return nil, "", fmt.Errorf("create %s (use an empty database): %w", debtor, err)
	}
	if _, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Creditor bank " + tag, BIC: creditor}); err != nil {
		m.Close()
		return nil, "", err
	}
	req, _ := http.NewRequest("POST", m.URL()+"/v1/sandbox/topups", strings.NewReader(`{"currency":"DJF","amount_minor":1000000000000}`))
	req.Header.Set("Authorization", "Bearer "+d.SecretKeys[0])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err := loadgen.Check(resp, err, 201); err != nil {
		m.Close()
		return nil, "", fmt.Errorf("fund the debtor: %w", err)
	}
	return m, d.SecretKeys[0], nil
}

// settled accepts a 200 whose every transaction settled.
func settled(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if bytes.Contains(b, []byte("RJCT")) || bytes.Contains(b, []byte("PART")) {
		return fmt.Errorf("not settled: %.200s", b)
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

func randomTag() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x", b)
}

// loopbackOnly refuses a target that is not a loopback http URL.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("scheme %q", u.Scheme)
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
		return nil
	default:
		return fmt.Errorf("host %q is not loopback", h)
	}
}
