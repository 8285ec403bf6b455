package payouts

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/payd/payd/internal/errs"
)

const rowsHeader = "recipient_msisdn,recipient_account,amount,provider,reference,description\n"
const itemsHeader = "amount,currency,provider,recipient_msisdn,recipient_account,recipient_name,description,external_ref\n"

// wantRowError checks err is the 400 invalid_rows naming row and param.
func wantRowError(t *testing.T, err error, row int, param, contains string) {
	t.Helper()
	e := errs.As(err)
	if e == nil || e.Kind != errs.KindInvalid || e.Code != "invalid_rows" || len(e.Rows) == 0 {
		t.Fatalf("want invalid_rows, got %v", err)
	}
	r := e.Rows[0]
	if r.Row != row || r.Param != param || !strings.Contains(r.Message, contains) {
		t.Fatalf("row error %+v, want row %d param %s containing %q", r, row, param, contains)
	}
}

// wantError checks err is a 400 with code and param.
func wantError(t *testing.T, err error, code, param string) {
	t.Helper()
	e := errs.As(err)
	if e == nil || e.Code != code || e.Param != param {
		t.Fatalf("want %s (%s), got %v", code, param, err)
	}
}

// TestRowsCSVRules: every rule of a variant B CSV, one failing row each.
func TestRowsCSVRules(t *testing.T) {
	t.Parallel()
	good := "+25377000001,,100,wallet_b,ok-1,first\n"
	cases := []struct {
		name, row, param, msg string
	}{
		{"msisdn and account", "+25377000002,DJ01,100,wallet_b,r,\n", "recipient_account", "mutually exclusive"},
		{"neither recipient", ",,100,wallet_b,r,\n", "recipient_msisdn", "required for wallet_b"},
		{"wallet_a needs msisdn", ",DJ01,100,wallet_a,r,\n", "recipient_msisdn", "required for wallet_a"},
		{"bank_a needs account", "+25377000002,,100,bank_a,r,\n", "recipient_account", "required for bank_a"},
		{"bank_b needs account", ",,100,bank_b,r,\n", "recipient_account", "required for bank_b"},
		{"msisdn not E.164", "0025377,,100,wallet_b,r,\n", "recipient_msisdn", "E.164"},
		{"account malformed", ",DJ 01;drop,100,bank_a,r,\n", "recipient_account", "letters, digits"},
		{"amount missing", "+25377000002,,,wallet_b,r,\n", "amount", "required"},
		{"amount zero", "+25377000002,,0,wallet_b,r,\n", "amount", "positive"},
		{"amount negative", "+25377000002,,-5,wallet_b,r,\n", "amount", "whole number of DJF"},
		{"amount fractional", "+25377000002,,100.50,wallet_b,r,\n", "amount", "whole number of DJF"},
		{"amount with a separator", "+25377000002,,\"1,000\",wallet_b,r,\n", "amount", "whole number of DJF"},
		{"amount overflows", "+25377000002,,99999999999999999999,wallet_b,r,\n", "amount", "too large"},
		{"provider missing", "+25377000002,,100,,r,\n", "provider", "required"},
		{"provider not for rows", "+25377000002,,100,wallet_c,r,\n", "provider", "one of wallet_a, wallet_b, bank_b, bank_a"},
		{"provider unknown", "+25377000002,,100,paypal,r,\n", "provider", "one of"},
		{"reference missing", "+25377000002,,100,wallet_b,,\n", "reference", "required"},
		{"reference too long", "+25377000002,,100,wallet_b," + strings.Repeat("r", 256) + ",\n", "reference", "at most 255"},
		{"description too long", "+25377000002,,100,wallet_b,r," + strings.Repeat("é", 141) + "\n", "description", "at most 140"},
		{"too few columns", "+25377000002,,100,wallet_b\n", "file", "has 4 columns; 6 are expected"},
		{"too many columns", "+25377000002,,100,wallet_b,r,d,extra\n", "file", "has 7 columns"},
		{"scenario not offered", "+253000000009,,100,wallet_b,r,\n", "recipient_msisdn", "not offered"},
		{"unknown account scenario", ",sandbox_lucky,100,bank_a,r,\n", "recipient_account", "unknown sandbox scenario"},
		{"quoting", "+25377000002,,100,wallet_b,\"r,\n", "file", "cannot be read as CSV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRowsCSV([]byte(rowsHeader+good+c.row), "DJF", "", false)
			wantRowError(t, err, 2, c.param, c.msg)
		})
	}
	t.Run("good", func(t *testing.T) {
		b, err := ParseRowsCSV([]byte(rowsHeader+good+",sandbox_account_closed,7,bank_b,ok-2,\n"), "DJF", "d", false)
		if err != nil || b.RowCount() != 2 || b.inputs[1].Scenario != "account_closed" || b.inputs[0].Amount != 100 {
			t.Fatalf("%v %+v", err, b)
		}
	})
	t.Run("live mode ignores magic numbers", func(t *testing.T) {
		b, err := ParseRowsCSV([]byte(rowsHeader+"+253000000009,,100,wallet_b,r,\n"), "DJF", "", true)
		if err != nil || b.inputs[0].Scenario != "" {
			t.Fatalf("%v", err)
		}
	})
}

// TestRowsCSVWhole covers the rules about the file as a whole.
func TestRowsCSVWhole(t *testing.T) {
	t.Parallel()
	row := func(i int) string { return fmt.Sprintf("+25377%06d,,1000,wallet_b,ref-%d,\n", i, i) }
	many := func(n int) string {
		var b strings.Builder
		b.WriteString(rowsHeader)
		for i := 1; i <= n; i++ {
			b.WriteString(row(i))
		}
		return b.String()
	}
	cases := []struct {
		name, csv, currency, desc string
		code, param               string
	}{
		{"invalid UTF-8", rowsHeader + "+25377000001,,100,wallet_b,r,caf\xe9\n", "DJF", "", "csv_invalid_encoding", "file"},
		{"empty", "", "DJF", "", "csv_invalid_header", "file"},
		{"wrong header order", "recipient_account,recipient_msisdn,amount,provider,reference,description\n" + row(1), "DJF", "", "csv_invalid_header", "file"},
		{"header in capitals", strings.ToUpper(rowsHeader) + row(1), "DJF", "", "csv_invalid_header", "file"},
		{"items header for rows", itemsHeader + row(1), "DJF", "", "csv_invalid_header", "file"},
		{"no header", row(1) + row(2), "DJF", "", "csv_invalid_header", "file"},
		{"header only", rowsHeader, "DJF", "", "batch_empty", "file"},
		{"USD", many(1), "USD", "", "currency_not_supported", "currency"},
		{"no currency", many(1), "", "", "parameter_missing", "currency"},
		{"batch description", many(1), "DJF", strings.Repeat("d", 256), "parameter_too_long", "description"},
		{"10,001 rows", many(10_001), "DJF", "", "too_many_rows", "file"},
		{"over DJF 50,000,000", rowsHeader + "+25377000001,,30000000,wallet_b,a,\n+25377000002,,20000001,wallet_b,b,\n", "DJF", "", "batch_total_exceeded", "file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRowsCSV([]byte(c.csv), c.currency, c.desc, false)
			wantError(t, err, c.code, c.param)
		})
	}
	t.Run("10,000 rows and duplicates", func(t *testing.T) {
		csv := many(10_000) + row(5) + row(10_000)
		b, err := ParseRowsCSV([]byte(csv), "DJF", "", false)
		if err != nil || b.RowCount() != 10_000 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("exactly DJF 50,000,000", func(t *testing.T) {
		_, err := ParseRowsCSV([]byte(rowsHeader+"+25377000001,,30000000,wallet_b,a,\n+25377000002,,20000000,wallet_b,b,\n"), "DJF", "", false)
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("37 bad rows reported at once", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(rowsHeader)
		var bad []int
		for i := 1; i <= 200; i++ {
			if i%5 == 0 && len(bad) < 37 {
				b.WriteString(fmt.Sprintf("+25377%06d,,abc,wallet_b,ref-%d,\n", i, i))
				bad = append(bad, i)
				continue
			}
			b.WriteString(row(i))
		}
		_, err := ParseRowsCSV([]byte(b.String()), "DJF", "", false)
		e := errs.As(err)
		if e == nil || len(e.Rows) != 37 || !strings.Contains(e.Message, "37 rows") {
			t.Fatalf("%v", err)
		}
		for i, r := range e.Rows {
			if r.Row != bad[i] || r.Param != "amount" {
				t.Fatalf("row error %d: %+v, want row %d", i, r, bad[i])
			}
		}
	})
	t.Run("at most 100 shown", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(rowsHeader)
		for i := 1; i <= 150; i++ {
			b.WriteString(fmt.Sprintf(",,x,nope,ref-%d,\n", i))
		}
		_, err := ParseRowsCSV([]byte(b.String()), "DJF", "", false)
		e := errs.As(err)
		if e == nil || len(e.Rows) != 100 || !strings.Contains(e.Message, "150 rows") {
			t.Fatalf("%v", err)
		}
	})
}

// TestItemsCSVRules: the variant A CSV's own rules.
func TestItemsCSVRules(t *testing.T) {
	t.Parallel()
	good := "100,DJF,wallet_b,+25377000001,,Amina,,e-1\n"
	cases := []struct {
		name, row, param, msg string
	}{
		{"currency missing", "100,,wallet_b,+25377000002,,,,e\n", "currency", "required"},
		{"currency unknown", "100,ABC,wallet_b,+25377000002,,,,e\n", "currency", "ISO 4217"},
		{"wallet_d pays ETB", "100,DJF,wallet_d,+25377000002,,,,e\n", "currency", "ETB only"},
		{"amount fractional", "1.5,DJF,wallet_b,+25377000002,,,,e\n", "amount", "integer in minor units"},
		{"name too long", "100,DJF,wallet_b,+25377000002,," + strings.Repeat("n", 141) + ",,e\n", "recipient_name", "at most 140"},
		{"both recipients", "100,DJF,bank_a,+25377000002,DJ1,,,e\n", "recipient_account", "mutually exclusive"},
		{"external_ref too long", "100,DJF,wallet_b,+25377000002,,,," + strings.Repeat("e", 256) + "\n", "external_ref", "at most 255"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseItemsCSV([]byte(itemsHeader+good+c.row), false)
			wantRowError(t, err, 2, c.param, c.msg)
		})
	}
	b, err := ParseItemsCSV([]byte(itemsHeader+good+"250,USD,bank_a,,US1,,,\n"+good), false)
	if err != nil || b.RowCount() != 2 || b.inputs[0].Reference != "e-1" || b.inputs[1].Reference != "" {
		t.Fatalf("%v %+v", err, b)
	}
	_, err = ParseItemsCSV([]byte(rowsHeader+good), false)
	wantError(t, err, "csv_invalid_header", "file")
}

// TestBatchJSONRules: the JSON shapes and every row rule that differs from CSV.
func TestBatchJSONRules(t *testing.T) {
	t.Parallel()
	rows := func(extra ...string) string {
		return `{"currency":"DJF","rows":[{"recipient_msisdn":"+25377000001","amount":100,"provider":"wallet_b","reference":"a"}` +
			strings.Join(append([]string{""}, extra...), ",") + `]}`
	}
	rowCases := []struct {
		name, row, param, msg string
	}{
		{"not an object", `5`, "", "JSON object"},
		{"amount string", `{"recipient_msisdn":"+25377000002","amount":"100","provider":"wallet_b","reference":"b"}`, "amount", "integer"},
		{"amount float", `{"recipient_msisdn":"+25377000002","amount":1.5,"provider":"wallet_b","reference":"b"}`, "amount", "integer"},
		{"amount exponent", `{"recipient_msisdn":"+25377000002","amount":1e3,"provider":"wallet_b","reference":"b"}`, "amount", "integer"},
		{"amount overflow", `{"recipient_msisdn":"+25377000002","amount":92233720368547758080,"provider":"wallet_b","reference":"b"}`, "amount", "too large"},
		{"provider number", `{"recipient_msisdn":"+25377000002","amount":1,"provider":7,"reference":"b"}`, "provider", "string"},
		{"unknown field", `{"recipient_msisdn":"+25377000002","amount":1,"provider":"wallet_b","reference":"b","iban":"x"}`, "iban", "unknown"},
		{"currency per row", `{"recipient_msisdn":"+25377000002","amount":1,"provider":"wallet_b","reference":"b","currency":"DJF"}`, "currency", "unknown"},
		{"both recipients", `{"recipient_msisdn":"+25377000002","recipient_account":"DJ1","amount":1,"provider":"wallet_b","reference":"b"}`, "recipient_account", "mutually exclusive"},
		{"reference missing", `{"recipient_msisdn":"+25377000002","amount":1,"provider":"wallet_b"}`, "reference", "required"},
		{"amount and amount_minor", `{"recipient_msisdn":"+25377000002","amount":1,"amount_minor":1,"provider":"wallet_b","reference":"b"}`, "amount_minor", "not both"},
		{"amount_minor string", `{"recipient_msisdn":"+25377000002","amount_minor":"1","provider":"wallet_b","reference":"b"}`, "amount_minor", "integer"},
		{"amount_minor zero", `{"recipient_msisdn":"+25377000002","amount_minor":0,"provider":"wallet_b","reference":"b"}`, "amount_minor", "positive"},
	}
	for _, c := range rowCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBatchJSON([]byte(rows(c.row)), false)
			wantRowError(t, err, 2, c.param, c.msg)
		})
	}
	whole := []struct {
		name, body, code, param string
	}{
		{"not JSON", `{`, "invalid_json", ""},
		{"array", `[]`, "invalid_json", ""},
		{"neither", `{"currency":"DJF"}`, "parameter_missing", "rows"},
		{"both", `{"currency":"DJF","rows":[],"items":[]}`, "parameter_invalid", "rows"},
		{"rows not an array", `{"currency":"DJF","rows":{}}`, "parameter_invalid", "rows"},
		{"unknown top-level", `{"currency":"DJF","rows":[],"when":"now"}`, "parameter_unknown", "when"},
		{"rows without currency", `{"rows":[]}`, "parameter_missing", "currency"},
		{"rows in USD", `{"currency":"USD","rows":[]}`, "currency_not_supported", "currency"},
		{"items with currency", `{"currency":"DJF","items":[]}`, "parameter_unknown", "currency"},
		{"empty rows", `{"currency":"DJF","rows":[]}`, "batch_empty", "rows"},
		{"empty items", `{"items":[]}`, "batch_empty", "items"},
		{"description too long", `{"currency":"DJF","description":"` + strings.Repeat("x", 256) + `","rows":[]}`, "parameter_too_long", "description"},
	}
	for _, c := range whole {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBatchJSON([]byte(c.body), false)
			wantError(t, err, c.code, c.param)
		})
	}
	t.Run("duplicates dropped unread", func(t *testing.T) {
		b, err := ParseBatchJSON([]byte(rows(`{"reference":"a","amount":"junk"}`, `{"recipient_msisdn":"+25377000003","amount":5,"provider":"wallet_b","reference":"c"}`)), false)
		if err != nil || b.RowCount() != 2 || b.Variant != VariantRows {
			t.Fatalf("%v", err)
		}
	})
	t.Run("items", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"items": []map[string]any{
			{"amount": 5, "currency": "ETB", "provider": "wallet_d", "recipient_msisdn": "+251911000000", "external_ref": "x", "metadata": map[string]string{"a": "b"}},
		}})
		b, err := ParseBatchJSON(body, false)
		if err != nil || b.Variant != VariantItems || b.inputs[0].Reference != "x" || b.inputs[0].Metadata["a"] != "b" {
			t.Fatalf("%v", err)
		}
	})
}

// TestBatchJSONAmountMinor: JSON rows and items take their amount as
// amount_minor as well as amount, meaning the same minor units.
func TestBatchJSONAmountMinor(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"rows":  `{"currency":"DJF","rows":[{"recipient_msisdn":"+25377000001","amount_minor":100,"provider":"wallet_b","reference":"a"},{"recipient_msisdn":"+25377000002","amount":250,"provider":"wallet_b","reference":"b"}]}`,
		"items": `{"items":[{"amount_minor":100,"currency":"DJF","provider":"wallet_b","recipient_msisdn":"+25377000001"},{"amount":250,"currency":"DJF","provider":"wallet_b","recipient_msisdn":"+25377000002"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			req, err := ParseBatchJSON([]byte(body), false)
			if err != nil {
				t.Fatal(err)
			}
			if len(req.inputs) != 2 || req.inputs[0].Amount != 100 || req.inputs[1].Amount != 250 {
				t.Fatalf("parsed %+v %+v", req.inputs[0], req.inputs[1])
			}
		})
	}
}
