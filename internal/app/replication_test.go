package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestWarnsWithoutSynchronousStandby: serve warns once at start that
// answered payments can be lost when its PostgreSQL primary has no
// synchronous standby (the shared test server has none) or commits without
// waiting for one (synchronous_commit=off), and says nothing on SQLite.
// test/ha checks the other side: no warning on a primary with a
// synchronous standby.
func TestWarnsWithoutSynchronousStandby(t *testing.T) {
	t.Parallel()
	const warning = "answered payments can be lost if the primary fails"
	key := map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("5a", 32), "PAYD_DEMO": "false"}
	run := func(t *testing.T, dbURL string) string {
		t.Helper()
		m := mainFor(t, dbURL, key, nil)
		var log testutil.SyncBuffer
		m.Logger = app.NewLogger(&log, "info")
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		m.Close()
		return log.String()
	}
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			dbURL := storetest.MigratedURL(t, engine)
			log := run(t, dbURL)
			want := 0
			if engine == storetest.Postgres {
				want = 1
			}
			if n := strings.Count(log, warning); n != want {
				t.Errorf("%d warnings at serve start, want %d; log:\n%s", n, want, log)
			}
			if engine == storetest.Postgres {
				if !strings.Contains(log, "synchronous_standby_names") {
					t.Errorf("the warning does not name the setting; log:\n%s", log)
				}
				// A session that commits without waiting: warned too.
				log := run(t, dbURL+"&options=-c%20synchronous_commit%3Doff")
				if n := strings.Count(log, warning); n != 1 {
					t.Errorf("synchronous_commit=off: %d warnings, want 1; log:\n%s", n, log)
				}
			}
		})
	}
}
