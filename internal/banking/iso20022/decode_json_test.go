package iso20022

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func validJSON(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", "json", "ok_single.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeJSONParseErrors(t *testing.T) {
	ok := validJSON(t)
	cases := []struct {
		name string
		in   string
		kind error
	}{
		{"empty", "", ErrMalformed},
		{"xml", "<Document/>", ErrMalformed},
		{"array", "[" + ok + "]", ErrMalformed},
		{"string", `"x"`, ErrMalformed},
		{"trailing data", ok + "{}", ErrMalformed},
		{"truncated", ok[:len(ok)/2], ErrMalformed},
		{"too deep", `{"x":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`, ErrTooDeep},
		{"too large", ok + strings.Repeat(" ", MaxMessageBytes), ErrTooLarge},
		{"leading zero", strings.Replace(ok, `"amount_minor": 1500`, `"amount_minor": 01500`, 1), ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeJSON([]byte(c.in))
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, c.kind) {
				t.Fatalf("got %v, want a *ParseError of kind %v", err, c.kind)
			}
		})
	}
}

func TestDecodeJSONShapeErrors(t *testing.T) {
	ok := validJSON(t)
	cases := []struct {
		name, from, to, path string
	}{
		{"unknown member", `"msg_id"`, `"memo": "x", "msg_id"`, "memo"},
		{"member in another case", `"msg_id"`, `"MSG_ID"`, "MSG_ID"},
		{"duplicate member", `"msg_id": "CORPUS-JSON-001",`, `"msg_id": "CORPUS-JSON-001", "msg_id": "OTHER",`, "msg_id"},
		{"amount as string", `"amount_minor": 1500`, `"amount_minor": "1500"`, "transactions[0].amount_minor"},
		{"name as number", `"name": "Amina Hassan"`, `"name": 7`, "transactions[0].debtor.name"},
		{"boolean", `"currency": "DJF"`, `"currency": true`, "transactions[0].currency"},
		{"transactions object", `"transactions": [`, `"transactions": {"a": [`, "transactions"},
		{"debtor as string", `"debtor": {`, `"debtor": "x", "d": {`, "transactions[0].debtor"},
		{"unknown nested member", `"account": "DJ`, `"iban": "x", "account": "DJ`, "transactions[0].debtor.iban"},
		{"long member name", `"msg_id"`, `"` + strings.Repeat("k", 60) + `": 1, "msg_id"`, "(member)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(ok, c.from, c.to, 1)
			if in == ok {
				t.Fatalf("replacement %q not found", c.from)
			}
			if strings.Contains(c.name, "transactions object") {
				in = strings.Replace(in, "\n  ]\n}", "\n  ]}\n}", 1)
			}
			m, err := DecodeJSON([]byte(in))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SchemaError", err)
			}
			if se.Problems[0].Path != c.path || se.Problems[0].Code != ReasonFF01 {
				t.Fatalf("problem %+v, want path %q", se.Problems[0], c.path)
			}
			if c.name == "unknown member" && (m.MsgID != "CORPUS-JSON-001" || len(m.Transactions) != 1) {
				t.Fatalf("best-effort message %+v", m)
			}
		})
	}
	_, err := DecodeJSON([]byte(`{"msg_id":"M","transactions":[]}`))
	var se *SchemaError
	if !errors.As(err, &se) || se.Problems[0].Path != "transactions" {
		t.Fatalf("empty transactions: %v", err)
	}
	_, err = DecodeJSON([]byte(`{"msg_id":"M"}`))
	if !errors.As(err, &se) {
		t.Fatalf("no transactions: %v", err)
	}
}

func TestDecodeJSONValues(t *testing.T) {
	ok := validJSON(t)
	cases := []struct {
		name, from, to string
		want           string
		check          func(Message) bool
	}{
		{"exponent amount", `"amount_minor": 1500`, `"amount_minor": 1.5e3`, "", func(m Message) bool { return m.Transactions[0].AmountMinor == 1500 }},
		{"fractional amount", `"amount_minor": 1500`, `"amount_minor": 1500.25`, ReasonAM12, func(m Message) bool { return m.Transactions[0].AmountFraction == "25" }},
		{"null amount", `"amount_minor": 1500`, `"amount_minor": null`, ReasonAM12, nil},
		{"missing amount", `"amount_minor": 1500,`, ``, ReasonAM12, nil},
		{"negative amount", `"amount_minor": 1500`, `"amount_minor": -1500`, ReasonAM12, nil},
		{"huge amount", `"amount_minor": 1500`, `"amount_minor": 99999999999999999999`, ReasonAM12, nil},
		{"null msg id", `"msg_id": "CORPUS-JSON-001"`, `"msg_id": null`, ReasonCH16, nil},
		{"no settlement", `"settlement": {`, `"x_settlement": null, "s": {`, "", nil},
		{"unicode name", `"Amina Hassan"`, `"Āmina \u0048assan"`, "", func(m Message) bool { return m.Transactions[0].Debtor.Name == "Āmina Hassan" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(ok, c.from, c.to, 1)
			m, err := DecodeJSON([]byte(in))
			if c.name == "no settlement" {
				var se *SchemaError
				if !errors.As(err, &se) {
					t.Fatalf("unknown settlement member: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := Validate(m)
			if v[0].Reason.Code != c.want {
				t.Fatalf("reason %q (%s), want %q", v[0].Reason.Code, v[0].Reason.Detail, c.want)
			}
			if c.check != nil && !c.check(m) {
				t.Fatalf("decoded %+v", m.Transactions[0])
			}
		})
	}
}
