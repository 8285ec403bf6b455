package payouts

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/payd/payd/internal/screening"
	"github.com/payd/payd/internal/testutil"
)

var fullList struct {
	sync.Once
	l   *screening.List
	err error
}

// BenchmarkServiceScreen screens one recipient name against the full 2021
// SDN list through the service, as every payout does (go run ./bench/payouts
// reports the percentiles).
func BenchmarkServiceScreen(b *testing.B) {
	path := testutil.LargeData(b, "sanctions", "ofac_full_2021", "sdn.csv")
	fullList.Do(func() { fullList.l, fullList.err = screening.Load(context.Background(), path) })
	if fullList.err != nil {
		b.Fatal(fullList.err)
	}
	svc := New(Config{Screener: screening.NewScreenerFromList(fullList.l, screening.Options{})})
	for _, c := range []struct {
		kind  string
		names []string
	}{
		{"hit", []string{"Osama bin Laden", "Nicolas Maduro Moros", "Banco Nacional de Cuba", "Igor Strelkov"}},
		{"clear", []string{"Fatouma Ahmed Houssein", "Abebe Kebede Tesfaye", "Mohamed Ali Hassan Youssouf", "Kadra Waberi"}},
	} {
		b.Run(c.kind, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				svc.Screen(c.names[i%len(c.names)])
				i++
			}
		})
	}
}

// BenchmarkParseRowsCSV parses and validates a 10,000-row variant B CSV.
func BenchmarkParseRowsCSV(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(rowsHeader)
	for i := 1; i <= MaxBatchRows; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&sb, ",DJ%08d,%d,bank_b,ref-%d,June salary\n", i, 100+i%50, i)
		} else {
			fmt.Fprintf(&sb, "+25377%06d,,%d,wallet_b,ref-%d,June salary\n", i, 100+i%50, i)
		}
	}
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRowsCSV(body, "DJF", "June", false); err != nil {
			b.Fatal(err)
		}
	}
}
