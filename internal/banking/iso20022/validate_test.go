package iso20022

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// goodMessage is a profile-valid message with n transactions.
func goodMessage(n int) Message {
	m := Message{
		MsgID:            "MSG-1",
		CreatedAtText:    "2026-03-14T09:26:50Z",
		CreatedAt:        time.Date(2026, 3, 14, 9, 26, 50, 0, time.UTC),
		SettlementMethod: "CLRG",
		DeclaredTxCount:  strconv.Itoa(n),
	}
	for i := 1; i <= n; i++ {
		m.Transactions = append(m.Transactions, Transaction{
			UETR:          uetrN(i),
			EndToEndID:    "E2E",
			AmountMinor:   1500,
			Currency:      "DJF",
			ChargeBearer:  "SLEV",
			Debtor:        Party{Name: "Amina Hassan", Account: "DJ2100010000000154000100186"},
			DebtorAgent:   "BANKDJJDXXX",
			Creditor:      Party{Name: "Omar Farah", Account: "0012345678"},
			CreditorAgent: "CACEDJJD",
		})
	}
	return m
}

func TestValidateRules(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Message)
		want   string // reason of transaction 0; "" = ok
		path   string
	}{
		{"valid", func(*Message) {}, "", ""},
		{"msg id missing", func(m *Message) { m.MsgID = "" }, ReasonCH16, "GrpHdr/MsgId"},
		{"msg id 35", func(m *Message) { m.MsgID = strings.Repeat("m", 35) }, "", ""},
		{"msg id 36", func(m *Message) { m.MsgID = strings.Repeat("m", 36) }, ReasonCH16, "GrpHdr/MsgId"},
		{"timestamp missing", func(m *Message) { m.CreatedAtText = "" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp garbage", func(m *Message) { m.CreatedAtText = "yesterday" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp no zone", func(m *Message) { m.CreatedAtText = "2026-03-14T09:26:50" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp +03:00", func(m *Message) { m.CreatedAtText = "2026-03-14T12:26:50+03:00" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp one-digit hour", func(m *Message) { m.CreatedAtText = "2026-03-14T9:26:50Z" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp year 0", func(m *Message) { m.CreatedAtText = "0000-03-14T09:26:50Z" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp lower-case z", func(m *Message) { m.CreatedAtText = "2026-03-14T09:26:50z" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp 30 February", func(m *Message) { m.CreatedAtText = "2026-02-30T09:26:50Z" }, ReasonCH16, "GrpHdr/CreDtTm"},
		{"timestamp +00:00", func(m *Message) { m.CreatedAtText = "2026-03-14T09:26:50.5+00:00" }, "", ""},
		{"settlement INDA", func(m *Message) { m.SettlementMethod = "INDA" }, ReasonCH16, "GrpHdr/SttlmInf/SttlmMtd"},
		{"NbOfTxs wrong", func(m *Message) { m.DeclaredTxCount = "2" }, ReasonCH16, "GrpHdr/NbOfTxs"},
		{"NbOfTxs with leading zero", func(m *Message) { m.DeclaredTxCount = "01" }, "", ""},
		{"UETR missing", func(m *Message) { m.Transactions[0].UETR = "" }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/UETR"},
		{"UETR v1", func(m *Message) { m.Transactions[0].UETR = "6ba7b810-9dad-11d1-80b4-00c04fd430c8" }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/UETR"},
		{"UETR upper case", func(m *Message) { m.Transactions[0].UETR = strings.ToUpper(uetrN(1)) }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/UETR"},
		{"UETR bad variant", func(m *Message) { m.Transactions[0].UETR = "7b5e1c2a-3f4d-4a6b-7c8d-000000000001" }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/UETR"},
		{"end-to-end missing", func(m *Message) { m.Transactions[0].EndToEndID = "" }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/EndToEndId"},
		{"end-to-end 36", func(m *Message) { m.Transactions[0].EndToEndID = strings.Repeat("e", 36) }, ReasonCH16, "CdtTrfTxInf[1]/PmtId/EndToEndId"},
		{"charge bearer SHAR", func(m *Message) { m.Transactions[0].ChargeBearer = "SHAR" }, ReasonCH16, "CdtTrfTxInf[1]/ChrgBr"},
		{"remittance 140", func(m *Message) { m.Transactions[0].RemittanceInfo = strings.Repeat("ü", 140) }, "", ""},
		{"remittance 141", func(m *Message) { m.Transactions[0].RemittanceInfo = strings.Repeat("r", 141) }, ReasonCH16, "CdtTrfTxInf[1]/RmtInf/Ustrd"},
		{"debtor name missing", func(m *Message) { m.Transactions[0].Debtor.Name = " " }, ReasonCH16, "CdtTrfTxInf[1]/Dbtr/Nm"},
		{"creditor name 141", func(m *Message) { m.Transactions[0].Creditor.Name = strings.Repeat("n", 141) }, ReasonCH16, "CdtTrfTxInf[1]/Cdtr/Nm"},
		{"debtor IBAN bad check", func(m *Message) {
			m.Transactions[0].Debtor.Account, m.Transactions[0].Debtor.IBAN = "DJ2200010000000154000100186", true
		}, ReasonAC01, "CdtTrfTxInf[1]/DbtrAcct/Id"},
		{"debtor Othr of IBAN shape, not an IBAN", func(m *Message) {
			m.Transactions[0].Debtor.Account, m.Transactions[0].Debtor.IBAN = "US88664715164441", false
		}, "", ""},
		{"creditor IBAN GB ok", func(m *Message) {
			m.Transactions[0].Creditor.Account, m.Transactions[0].Creditor.IBAN = "GB82WEST12345698765432", true
		}, "", ""},
		{"creditor IBAN lower case ok", func(m *Message) { m.Transactions[0].Creditor.Account = "GB82west12345698765432" }, "", ""},
		{"creditor account missing", func(m *Message) { m.Transactions[0].Creditor.Account = "" }, ReasonAC01, "CdtTrfTxInf[1]/CdtrAcct/Id"},
		{"creditor account 35", func(m *Message) { m.Transactions[0].Creditor.Account = strings.Repeat("1", 35) }, ReasonAC01, "CdtTrfTxInf[1]/CdtrAcct/Id"},
		{"other identifier", func(m *Message) { m.Transactions[0].Creditor.Account = "ACC-0001/77" }, "", ""},
		{"debtor BIC malformed", func(m *Message) { m.Transactions[0].DebtorAgent = "BANKDJ" }, ReasonRC01, "CdtTrfTxInf[1]/DbtrAgt/FinInstnId/BICFI"},
		{"creditor BIC lower case", func(m *Message) { m.Transactions[0].CreditorAgent = "cacedjjd" }, ReasonRC01, "CdtTrfTxInf[1]/CdtrAgt/FinInstnId/BICFI"},
		{"creditor BIC 9", func(m *Message) { m.Transactions[0].CreditorAgent = "CACEDJJDX" }, ReasonRC01, "CdtTrfTxInf[1]/CdtrAgt/FinInstnId/BICFI"},
		{"creditor BIC missing", func(m *Message) { m.Transactions[0].CreditorAgent = "" }, ReasonRC01, "CdtTrfTxInf[1]/CdtrAgt/FinInstnId/BICFI"},
		{"currency EUR", func(m *Message) { m.Transactions[0].Currency = "EUR" }, ReasonAM03, "CdtTrfTxInf[1]/IntrBkSttlmAmt/@Ccy"},
		{"currency missing", func(m *Message) { m.Transactions[0].Currency = "" }, ReasonAM03, "CdtTrfTxInf[1]/IntrBkSttlmAmt/@Ccy"},
		{"fractional DJF", func(m *Message) { m.Transactions[0].AmountFraction = "5" }, ReasonAM12, "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"amount issue", func(m *Message) { m.Transactions[0].AmountIssue = "amount is negative" }, ReasonAM12, "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"zero", func(m *Message) { m.Transactions[0].AmountMinor = 0 }, ReasonAM01, "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"zero and fractional is AM12", func(m *Message) { m.Transactions[0].AmountMinor = 0; m.Transactions[0].AmountFraction = "5" }, ReasonAM12, "CdtTrfTxInf[1]/IntrBkSttlmAmt"},
		{"group rule first", func(m *Message) { m.SettlementMethod = "COVE"; m.Transactions[0].Currency = "EUR" }, ReasonCH16, "GrpHdr/SttlmInf/SttlmMtd"},
		{"CH16 before AC01", func(m *Message) { m.Transactions[0].ChargeBearer = ""; m.Transactions[0].Debtor.Account = "" }, ReasonCH16, "CdtTrfTxInf[1]/ChrgBr"},
		{"AC01 before RC01", func(m *Message) { m.Transactions[0].CreditorAgent = ""; m.Transactions[0].Debtor.Account = "" }, ReasonAC01, "CdtTrfTxInf[1]/DbtrAcct/Id"},
		{"RC01 before AM03", func(m *Message) { m.Transactions[0].CreditorAgent = "x"; m.Transactions[0].Currency = "EUR" }, ReasonRC01, "CdtTrfTxInf[1]/CdtrAgt/FinInstnId/BICFI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := goodMessage(1)
			c.change(&m)
			v := Validate(m)
			if len(v) != 1 {
				t.Fatalf("%d verdicts", len(v))
			}
			if v[0].Reason.Code != c.want {
				t.Fatalf("reason %q (%s), want %q", v[0].Reason.Code, v[0].Reason.Detail, c.want)
			}
			if c.want == "" {
				if !v[0].OK() || len(v[0].Problems) != 0 {
					t.Fatalf("not OK: %+v", v[0])
				}
				return
			}
			if v[0].Problems[0].Path != c.path || v[0].Reason.Text != ReasonText(c.want) || !strings.HasPrefix(v[0].Reason.Detail, c.path+": ") {
				t.Fatalf("verdict %+v, want path %q", v[0], c.path)
			}
		})
	}
}

func TestValidateMultiAndDuplicates(t *testing.T) {
	m := goodMessage(3)
	m.Transactions[1].Currency = "USD"
	m.Transactions[2].UETR = m.Transactions[0].UETR
	v := Validate(m)
	if !v[0].OK() || v[1].Reason.Code != ReasonAM03 || v[2].Reason.Code != ReasonDUPL {
		t.Fatalf("verdicts %+v", v)
	}
	if v[1].Index != 1 || v[1].UETR != m.Transactions[1].UETR || v[1].EndToEndID != "E2E" {
		t.Fatalf("verdict identity %+v", v[1])
	}
	m.MsgID = ""
	for _, x := range Validate(m) {
		if x.Reason.Code != ReasonCH16 {
			t.Fatalf("a group rule must reject every transaction: %+v", x)
		}
	}
	if len(Validate(Message{})) != 0 {
		t.Fatal("no transactions, no verdicts")
	}
}

func TestIdentifiers(t *testing.T) {
	ibans := map[string]bool{
		"DJ2100010000000154000100186":      true,
		"GB82WEST12345698765432":           true,
		"DE89370400440532013000":           true,
		"FR1420041010050500013M02606":      true,
		"GB82WEST12345698765431":           false,
		"GB82 WEST 1234 5698 7654 32":      false,
		"":                                 false,
		"XX00":                             false,
		"NO9386011117947":                  true,
		"LC55HEMM000100010012001200023015": true,
	}
	for s, want := range ibans {
		if got := ValidIBAN(s); got != want {
			t.Errorf("ValidIBAN(%q) = %v", s, got)
		}
	}
	bics := map[string]bool{"BANKDJJD": true, "BANKDJJDXXX": true, "1234DJJD": true, "BANKD1JD": false, "BANKDJJDXX": false, "bankdjjd": false, "": false}
	for s, want := range bics {
		if got := ValidBIC(s); got != want {
			t.Errorf("ValidBIC(%q) = %v", s, got)
		}
	}
	if !ValidUETR("eb6305c9-1f7f-49de-aed0-16487c27b42d") || ValidUETR("eb6305c9-1f7f-59de-aed0-16487c27b42d") || ValidUETR("EB6305C9-1F7F-49DE-AED0-16487C27B42D") {
		t.Error("ValidUETR")
	}
}

func TestAmountReading(t *testing.T) {
	major := []struct {
		text, ccy string
		minor     int64
		fraction  string
		issue     bool
	}{
		{"1500", "DJF", 1500, "", false},
		{"1500.00", "DJF", 1500, "", false},
		{"1500.5", "DJF", 1500, "5", false},
		{"0.25", "DJF", 0, "25", false},
		{"12.34", "EUR", 1234, "", false},
		{"12.345", "EUR", 1234, "5", false},
		{"12.3", "EUR", 1230, "", false},
		{"1.234", "KWD", 1234, "", false},
		{" 7 ", "DJF", 7, "", false},
		{"999999999999999999", "DJF", 999999999999999999, "", false},
		{"9223372036854775807", "DJF", 9223372036854775807, "", false},
		{"9223372036854775808", "DJF", 0, "", true},
		{"999999999999999999", "EUR", 0, "", true},
		{"-1", "DJF", 0, "", true},
		{"", "DJF", 0, "", true},
		{"1e3", "DJF", 0, "", true},
		{"0", "DJF", 0, "", false},
	}
	for _, c := range major {
		r := readMajorAmount(c.text, c.ccy)
		if r.minor != c.minor || r.fraction != c.fraction || (r.issue != "") != c.issue {
			t.Errorf("readMajorAmount(%q, %s) = %+v", c.text, c.ccy, r)
		}
	}
	minor := []struct {
		literal  string
		minor    int64
		fraction string
		issue    bool
	}{
		{"1500", 1500, "", false},
		{"1500.0", 1500, "", false},
		{"1500.5", 1500, "5", false},
		{"1.5e3", 1500, "", false},
		{"15E2", 1500, "", false},
		{"15e-1", 1, "5", false},
		{"1e-41", 0, "", true},
		{"1e41", 0, "", true},
		{"1e18", 1000000000000000000, "", false},
		{"1e19", 0, "", true},
		{"-0", 0, "", false},
		{"-5", 0, "", true},
		{"05", 0, "", true},
		{"\"5\"", 0, "", true},
		{"0.000", 0, "", false},
	}
	for _, c := range minor {
		r := readMinorAmount(c.literal)
		if r.minor != c.minor || r.fraction != c.fraction || (r.issue != "") != c.issue {
			t.Errorf("readMinorAmount(%q) = %+v", c.literal, r)
		}
	}
	if CurrencyExponent("DJF") != 0 || CurrencyExponent("EUR") != 2 || CurrencyExponent("BHD") != 3 {
		t.Error("CurrencyExponent")
	}
}
