package main

import (
	"os"
	"testing"
	"time"

	"github.com/payd/payd/bench/harness"
)

// TestSmallAdvance runs the benchmark at a small size on each engine, so it
// keeps working as payd changes: 20 subscriptions seeded through the
// billing service, one month advanced through the API and payd's job
// runner, then measure's own check (2N paid invoices, one invoice.paid
// each, a balanced ledger). PostgreSQL runs when PAYD_TEST_DATABASE_URL is
// set (and must under CI=true).
func TestSmallAdvance(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			db := &harness.Database{Engine: engine}
			if engine == "postgres" {
				if db.URL = os.Getenv("PAYD_TEST_DATABASE_URL"); db.URL == "" {
					if os.Getenv("CI") == "true" {
						t.Fatal("PAYD_TEST_DATABASE_URL is not set (required under CI=true)")
					}
					t.Skip("PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable to run them")
				}
			}
			if err := measure(db, 20, 4, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
		})
	}
}
