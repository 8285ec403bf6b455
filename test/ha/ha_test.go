package ha

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// TestTopology builds the topology once and runs on it, in order: a
// failover (the primary's postmaster SIGKILLed under load), a planned
// switchover under load, and a point-in-time-restore drill.
func TestTopology(t *testing.T) {
	start := time.Now()
	tp := startTopology(t)
	// The first full backup, taken while the cluster is new.
	tp.backrest("--type=full", "backup")
	t.Logf("topology and first full backup ready in %v", time.Since(start).Round(time.Millisecond))
	// HAProxy (deploy/ha/haproxy.cfg, the alternative to the multi-host
	// URL) forwards to the primary; Switchover checks it follows.
	l, _ := tp.waitHealthy(time.Minute)
	tp.checkHAProxy(l)
	t.Run("Failover", func(t *testing.T) { failover(t, tp.on(t)) })
	t.Run("Switchover", func(t *testing.T) { switchover(t, tp.on(t)) })
	t.Run("PointInTimeRestore", func(t *testing.T) { pointInTimeRestore(t, tp.on(t)) })
}

// on is the topology reporting to the subtest t.
func (tp *topology) on(t *testing.T) *topology {
	c := *tp
	c.t = t
	return &c
}

// summary prints a line that go test shows without -v, and logs it.
func summary(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	fmt.Printf("ha: %s: %s\n", t.Name(), line)
}

// disturb runs do once the client has had a quarter of w's requests
// answered, in the background; the returned channel is closed once it ran
// (drive holds the last third of its requests until then).
func disturb(t *testing.T, f *fleet, w keyedload.Workload, do func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(60 * time.Second); f.c.Answered.Load() < int64(w.Requests()/4); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("a quarter of the requests not answered within 60 s")
				return
			}
		}
		do()
	}()
	return done
}

// failover: three payd processes under keyed load, the primary's
// postmaster SIGKILLed; Patroni promotes the synchronous standby (the crashed
// primary gives up the leader lock at once: primary_start_timeout 0) and
// payd follows it without a restart. Every acknowledged request's effect is
// on the new primary once, the book balances, every event is delivered, and
// the old primary rejoins as the synchronous standby.
func failover(t *testing.T, tp *topology) {
	f := startFleet(t, tp, "payd_failover")
	w := size()
	var old *member
	var killedAt time.Time
	killed := disturb(t, f, w, func() { old, killedAt = tp.killPrimary() })
	start := time.Now()
	res := f.drive("", w, 12, killed)
	elapsed := time.Since(start)
	<-killed
	if old == nil {
		t.FailNow()
	}
	var promoted *member
	waitFor(t, 30*time.Second, "a new primary", func() error {
		if promoted = tp.leader(); promoted == nil || promoted == old {
			return fmt.Errorf("leader %v", promoted)
		}
		return nil
	})
	first, ok := f.c.FirstWriteAfter(killedAt)
	if !ok {
		t.Fatal("no request sent after the kill was answered 2xx")
	}
	n503, other, samples := f.c.FiveCounts()
	summary(t, "%d keyed requests in %v, %d acknowledged; %s's postmaster killed, %s promoted; first write %v after the kill; %d answers 503, %d other 5xx",
		w.Requests(), elapsed.Round(time.Millisecond), res.Acked, old.name, promoted.name, first.Round(time.Millisecond), n503, other)
	if other > 0 {
		t.Errorf("%d answers were 5xx other than 503 (nothing answers 500 while no database accepts writes):\n%s", other, samples)
	}
	f.check(w, res)
	rejoin := time.Now()
	l, s := tp.waitHealthy(90 * time.Second)
	if l != promoted || s != old {
		t.Errorf("after the failover: leader %s, synchronous standby %s; want %s, %s", l.name, s.name, promoted.name, old.name)
	}
	summary(t, "lost 0, doubled 0 (checked); %s rejoined as the synchronous standby %v after the checks",
		old.name, time.Since(rejoin).Round(time.Millisecond))
}

// switchover: a planned switchover (Patroni's REST API) under keyed load
// answers no 5xx at all.
func switchover(t *testing.T, tp *topology) {
	f := startFleet(t, tp, "payd_switchover")
	w := size()
	leader, standby := tp.waitHealthy(60 * time.Second)
	var took time.Duration
	var at time.Time
	switched := disturb(t, f, w, func() {
		at = time.Now()
		body, _ := json.Marshal(map[string]string{"leader": leader.name, "candidate": standby.name})
		resp, err := http.Post("http://"+leader.restAddr+"/switchover", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Errorf("switchover: %v", err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("switchover: %d %s", resp.StatusCode, b)
			return
		}
		for deadline := time.Now().Add(30 * time.Second); tp.leader() != standby; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("%s not the leader 30 s after the switchover", standby.name)
				return
			}
		}
		took = time.Since(at)
	})
	start := time.Now()
	res := f.drive("", w, 12, switched)
	elapsed := time.Since(start)
	<-switched
	first, _ := f.c.FirstWriteAfter(at.Add(took))
	n503, other, samples := f.c.FiveCounts()
	summary(t, "%d keyed requests in %v, %d acknowledged; switchover %s → %s took %v (first write %v after); %d answers 503, %d other 5xx",
		w.Requests(), elapsed.Round(time.Millisecond), res.Acked, leader.name, standby.name, took.Round(time.Millisecond),
		first.Round(time.Millisecond), n503, other)
	if n503+other > 0 {
		t.Errorf("a planned switchover answered %d 503 and %d other 5xx; want none:\n%s", n503, other, samples)
	}
	f.check(w, res)
	tp.checkHAProxy(standby)
	tp.waitHealthy(90 * time.Second)
}

// pointInTimeRestore: an incremental backup, load, a time T noted between
// two answered payments, more load, then the repository restored to T on a
// new cluster (another data directory and port): payd ledger verify passes
// there, every payment answered before T is there and none answered after.
func pointInTimeRestore(t *testing.T, tp *topology) {
	f := startFleet(t, tp, "payd_pitr")
	w := size()
	w = keyedload.Workload{Intents: max(w.Intents/2, 10), Payouts: max(w.Payouts/2, 10)}
	before := f.drive("a-", w, 8, nil)
	tp.backrest("--type=incr", "backup")
	before2 := f.drive("b-", w, 8, nil)
	time.Sleep(500 * time.Millisecond)
	target := time.Now().UTC()
	time.Sleep(500 * time.Millisecond)
	after := f.drive("c-", w, 8, nil)
	// Switches to a new WAL segment and waits until it is archived: every
	// change above is in the repository.
	tp.backrest("check")
	info := tp.backrest("info")
	t.Logf("pgbackrest info:\n%s", info)

	dataDir := filepath.Join(tp.dir, "restored")
	addr := testutil.FreeAddr(t)
	targetArg := target.Format("2006-01-02 15:04:05.000000+00")
	restoreStart := time.Now()
	tp.backrest("--pg1-path="+dataDir, "--type=time", "--target="+targetArg, "--target-action=promote", "restore")
	sock := filepath.Join(tp.dir, "sock")
	// The restored configuration is the primary's (Patroni's): another
	// port, no archiving into the repository the cluster came from, no
	// synchronous standby to wait for, and its own hba and ident files.
	opts := strings.Join([]string{"-c port=" + port(addr), "-c listen_addresses=127.0.0.1", "-c unix_socket_directories=" + sock,
		"-c archive_mode=off", "-c synchronous_standby_names=", "-c hba_file=" + filepath.Join(dataDir, "pg_hba.conf"),
		"-c ident_file=" + filepath.Join(dataDir, "pg_ident.conf"), "-c cluster_name=restored"}, " ")
	tp.run(pgBin+"/pg_ctl", "-D", dataDir, "-o", opts, "-l", filepath.Join(tp.dir, "log", "restored.log"), "-w", "-t", "60", "start")
	t.Cleanup(func() { tp.try(pgBin+"/pg_ctl", "-D", dataDir, "-m", "immediate", "stop") })
	url := fmt.Sprintf("postgres://postgres:%s@%s/payd_pitr?sslmode=disable", tp.password, addr)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, 60*time.Second, "the restored cluster to be promoted", func() error {
		var rec bool
		if err := db.QueryRow("SELECT pg_is_in_recovery()").Scan(&rec); err != nil {
			return err
		}
		if rec {
			return fmt.Errorf("still in recovery")
		}
		return nil
	})
	restored := time.Since(restoreStart)
	// payd ledger verify on the restored database.
	p := testutil.NewProcess(t, testutil.SharedPayd(t), "PAYD_DATABASE_URL="+url, "PAYD_SECRETS_KEY="+secretsKey, "PAYD_LOG_LEVEL=warn")
	out := p.Run("ledger", "verify")
	t.Logf("payd ledger verify on the restored cluster: %s", bytes.TrimSpace(out))
	present := func(ids map[string]string, table string) (n int) {
		for _, id := range ids {
			var c int
			if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE id = $1", id).Scan(&c); err != nil {
				t.Fatal(err)
			}
			n += c
		}
		return n
	}
	for _, r := range []struct {
		what string
		res  *keyedload.Result
		want bool
	}{{"answered before the incremental backup", before, true}, {"answered after it, before T", before2, true},
		{"answered after T", after, false}} {
		pi, po := present(r.res.Intents, "payment_intents"), present(r.res.Payouts, "payouts")
		want := 0
		if r.want {
			want = len(r.res.Intents) + len(r.res.Payouts)
		}
		if pi+po != want {
			t.Errorf("payments %s: %d of %d in the restored cluster, want %d", r.what, pi+po, len(r.res.Intents)+len(r.res.Payouts), want)
		}
	}
	summary(t, "restored to %s (between two answered payments) in %v: %d payments before T all there, %d after T none there; ledger verify passed",
		targetArg, restored.Round(time.Millisecond), len(before.Intents)+len(before.Payouts)+len(before2.Intents)+len(before2.Payouts),
		len(after.Intents)+len(after.Payouts))
	if _, err := os.Stat(dataDir); err != nil {
		t.Fatal(err)
	}
}
