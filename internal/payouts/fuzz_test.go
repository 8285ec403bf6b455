package payouts

import (
	"strings"
	"testing"

	"github.com/payd/payd/internal/errs"
)

// checkParsed holds for every parse: either a batch whose rows are valid, or
// a 400 whose row errors are numbered from 1 and at most 100.
func checkParsed(t *testing.T, b *BatchRequest, err error) {
	t.Helper()
	if err != nil {
		e := errs.As(err)
		if e == nil || e.Kind != errs.KindInvalid || e.Code == "" || e.Message == "" {
			t.Fatalf("not a 400: %#v", err)
		}
		if len(e.Rows) > MaxRowErrorsReported {
			t.Fatalf("%d row errors shown", len(e.Rows))
		}
		for _, r := range e.Rows {
			if r.Row < 1 || r.Message == "" {
				t.Fatalf("row error %+v", r)
			}
		}
		return
	}
	if b.RowCount() == 0 || b.RowCount() > MaxBatchRows {
		t.Fatalf("%d rows accepted", b.RowCount())
	}
	refs := map[string]bool{}
	var total int64
	for _, in := range b.inputs {
		if in.Amount <= 0 || in.Provider == "" || (in.MSISDN == "") == (in.Account == "") {
			t.Fatalf("invalid row accepted: %+v", in)
		}
		if in.Reference != "" {
			if refs[in.Reference] {
				t.Fatalf("duplicate reference %q kept", in.Reference)
			}
			refs[in.Reference] = true
		}
		total += in.Amount
	}
	if b.Variant == VariantRows && (total > MaxBatchTotalDJF || b.Currency != "DJF") {
		t.Fatalf("variant B total %d %s accepted", total, b.Currency)
	}
}

func FuzzParseRowsCSV(f *testing.F) {
	f.Add([]byte(rowsHeader + "+25377000001,,100,wallet_b,a,x\n,DJ1,5,bank_a,b,\n"))
	f.Add([]byte("\xEF\xBB\xBF" + rowsHeader + "+253000000002,,1,wallet_b,a,\"q,\"\"x\"\"\"\r\n"))
	f.Add([]byte(rowsHeader + "+25377000001,DJ1,-1,wallet_z,,\n"))
	f.Add([]byte(rowsHeader + "\"unterminated\n"))
	f.Add([]byte("caf\xe9"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseRowsCSV(data, "DJF", "", false)
		checkParsed(t, b, err)
	})
}

func FuzzParseItemsCSV(f *testing.F) {
	f.Add([]byte(itemsHeader + "100,DJF,wallet_b,+25377000001,,Amina,,e-1\n250,USD,bank_a,,US1,,,\n"))
	f.Add([]byte(itemsHeader + "1,ETB,wallet_d,+251911000000,,\"A, B\",d,e\n"))
	f.Add([]byte(itemsHeader + ",,,,,,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseItemsCSV(data, false)
		checkParsed(t, b, err)
	})
}

func FuzzParseBatchJSON(f *testing.F) {
	f.Add([]byte(`{"currency":"DJF","rows":[{"recipient_msisdn":"+25377000001","amount":100,"provider":"wallet_b","reference":"a"}]}`))
	f.Add([]byte(`{"items":[{"amount":5,"currency":"USD","provider":"bank_a","recipient_account":"US1","metadata":{"k":"v"}}]}`))
	f.Add([]byte(`{"currency":"DJF","rows":[5,null,{"amount":1e3}]}`))
	f.Add([]byte(`{"items":[],"rows":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBatchJSON(data, false)
		checkParsed(t, b, err)
		if err == nil && strings.TrimSpace(string(data)) == "" {
			t.Fatal("empty body accepted")
		}
	})
}
