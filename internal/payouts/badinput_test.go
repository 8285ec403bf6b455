package payouts_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBadBatches: bad uploads get clear errors and write nothing.
func testBadBatches(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000_000)
	header := "recipient_msisdn,recipient_account,amount,provider,reference,description\n"
	rowsCSV := func(n int, bad func(i int) string) []byte {
		var b bytes.Buffer
		b.WriteString(header)
		for i := 1; i <= n; i++ {
			if bad != nil {
				if s := bad(i); s != "" {
					b.WriteString(s)
					continue
				}
			}
			fmt.Fprintf(&b, "+25377%06d,,1000,wallet_b,ref-%d,\n", i, i)
		}
		return b.Bytes()
	}
	upload := func(csv []byte) *apptest.Response {
		body, ct := multipartRows(t, csv, map[string]string{"currency": "DJF"})
		return postBulk(e, e.SK, body, ct)
	}
	// 37 bad rows of several kinds among 500, reported at once.
	var wantRows []int
	kinds := []string{
		"+25377%06d,DJ1,1000,wallet_b,ref-%d,\n", // both recipients
		"+25377%06d,,12.5,wallet_b,ref-%d,\n",    // fractional
		"+25377%06d,,1000,wallet_x,ref-%d,\n",    // provider
		"+25377%06d,,1000,bank_a,ref-%d,\n",      // bank without account
		"+25377%06d,,1000,wallet_b,ref-%d,x,y\n", // columns
		"+25377%06d,,-1000,wallet_b,ref-%d,\n",   // negative
		"77%06d,,1000,wallet_b,ref-%d,\n",        // not E.164
	}
	csv := rowsCSV(500, func(i int) string {
		if i%13 == 0 && len(wantRows) < 37 {
			wantRows = append(wantRows, i)
			return fmt.Sprintf(kinds[len(wantRows)%len(kinds)], i, i)
		}
		return ""
	})
	r := upload(csv)
	var eb errBody
	r.JSON(t, &eb)
	if r.Status != 400 || eb.Error.Code != "invalid_rows" || len(eb.Error.Rows) != 37 || !strings.Contains(eb.Error.Message, "37 rows") {
		t.Fatalf("37 bad rows: %d %.600s", r.Status, r.Body)
	}
	for i, re := range eb.Error.Rows {
		if re.Row != wantRows[i] || re.Param == "" || re.Message == "" {
			t.Fatalf("row error %d: %+v, want row %d", i, re, wantRows[i])
		}
	}
	// The same in JSON rows.
	var rows []map[string]any
	for i := 1; i <= 100; i++ {
		row := map[string]any{"recipient_msisdn": fmt.Sprintf("+25377%06d", i), "amount": 1000, "provider": "wallet_b", "reference": fmt.Sprintf("j-%d", i)}
		if i%3 == 0 {
			row["amount"] = "a lot"
		}
		rows = append(rows, row)
	}
	r = postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": rows}, "")
	r.JSON(t, &eb)
	if r.Status != 400 || len(eb.Error.Rows) != 33 || eb.Error.Rows[0].Row != 3 || eb.Error.Rows[0].Param != "amount" {
		t.Fatalf("JSON bad rows: %d %.400s", r.Status, r.Body)
	}
	cases := []struct {
		name   string
		resp   func() *apptest.Response
		status int
		code   string
	}{
		{"invalid UTF-8", func() *apptest.Response {
			return upload(append(rowsCSV(3, nil), []byte("+25377000009,,5,wallet_b,r9,caf\xe9\n")...))
		}, 400, "csv_invalid_encoding"},
		{"wrong header", func() *apptest.Response {
			return upload(bytes.Replace(rowsCSV(3, nil), []byte("reference,description"), []byte("ref,description"), 1))
		}, 400, "csv_invalid_header"},
		{"10,001 rows", func() *apptest.Response { return upload(rowsCSV(10_001, nil)) }, 400, "too_many_rows"},
		{"over DJF 50,000,000", func() *apptest.Response {
			return upload(rowsCSV(2, func(i int) string { return fmt.Sprintf("+25377%06d,,25000001,wallet_b,big-%d,\n", i, i) }))
		}, 400, "batch_total_exceeded"},
		{"an 11 MB file", func() *apptest.Response {
			big := rowsCSV(1, nil)
			big = append(big, bytes.Repeat([]byte("+25377000001,,1000,wallet_b,pad,"+strings.Repeat("x", 100)+"\n"), 11<<20/140)...)
			return upload(big)
		}, 413, "request_too_large"},
		{"an 11 MB CSV of items", func() *apptest.Response {
			return postBulk(e, e.SK, bytes.Repeat([]byte("x"), 11<<20), "text/csv")
		}, 413, "request_too_large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.resp()
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Fatalf("got %d %.400s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
		})
	}
	for table, q := range map[string]string{
		"payout_batches":    "SELECT COUNT(*) FROM payout_batches WHERE merchant_id = ?",
		"payout_batch_rows": "SELECT COUNT(*) FROM payout_batch_rows WHERE batch_id IN (SELECT id FROM payout_batches WHERE merchant_id = ?)",
		"payouts":           "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?",
	} {
		if n := countRows(t, e, q, e.Merchant.MerchantID); n != 0 {
			t.Fatalf("%d rows in %s after refused uploads", n, table)
		}
	}
	if b := balance(t, e, "DJF"); b.Reserved != 0 {
		t.Fatalf("balance %+v", b)
	}
}
