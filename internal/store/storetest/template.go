package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/internal/store"
)

// Migrating a database costs about a second on PostgreSQL and tens of
// milliseconds on SQLite; hundreds of tests each start from a fresh one. So
// each engine is migrated once into a template, and every test gets a copy.

var sqliteTmpl struct {
	once sync.Once
	path string
	err  error
}

// sqliteTemplate returns the path of a migrated SQLite file, one per set of
// migrations (named after their hash) in the temporary directory, shared by
// test processes: built under a temporary name, closed (its WAL
// checkpointed) and renamed into place, so a reader never sees it half made.
func sqliteTemplate() (string, error) {
	sqliteTmpl.once.Do(func() {
		sqliteTmpl.path, sqliteTmpl.err = buildSQLiteTemplate()
	})
	return sqliteTmpl.path, sqliteTmpl.err
}

func buildSQLiteTemplate() (string, error) {
	sum, err := migrationsHash(store.SQLite)
	if err != nil {
		return "", err
	}
	path := filepath.Join(os.TempDir(), "payd-test-template-"+sum+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	dir, err := os.MkdirTemp("", "payd-sqlite-template-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "template.db")
	db, err := store.Open(context.Background(), "sqlite:"+tmp)
	if err != nil {
		return "", err
	}
	if err := db.Migrate(context.Background()); err != nil {
		db.Close()
		return "", err
	}
	if err := db.Close(); err != nil {
		return "", err
	}
	if st, err := os.Stat(tmp + "-wal"); err == nil && st.Size() > 0 {
		return "", fmt.Errorf("template WAL not checkpointed (%d bytes)", st.Size())
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

// migrationsHash names an engine's set of migrations.
func migrationsHash(d store.Dialect) (string, error) {
	migs, err := d.Migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range migs {
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00", m.Version, m.Name, m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var pgTmpl struct {
	once sync.Once
	name string
	err  error
}

// templateLockID serialises building the PostgreSQL template between test
// processes (go test runs packages in parallel).
const templateLockID = 7261737

// postgresTemplate returns the name of a database holding every PostgreSQL
// migration, named after their hash, building it if no process has yet.
// Databases left by test processes that have died are dropped on the way.
func postgresTemplate(base string) (string, error) {
	pgTmpl.once.Do(func() {
		pgTmpl.name, pgTmpl.err = buildPostgresTemplate(base)
	})
	return pgTmpl.name, pgTmpl.err
}

func buildPostgresTemplate(base string) (string, error) {
	sum, err := migrationsHash(store.Postgres)
	if err != nil {
		return "", err
	}
	name := "payd_tmpl_" + sum

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", templateLockID)

	go dropOrphans(base)

	var exists int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_database WHERE datname = $1", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists > 0 {
		return name, nil
	}
	building := name + "_building"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + building
	db, err := store.Open(ctx, u.String())
	if err != nil {
		return "", err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return "", err
	}
	db.Close()
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		return "", err
	}
	return name, nil
}

// dropOrphans drops per-test databases whose test process is gone (ended
// before its drops finished, or killed). Their names carry its process id.
func dropOrphans(base string) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer admin.Close()
	rows, err := admin.Query("SELECT datname FROM pg_database WHERE datname LIKE 'payd\\_t\\_%'")
	if err != nil {
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	rows.Close()
	for _, n := range names {
		parts := strings.SplitN(strings.TrimPrefix(n, "payd_t_"), "_", 2)
		pid, err := strconv.Atoi(parts[0])
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		admin.Exec("DROP DATABASE IF EXISTS " + n + " WITH (FORCE)")
	}
}

// dropDatabase drops one per-test database.
func dropDatabase(base, name string) {
	a, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer a.Close()
	a.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
}

// createFromTemplate copies the template. PostgreSQL refuses while another
// session is connected to the template (a builder just closing): retry briefly.
func createFromTemplate(admin *sql.DB, name, tmpl string) error {
	var err error
	for i := 0; i < 50; i++ {
		_, err = admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + tmpl + " STRATEGY WAL_LOG")
		if err == nil || !strings.Contains(err.Error(), "being accessed by other users") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
