package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
)

func init() {
	register(command{name: "reconcile", summary: "compare a provider's daily settlement report with the ledger", run: runReconcile, subs: []string{"report"}})
	describe("reconcile report", usage{
		synopsis: "--merchant ID --provider P --date YYYY-MM-DD [--json]",
		about:    "Compares a live provider's settlement report of one UTC day with the ledger; exit status 1 when they differ.",
		vars:     databaseVars,
	})
}

// runReconcile runs `payd reconcile report --merchant ID --provider P
// --date YYYY-MM-DD [--json]`: it prints the comparison and exits 1 when
// there is any discrepancy.
func runReconcile(ctx context.Context, e *env, args []string) error {
	fs := newFlags("reconcile report")
	merchant := fs.String("merchant", "", "merchant id")
	provider := fs.String("provider", "", "provider code")
	date := fs.String("date", "", "the UTC day, YYYY-MM-DD")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *merchant == "" || *provider == "" || *date == "" {
		return badUsage(e, fs, "--merchant, --provider and --date are required")
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	rep, err := m.Reconciliation().Settlement(ctx, *merchant, true, *provider, *date)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "%s %s: %d provider entries, %d ledger entries, %d matched, %d discrepancies\n",
			rep.Provider, rep.Date, rep.ProviderEntries, rep.LedgerEntries, rep.Matched, len(rep.Discrepancies))
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		if len(rep.Totals) > 0 {
			fmt.Fprintln(tw, "\ncurrency\tprovider payments\tledger payments\tprovider payouts\tledger payouts")
			for _, t := range rep.Totals {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", t.Currency, t.ProviderPaymentsMinor, t.LedgerPaymentsMinor, t.ProviderPayoutsMinor, t.LedgerPayoutsMinor)
			}
		}
		if len(rep.Discrepancies) > 0 {
			fmt.Fprintln(tw, "\nkind\treference\ttype\tcurrency\tprovider\tledger")
			for _, d := range rep.Discrepancies {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Kind, d.Reference, d.Type, d.Currency, amount(d.ProviderAmountMinor), amount(d.LedgerAmountMinor))
			}
		}
		tw.Flush()
	}
	if n := len(rep.Discrepancies); n > 0 {
		return fmt.Errorf("%d discrepancies", n)
	}
	return nil
}

func amount(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
