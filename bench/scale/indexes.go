package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/payd/payd/internal/store"
)

// seededTables are the tables the seeder fills row by row, whose secondary
// indexes a large seed drops before it loads them and builds after.
var seededTables = []string{"payment_intents", "events", "webhook_deliveries", "webhook_attempts",
	"idempotency_keys", "ledger_transactions", "ledger_entries"}

// index is one index of the schema as the migrations made it: its name,
// its table and the statement that creates it, as the database keeps it
// (SQLite: sqlite_master.sql, the migration's own text; PostgreSQL:
// pg_get_indexdef, the same text as pg_indexes.indexdef).
type index struct {
	name, table, def string
}

// secondaryIndexes are the indexes of tables that a DROP INDEX can drop:
// those made by CREATE INDEX, not the ones behind a primary key or a UNIQUE
// constraint (SQLite's autoindexes, PostgreSQL's constraint indexes),
// sorted by name. With no tables, those of every table.
func secondaryIndexes(ctx context.Context, db *store.DB, tables ...string) ([]index, error) {
	return definitions(ctx, db, db.Engine().IndexesQuery(), tables)
}

// definitions runs q, a query answering (name, table, definition), and
// returns its rows of tables (all with none), sorted by name.
func definitions(ctx context.Context, db *store.DB, q string, tables []string) ([]index, error) {
	rows, err := db.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []index
	for rows.Next() {
		var ix index
		if err := rows.Scan(&ix.name, &ix.table, &ix.def); err != nil {
			return nil, err
		}
		if len(tables) == 0 || contains(tables, ix.table) {
			out = append(out, ix)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, rows.Err()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// dropIndexes drops ixs, as pg_restore loads a table before it builds the
// table's indexes: one sort per index at the end costs far less than
// keeping every index in order row by row. It runs in one transaction,
// which on SQLite is on payd's writer connection, as every seeding
// statement is.
func dropIndexes(ctx context.Context, db *store.DB, ixs []index) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		for _, ix := range ixs {
			if _, err := tx.Exec(ctx, "DROP INDEX "+quoteIdent(ix.name)); err != nil {
				return fmt.Errorf("drop index %s: %w", ix.name, err)
			}
		}
		return nil
	})
}

// createIndexes builds ixs again from their own definitions, so they come
// back exactly as the migrations made them, in one transaction. PostgreSQL
// sorts each index in memory rather than in temporary files with a larger
// maintenance_work_mem (SET LOCAL: for this transaction only); SQLite's
// sorts are in memory already (payd opens it with temp_store=MEMORY).
func createIndexes(ctx context.Context, db *store.DB, ixs []index) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.Engine().BulkIndexBuild(ctx, tx); err != nil {
			return err
		}
		for _, ix := range ixs {
			if _, err := tx.Exec(ctx, ix.def); err != nil {
				return fmt.Errorf("create index %s: %w", ix.name, err)
			}
		}
		return nil
	})
}

// foreignKeys are the foreign keys of tables on PostgreSQL, sorted by
// name; def is the constraint's definition (pg_get_constraintdef). SQLite
// has none to drop: its foreign keys are part of the table's definition,
// and checking one is a lookup in the parent's primary key, in process.
func foreignKeys(ctx context.Context, db *store.DB, tables ...string) ([]index, error) {
	q := db.Engine().ForeignKeysQuery()
	if q == "" {
		return nil, nil
	}
	return definitions(ctx, db, q, tables)
}

// dropForeignKeys drops fks, as pg_restore adds foreign keys after the
// data: PostgreSQL checks a foreign key row by row with a query of its
// own (a trigger per inserted row), while ADD CONSTRAINT checks the whole
// table in one join.
func dropForeignKeys(ctx context.Context, db *store.DB, fks []index) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		for _, fk := range fks {
			if _, err := tx.Exec(ctx, "ALTER TABLE "+quoteIdent(fk.table)+" DROP CONSTRAINT "+quoteIdent(fk.name)); err != nil {
				return fmt.Errorf("drop constraint %s: %w", fk.name, err)
			}
		}
		return nil
	})
}

// addForeignKeys adds fks again from their own definitions, checking the
// seeded rows against them.
func addForeignKeys(ctx context.Context, db *store.DB, fks []index) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		for _, fk := range fks {
			if _, err := tx.Exec(ctx, "ALTER TABLE "+quoteIdent(fk.table)+" ADD CONSTRAINT "+quoteIdent(fk.name)+" "+fk.def); err != nil {
				return fmt.Errorf("add constraint %s: %w", fk.name, err)
			}
		}
		return nil
	})
}

// quoteIdent quotes an SQL identifier (the same on both engines).
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
