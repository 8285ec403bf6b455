package storetest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestEngineConformance holds every engine to what store.Engine and the
// named operations around it promise: each capability flag is checked by
// what it says about the engine's behaviour, each named operation by its
// result, on both engines.
func TestEngineConformance(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		eng := db.Engine()
		if _, err := db.Exec(ctx, "CREATE TABLE conformance (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, "CREATE INDEX conformance_v ON conformance (v)"); err != nil {
			t.Fatal(err)
		}

		t.Run("Name", func(t *testing.T) {
			if n := eng.Name(); n != "sqlite" && n != "postgres" {
				t.Fatalf("Name() = %q", n)
			}
		})

		t.Run("ConcurrentWriters", func(t *testing.T) {
			// A write transaction stays open while another writes a row of
			// its own: with concurrent writers the second commits
			// meanwhile; with one writer it waits for the first.
			hold, held := make(chan struct{}), make(chan struct{})
			first := make(chan error, 1)
			go func() {
				first <- db.InTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.Exec(ctx, "INSERT INTO conformance (id, v) VALUES (1, 1)"); err != nil {
						return err
					}
					close(held)
					<-hold
					return nil
				})
			}()
			<-held
			second := make(chan error, 1)
			go func() {
				second <- db.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, "INSERT INTO conformance (id, v) VALUES (2, 2)")
					return err
				})
			}()
			var secondDone bool
			select {
			case err := <-second:
				if err != nil {
					t.Fatal(err)
				}
				secondDone = true
			case <-time.After(300 * time.Millisecond):
			}
			close(hold)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			if !secondDone {
				if err := <-second; err != nil {
					t.Fatal(err)
				}
			}
			if secondDone != eng.ConcurrentWriters() {
				t.Fatalf("ConcurrentWriters() = %v, but a second writer committed while the first was open: %v", eng.ConcurrentWriters(), secondDone)
			}
		})

		t.Run("BalanceSlots", func(t *testing.T) {
			n := eng.BalanceSlots()
			switch {
			case !eng.ConcurrentWriters() && n != 1:
				t.Fatalf("BalanceSlots() = %d with one writer, want 1: there is nothing to spread", n)
			case eng.ConcurrentWriters() && (n < 2 || n > 64):
				t.Fatalf("BalanceSlots() = %d with concurrent writers, want a few dozen at most", n)
			}
		})

		t.Run("ForeignKeysLockParents", func(t *testing.T) {
			if !eng.ForeignKeysLockParents() {
				return // nothing observable: no other writer could wait for it
			}
			// An insert's foreign key check share-locks the parent: a
			// writer of the parent row cannot lock it before the insert's
			// transaction ends.
			for _, q := range []string{
				"CREATE TABLE conformance_parent (id BIGINT PRIMARY KEY)",
				"CREATE TABLE conformance_child (id BIGINT PRIMARY KEY, parent BIGINT NOT NULL REFERENCES conformance_parent (id))",
				"INSERT INTO conformance_parent (id) VALUES (1)",
			} {
				if _, err := db.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			errChecked := errors.New("checked")
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.Exec(ctx, "INSERT INTO conformance_child (id, parent) VALUES (1, 1)"); err != nil {
					return err
				}
				_, err := db.Exec(ctx, "SELECT id FROM conformance_parent WHERE id = 1"+tx.Dialect().ForUpdate()+" NOWAIT")
				if err == nil {
					t.Error("the parent row was free to lock while a child's insert was open")
				}
				return errChecked
			})
			if !errors.Is(err, errChecked) {
				t.Fatal(err)
			}
		})

		t.Run("ExplainPrefix", func(t *testing.T) {
			for _, analyze := range []bool{false, true} {
				rows, err := db.Query(ctx, eng.ExplainPrefix(analyze)+"SELECT id FROM conformance WHERE v = ?", 1)
				if err != nil {
					t.Fatalf("ExplainPrefix(%v): %v", analyze, err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n == 0 {
					t.Fatalf("ExplainPrefix(%v) showed no plan", analyze)
				}
			}
		})

		t.Run("IntSeriesAndLeftPad", func(t *testing.T) {
			rows, err := db.Query(ctx, eng.IntSeries(8, 11)+"SELECT "+eng.LeftPad("i", 4)+" FROM g ORDER BY i")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				got = append(got, s)
			}
			if want := []string{"0008", "0009", "0010", "0011"}; !slices.Equal(got, want) {
				t.Fatalf("IntSeries(8, 11) padded to 4: %v, want %v", got, want)
			}
		})

		t.Run("JSONMembers", func(t *testing.T) {
			doc := `{"plan":"gold","Plan":"GOLD","note":"\"plan\":\"gold\"","k\"q":"v"}`
			for _, c := range []struct {
				key, value string
				want       bool
			}{
				{"plan", "gold", true}, {"Plan", "GOLD", true}, {"plan", "GOLD", false}, {"PLAN", "gold", false},
				{"note", `"plan":"gold"`, true}, {`k"q`, "v", true}, {"missing", "", false},
			} {
				var n int
				if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM "+eng.JSONMembers("?")+" j WHERE j.key = ? AND j.value = ?", doc, c.key, c.value).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if got := n == 1; got != c.want {
					t.Errorf("member %q = %q: %d rows, want %v", c.key, c.value, n, c.want)
				}
			}
		})

		t.Run("IndexesForeignKeysSchema", func(t *testing.T) {
			// payment_intents_list is a CREATE INDEX of the migrations: listed
			// with a definition that makes it again; a primary key is not.
			rows, err := db.Query(ctx, eng.IndexesQuery())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for rows.Next() {
				var name, table, def string
				if err := rows.Scan(&name, &table, &def); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(name, "_pkey") || strings.HasPrefix(name, "sqlite_autoindex") {
					t.Errorf("IndexesQuery lists %s, a key's index DROP INDEX cannot drop", name)
				}
				if name == "payment_intents_list" {
					found = table == "payment_intents" && strings.Contains(strings.ToUpper(def), "CREATE INDEX")
				}
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if !found {
				t.Error("IndexesQuery does not list payment_intents_list on payment_intents with its CREATE INDEX")
			}
			if q := eng.ForeignKeysQuery(); q != "" {
				if n := storetest.Count(t, db, "SELECT COUNT(*) FROM ("+q+") f"); n == 0 {
					t.Error("ForeignKeysQuery answers no foreign key")
				}
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM ("+eng.SchemaQuery()+") s"); n < 20 {
				t.Errorf("SchemaQuery answers %d rows, want every index and key", n)
			}
			err = db.InTx(ctx, func(tx *store.Tx) error {
				if err := eng.BulkIndexBuild(ctx, tx); err != nil {
					return err
				}
				restore, err := eng.BulkLoad(ctx, tx)
				if err != nil {
					return err
				}
				return restore()
			})
			if err != nil {
				t.Fatal(err)
			}
		})

		t.Run("AnalyzeAndVacuum", func(t *testing.T) {
			if err := db.Analyze(ctx, "conformance", "payment_intents"); err != nil {
				t.Fatal(err)
			}
			if err := db.VacuumAnalyze(ctx, "conformance"); err != nil {
				t.Fatal(err)
			}
			if err := db.VacuumFull(ctx, "conformance"); err != nil {
				t.Fatalf("VacuumFull: %v", err)
			}
			var size int64
			if err := db.QueryRow(ctx, db.Engine().TableSizeQuery(), "payment_intents").Scan(&size); err != nil || size <= 0 {
				t.Fatalf("TableSizeQuery(payment_intents): %d, %v; want its bytes", size, err)
			}
			if err := db.FlushLog(ctx); err != nil {
				t.Fatalf("FlushLog: %v", err)
			}
		})

		t.Run("Tables", func(t *testing.T) {
			tables, err := db.Tables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"conformance", "payment_intents", "ledger_entries"} {
				if !slices.Contains(tables, want) {
					t.Fatalf("Tables() = %v, without %s", tables, want)
				}
			}
		})

		t.Run("PreferIndexes", func(t *testing.T) {
			if plan := storetest.QueryPlan(t, db, "SELECT id FROM conformance WHERE v = ?", 1); !strings.Contains(plan, "conformance_v") {
				t.Fatalf("with indexes preferred, the plan of a lookup by v does not use its index:\n%s", plan)
			}
		})

		t.Run("CheapRandomReads", func(t *testing.T) {
			errDone := errors.New("done")
			err := db.InTx(ctx, func(tx *store.Tx) error {
				applied, err := tx.CheapRandomReads(ctx)
				if err != nil {
					return err
				}
				if applied {
					// A setting that took must be visible in the transaction.
					var cost string
					if err := tx.QueryRow(ctx, "SELECT current_setting('random_page_cost')").Scan(&cost); err != nil {
						return err
					}
					if cost != "1.1" {
						t.Errorf("random_page_cost = %s after CheapRandomReads", cost)
					}
				}
				return errDone
			})
			if !errors.Is(err, errDone) {
				t.Fatal(err)
			}
		})

		t.Run("Writer", func(t *testing.T) {
			// Outside a unit, a transaction holds the writer from its start
			// (or there is no single writer): no late-writer verbs.
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, ok := tx.Writer(); ok {
					t.Error("a transaction outside a unit offers late-writer verbs")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// In a unit, only a single-writer engine takes the writer late.
			uctx, unit := db.NewUnit(ctx, store.UnitHooks{})
			defer unit.Rollback()
			errTaken := errors.New("taken")
			var entered bool
			err = unit.Work().InTx(uctx, func(tx *store.Tx) error {
				w, ok := tx.Writer()
				if ok == eng.ConcurrentWriters() {
					t.Fatalf("Writer() ok = %v with ConcurrentWriters() = %v", ok, eng.ConcurrentWriters())
				}
				if !ok {
					return nil
				}
				if err := tx.ExecLater(ctx, "INSERT INTO conformance (id, v) VALUES (11, 11)"); err != nil {
					return err
				}
				if !w.Enter("INSERT INTO conformance (id, v) VALUES (10, 10) ON CONFLICT (id) DO NOTHING", nil, errTaken, func() { entered = true }) {
					t.Fatal("Enter refused a transaction that had not taken the writer")
				}
				if err := w.TakeWriter(ctx); err != nil {
					return err
				}
				if !entered {
					t.Error("TakeWriter did not run the entry")
				}
				if w.Enter("INSERT INTO conformance (id, v) VALUES (12, 12)", nil, errTaken, nil) {
					t.Error("Enter accepted a transaction holding the writer")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := unit.Commit(ctx, nil); err != nil {
				t.Fatal(err)
			}
			want := 2 // the entry and the statement that waited for the writer
			if eng.ConcurrentWriters() {
				want = 0 // the unit wrote nothing
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM conformance WHERE id IN (10, 11)"); n != want {
				t.Fatalf("%d rows of the unit committed, want %d", n, want)
			}
		})
	})
}
