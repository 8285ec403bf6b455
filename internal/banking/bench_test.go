package banking

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payd/payd/internal/banking/iso20022"
)

// BenchmarkMessageCPU is the work POST /banking/v1/transfers does per
// message outside the database: read (security and schema pass, typed
// decode), the pure rules, the content hash for duplicate detection, and
// the pacs.002 in the request's format. The round-trip message of the
// iso20022 testdata has three transactions (one AppHdr envelope in XML).
func BenchmarkMessageCPU(b *testing.B) {
	dir := filepath.Join("iso20022", "testdata", "roundtrip")
	for _, c := range []struct{ name, file, contentType string }{
		{"xml", "transfer.xml", "application/xml"},
		{"json", "transfer.json", "application/json"},
	} {
		body, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				format, msg, schemaErr, err := ReadTransferMessage(c.contentType, body)
				if err != nil || schemaErr != nil {
					b.Fatal(err, schemaErr)
				}
				rep := iso20022.StatusReport{MsgID: "psr_bench", CreatedAt: now, OriginalMsgID: msg.MsgID, OriginalCreatedAt: msg.CreatedAt}
				for _, v := range iso20022.Validate(msg) {
					st := iso20022.TxStatus{UETR: v.UETR, EndToEndID: v.EndToEndID, Status: StatusACSC, Reason: v.Reason}
					if !v.OK() {
						st.Status = StatusRJCT
					}
					rep.Transactions = append(rep.Transactions, st)
				}
				if _, err := contentHash(msg); err != nil {
					b.Fatal(err)
				}
				if format == FormatXML {
					_, err = iso20022.EncodeStatusReport(rep)
				} else {
					_, err = iso20022.EncodeStatusReportJSON(rep)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
