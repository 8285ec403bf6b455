package iso20022

import (
	"strconv"
	"testing"
)

// Benchmarks for the request path: decode + Validate of 1 and 10
// transactions, and the status report written back. Figures and the command
// are in docs/iso20022.md.

var benchSizes = []int{1, 10}

func BenchmarkDecodeValidateXML(b *testing.B) {
	for _, n := range benchSizes {
		body := renderPacs008(goodMessage(n), true)
		b.Run(strconv.Itoa(n)+"tx", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := DecodeXML(body)
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range Validate(m) {
					if !v.OK() {
						b.Fatal(v.Reason)
					}
				}
			}
		})
	}
}

func BenchmarkDecodeValidateJSON(b *testing.B) {
	for _, n := range benchSizes {
		body := renderJSON(goodMessage(n))
		b.Run(strconv.Itoa(n)+"tx", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := DecodeJSON(body)
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range Validate(m) {
					if !v.OK() {
						b.Fatal(v.Reason)
					}
				}
			}
		})
	}
}

func BenchmarkEncodeStatusReport(b *testing.B) {
	for _, n := range benchSizes {
		r := StatusReport{MsgID: "PAYD-RPT-0001", CreatedAt: reportTime, OriginalMsgID: "MSG-1", OriginalCreatedAt: reportTime}
		for i := 1; i <= n; i++ {
			s := tx(i, StatusACSC, StatusReason{})
			if i%3 == 0 {
				s = tx(i, StatusRJCT, NewStatusReason(ReasonAM04, "debtor agent settlement balance is short"))
			}
			r.Transactions = append(r.Transactions, s)
		}
		b.Run(strconv.Itoa(n)+"tx/xml", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeStatusReport(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(strconv.Itoa(n)+"tx/json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeStatusReportJSON(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
