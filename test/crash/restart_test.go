package crash

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// TestDatabaseRestarted: three processes on PostgreSQL while the database
// server itself restarts, twice, in the middle of the load: every connection
// of every process ends, and for the seconds a restart takes new ones are
// refused. A request that lost its connection before anything of it
// committed pauses and runs again for up to 10 s, so no request answers 5xx,
// no key stays locked, and every key has one effect.
//
// It restarts the server PAYD_TEST_DATABASE_URL names, which every other
// test package shares, so it runs only when asked:
// PAYD_CRASH_RESTART_DB holds the shell command that restarts that server
// (here `pg_ctlcluster --skip-systemctl-redirect 15 main restart`). Never
// set it in CI, where other packages' tests run against the same server.
func TestDatabaseRestarted(t *testing.T) {
	restart := os.Getenv("PAYD_CRASH_RESTART_DB")
	if restart == "" {
		t.Skip("restarts the database server: set PAYD_CRASH_RESTART_DB='<command that restarts it>' to run (never in CI)")
	}
	cl := startCluster(t, storetest.Postgres, 3)
	cl.fund(t)
	// 3,400 keyed requests: about 3 s of work here, so that both restarts
	// (2.5 s each here) fall in the middle of it.
	w := keyedload.Workload{Intents: 1200, Payouts: 1000}
	var took []time.Duration
	res := cl.driveWhile(t, w, func(ctx context.Context) string {
		for range 2 {
			select {
			case <-ctx.Done():
				return fmt.Sprintf("restarts taking %v, then the load was over", took)
			case <-time.After(300 * time.Millisecond):
			}
			start := time.Now()
			if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
				t.Errorf("restart: %v: %s", err, out)
				break
			}
			took = append(took, time.Since(start))
		}
		return fmt.Sprintf("restarts taking %v", took)
	})
	if len(took) < 2 {
		t.Errorf("%d restarts while the requests ran, want 2 (make the load longer)", len(took))
	}
	cl.checkRodeOut(t, w, res)
}
