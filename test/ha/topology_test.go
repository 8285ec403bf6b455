// Package ha runs payd on the production database topology: a PostgreSQL
// primary and a synchronous standby managed by Patroni, its leader lock in
// etcd, backups and WAL archives in a pgBackRest repository, every process
// on loopback ports in a temporary directory and configured from the files
// in deploy/ha (the ones docs/operations.md shows). Three real `payd serve`
// processes reach the database through a URL listing both members with
// target_session_attrs=read-write.
//
// It needs the Debian packages patroni, etcd-server, pgbackrest, haproxy and
// postgresql-15, and root (the database processes run as the postgres OS
// user). Outside CI a missing package skips the tests with how to install
// it; under CI=true it fails them. The default load is small (CI);
// go test ./test/ha -args -ha.long runs a longer one.
package ha

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/payd/payd/internal/testutil"
)

var long = flag.Bool("ha.long", false, "run test/ha with a longer load (1,500 keyed requests per scenario)")

const pgBin = "/usr/lib/postgresql/15/bin"

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveSharedPayd()
	os.Exit(code)
}

// requirements skips (or, under CI=true, fails) the test when a package of
// the topology is not installed or the test cannot run processes as the
// postgres OS user; it returns that user.
func requirements(t *testing.T) *user.User {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped with -short: test/ha builds a Patroni cluster and takes minutes")
	}
	var missing []string
	for _, c := range []struct{ file, pkg string }{
		{"patroni", "patroni"}, {"patronictl", "patroni"}, {"etcd", "etcd-server"}, {"pgbackrest", "pgbackrest"},
		{"haproxy", "haproxy"}, {pgBin + "/initdb", "postgresql-15"},
	} {
		if _, err := exec.LookPath(c.file); err != nil {
			missing = append(missing, c.pkg)
		}
	}
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if len(missing) > 0 {
		fail("the HA topology's packages are not installed (apt-get install -y %s)", strings.Join(missing, " "))
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		fail("the HA topology's packages are not installed (apt-get install -y postgresql-15): no postgres OS user")
	}
	if os.Geteuid() != 0 {
		fail("test/ha runs PostgreSQL as the postgres OS user: run it as root")
	}
	return u
}

// topology is etcd and two Patroni members on loopback ports under dir.
type topology struct {
	t       *testing.T
	dir     string
	pg      *user.User
	uid     int
	gid     int
	etcd    *daemon
	members []*member
	// haproxy forwards haproxyAddr to the member whose Patroni answers
	// /primary (deploy/ha/haproxy.cfg).
	haproxy     *daemon
	haproxyAddr string
	// pgbackrest is the rendered pgbackrest.conf.
	pgbackrest string
	password   string
}

type member struct {
	name     string
	pgAddr   string
	restAddr string
	dataDir  string
	config   string
	proc     *daemon
}

// daemon is a long-running process of the topology, run as the postgres OS
// user in its own process group, its output in a log file.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (tp *topology) start(name string, args ...string) *daemon {
	tp.t.Helper()
	d := &daemon{name: name, log: filepath.Join(tp.dir, "log", name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(d.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		tp.t.Fatal(err)
	}
	d.cmd = exec.Command(args[0], args[1:]...)
	d.cmd.Stdout, d.cmd.Stderr = f, f
	d.cmd.Dir = tp.dir
	d.cmd.Env = tp.env()
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: uint32(tp.uid), Gid: uint32(tp.gid)}}
	if err := d.cmd.Start(); err != nil {
		f.Close()
		tp.t.Fatalf("%s: %v", name, err)
	}
	go func() {
		d.cmd.Wait()
		f.Close()
		close(d.done)
	}()
	return d
}

// stop sends SIGTERM to the daemon and waits up to d, then kills its
// process group.
func (d *daemon) stop(within time.Duration) {
	select {
	case <-d.done:
	default:
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(within):
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.done
		}
	}
}

func (d *daemon) tail() string {
	b, _ := os.ReadFile(d.log)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func (tp *topology) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tp.dir, "LANG=C.UTF-8", "PGPASSFILE=" + filepath.Join(tp.dir, "pgpass")}
}

// run runs a short command as the postgres OS user and returns its output;
// a failure fails the test.
func (tp *topology) run(args ...string) string {
	tp.t.Helper()
	out, err := tp.try(args...)
	if err != nil {
		tp.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (tp *topology) try(args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = tp.dir
	cmd.Env = tp.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tp.uid), Gid: uint32(tp.gid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// render fills in a deploy/ha template with vars (every ${NAME} in it
// must have a value) and writes it to dst, readable by the postgres user.
func (tp *topology) render(template, dst string, vars map[string]string) {
	tp.t.Helper()
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(tp.t), "deploy", "ha", template))
	if err != nil {
		tp.t.Fatal(err)
	}
	var unknown []string
	out := os.Expand(string(src), func(k string) string {
		v, ok := vars[k]
		if !ok {
			unknown = append(unknown, k)
		}
		return v
	})
	if len(unknown) > 0 {
		tp.t.Fatalf("deploy/ha/%s: no value for %v", template, unknown)
	}
	if err := os.WriteFile(dst, []byte(out), 0o600); err != nil {
		tp.t.Fatal(err)
	}
	tp.chown(dst)
}

func (tp *topology) chown(path string) {
	if err := os.Chown(path, tp.uid, tp.gid); err != nil {
		tp.t.Fatal(err)
	}
}

func (tp *topology) mkdir(parts ...string) string {
	tp.t.Helper()
	p := tp.dir
	for _, part := range parts {
		p = filepath.Join(p, part)
		if err := os.Mkdir(p, 0o700); err != nil && !os.IsExist(err) {
			tp.t.Fatal(err)
		}
		tp.chown(p)
	}
	return p
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// startTopology starts etcd and two Patroni members from deploy/ha's
// files and waits for a primary with a synchronous standby.
func startTopology(t *testing.T) *topology {
	t.Helper()
	pg := requirements(t)
	tp := &topology{t: t, pg: pg, password: "payd-ha-" + strconv.Itoa(os.Getpid())}
	tp.uid, _ = strconv.Atoi(pg.Uid)
	tp.gid, _ = strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "payd-ha-")
	if err != nil {
		t.Fatal(err)
	}
	tp.dir = dir
	// The postgres user must reach its files through the directory.
	os.Chmod(dir, 0o755)
	tp.chown(dir)
	t.Cleanup(func() { tp.stop() })
	tp.mkdir("log")
	sock := tp.mkdir("sock")

	etcdClient, etcdPeer := testutil.FreeAddr(t), testutil.FreeAddr(t)
	tp.render("etcd.yml", filepath.Join(dir, "etcd.yml"), map[string]string{"ETCD_NAME": "etcd1",
		"ETCD_DATA_DIR": filepath.Join(dir, "etcd"), "ETCD_CLIENT_ADDR": etcdClient, "ETCD_PEER_ADDR": etcdPeer,
		"ETCD_INITIAL_CLUSTER": "etcd1=http://" + etcdPeer})
	tp.etcd = tp.start("etcd", "etcd", "--config-file", filepath.Join(dir, "etcd.yml"))
	waitFor(t, 30*time.Second, "etcd", func() error { return httpOK("http://" + etcdClient + "/health") })

	for i := range 2 {
		tp.members = append(tp.members, &member{name: fmt.Sprintf("pg%d", i+1), pgAddr: testutil.FreeAddr(t),
			restAddr: testutil.FreeAddr(t), dataDir: filepath.Join(dir, fmt.Sprintf("pg%d", i+1))})
	}
	tp.pgbackrest = filepath.Join(dir, "pgbackrest.conf")
	tp.render("pgbackrest.conf", tp.pgbackrest, map[string]string{"REPO_DIR": tp.mkdir("backrest", "repo"),
		"LOG_DIR": tp.mkdir("backrest", "log"), "LOCK_DIR": tp.mkdir("backrest", "lock"),
		"DATA_DIR_1": tp.members[0].dataDir, "PG_PORT_1": port(tp.members[0].pgAddr),
		"DATA_DIR_2": tp.members[1].dataDir, "PG_PORT_2": port(tp.members[1].pgAddr), "SOCKET_DIR": sock})
	for i, m := range tp.members {
		m.config = filepath.Join(dir, m.name+".yml")
		tp.render("patroni.yml", m.config, map[string]string{"MEMBER": m.name, "REST_ADDR": m.restAddr,
			"ETCD_HOSTS": etcdClient, "CLIENT_CIDR": "127.0.0.1/32", "PG_ADDR": m.pgAddr, "DATA_DIR": m.dataDir,
			"PGPASS": filepath.Join(dir, fmt.Sprintf("pgpass%d", i+1)), "SUPERUSER_PASSWORD": tp.password,
			"REPLICATION_PASSWORD": tp.password + "-r", "SOCKET_DIR": sock, "PGBACKREST_CONF": tp.pgbackrest})
		// Patroni's validator refuses loopback connect addresses (other
		// machines could not reach them); every other complaint fails.
		if out, err := tp.try("patroni", "--validate-config", m.config); err != nil {
			var other []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.Contains(line, `connect_address 127.0.0.1:`) {
					other = append(other, line)
				}
			}
			if len(other) > 0 {
				t.Fatalf("patroni --validate-config %s: %v\n%s", m.name, err, out)
			}
		}
	}
	// Both start at once: the first to take the leader lock in etcd
	// bootstraps the cluster, the other copies it (pg_basebackup).
	for _, m := range tp.members {
		m.proc = tp.start("patroni-"+m.name, "patroni", m.config)
	}
	var first *member
	waitFor(t, 60*time.Second, "a member to bootstrap as the primary", func() error {
		if first = tp.leader(); first == nil {
			return errors.New("no leader yet")
		}
		return nil
	})
	// The repository's stanza as soon as there is a primary, so that
	// archiving works from the first segments on.
	tp.backrest("stanza-create")
	tp.waitHealthy(90 * time.Second)
	tp.haproxyAddr = testutil.FreeAddr(t)
	haCfg := filepath.Join(dir, "haproxy.cfg")
	tp.render("haproxy.cfg", haCfg, map[string]string{"LISTEN_ADDR": tp.haproxyAddr,
		"MEMBER_1": tp.members[0].name, "PG_ADDR_1": tp.members[0].pgAddr, "REST_PORT_1": port(tp.members[0].restAddr),
		"MEMBER_2": tp.members[1].name, "PG_ADDR_2": tp.members[1].pgAddr, "REST_PORT_2": port(tp.members[1].restAddr)})
	tp.run("haproxy", "-c", "-q", "-f", haCfg)
	tp.haproxy = tp.start("haproxy", "haproxy", "-db", "-f", haCfg)
	t.Logf("topology up in %s: etcd %s, Patroni members %s (PostgreSQL %s, REST %s) and %s (PostgreSQL %s, REST %s)",
		dir, etcdClient, tp.members[0].name, tp.members[0].pgAddr, tp.members[0].restAddr,
		tp.members[1].name, tp.members[1].pgAddr, tp.members[1].restAddr)
	return tp
}

// stop stops Patroni (which stops its PostgreSQL), then etcd, and removes
// the directory (kept, with its logs named, when the test failed or
// PAYD_HA_KEEP is set).
func (tp *topology) stop() {
	for _, m := range tp.members {
		if m.proc != nil {
			m.proc.stop(20 * time.Second)
		}
		// A postmaster Patroni left behind (or one the test started).
		if pid := postmasterPID(m.dataDir); pid > 0 {
			syscall.Kill(pid, syscall.SIGQUIT)
		}
	}
	if tp.haproxy != nil {
		tp.haproxy.stop(5 * time.Second)
	}
	if tp.etcd != nil {
		tp.etcd.stop(10 * time.Second)
	}
	if tp.t.Failed() || os.Getenv("PAYD_HA_KEEP") != "" {
		for _, d := range append([]*daemon{tp.etcd, tp.haproxy}, tp.daemons()...) {
			if d != nil {
				tp.t.Logf("--- %s (log %s)\n%s", d.name, d.log, d.tail())
			}
		}
		tp.t.Logf("the topology's files are kept in %s", tp.dir)
		return
	}
	os.RemoveAll(tp.dir)
}

func (tp *topology) daemons() []*daemon {
	var ds []*daemon
	for _, m := range tp.members {
		ds = append(ds, m.proc)
	}
	return ds
}

// postmasterPID reads the postmaster's pid from its data directory; 0 when
// none runs there.
func postmasterPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// clusterState is Patroni's GET /cluster.
type clusterState struct {
	Members []struct {
		Name  string `json:"name"`
		Role  string `json:"role"`
		State string `json:"state"`
		Lag   any    `json:"lag"`
	} `json:"members"`
}

func (tp *topology) cluster() (clusterState, error) {
	var cs clusterState
	var last error
	for _, m := range tp.members {
		resp, err := http.Get("http://" + m.restAddr + "/cluster")
		if err != nil {
			last = err
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := json.Unmarshal(b, &cs); err != nil {
			last = err
			continue
		}
		return cs, nil
	}
	return cs, last
}

// leader returns the member holding the leader lock and running, or nil.
func (tp *topology) leader() *member {
	cs, err := tp.cluster()
	if err != nil {
		return nil
	}
	for _, cm := range cs.Members {
		if cm.Role == "leader" && cm.State == "running" {
			return tp.member(cm.Name)
		}
	}
	return nil
}

func (tp *topology) member(name string) *member {
	for _, m := range tp.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// waitHealthy waits for a running leader and a streaming synchronous
// standby.
func (tp *topology) waitHealthy(within time.Duration) (leader, standby *member) {
	tp.t.Helper()
	waitFor(tp.t, within, "a primary with a streaming synchronous standby", func() error {
		cs, err := tp.cluster()
		if err != nil {
			return err
		}
		leader, standby = nil, nil
		for _, cm := range cs.Members {
			switch {
			case cm.Role == "leader" && cm.State == "running":
				leader = tp.member(cm.Name)
			case cm.Role == "sync_standby" && (cm.State == "streaming" || cm.State == "running"):
				standby = tp.member(cm.Name)
			}
		}
		if leader == nil || standby == nil {
			return fmt.Errorf("cluster: %+v", cs.Members)
		}
		return nil
	})
	return leader, standby
}

// url is the multi-host URL of database db for payd.
func (tp *topology) url(db string) string {
	return fmt.Sprintf("postgres://postgres:%s@%s,%s/%s?target_session_attrs=read-write&sslmode=disable&connect_timeout=2",
		tp.password, tp.members[0].pgAddr, tp.members[1].pgAddr, db)
}

// admin opens database db on the primary (through the multi-host URL).
func (tp *topology) admin(db string) *sql.DB {
	tp.t.Helper()
	s, err := sql.Open("pgx", tp.url(db))
	if err != nil {
		tp.t.Fatal(err)
	}
	tp.t.Cleanup(func() { s.Close() })
	return s
}

// createDB creates a database on the primary.
func (tp *topology) createDB(name string) {
	tp.t.Helper()
	a := tp.admin("postgres")
	if _, err := a.Exec("CREATE DATABASE " + name); err != nil {
		tp.t.Fatal(err)
	}
	// A synchronous standby has the commit on disk, not necessarily
	// replayed: payd's connection attempt to it would find no database
	// and stop there (a missing database ends pgx's walk along the hosts).
	for _, m := range tp.members {
		waitFor(tp.t, 30*time.Second, "database "+name+" on "+m.name, func() error {
			c, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres:%s@%s/%s?sslmode=disable&connect_timeout=2", tp.password, m.pgAddr, name))
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Ping()
		})
	}
}

// killPrimary SIGKILLs the postmaster of the leader and returns the member
// and the moment of the kill.
func (tp *topology) killPrimary() (*member, time.Time) {
	tp.t.Helper()
	m := tp.leader()
	if m == nil {
		tp.t.Fatal("no leader to kill")
	}
	pid := postmasterPID(m.dataDir)
	if pid == 0 {
		tp.t.Fatalf("%s: no postmaster running", m.name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		tp.t.Fatal(err)
	}
	return m, time.Now()
}

// checkHAProxy waits until a connection through HAProxy lands on want's
// PostgreSQL, and that it accepts writes.
func (tp *topology) checkHAProxy(want *member) {
	tp.t.Helper()
	waitFor(tp.t, 15*time.Second, "HAProxy to forward to "+want.name, func() error {
		c, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable&connect_timeout=2", tp.password, tp.haproxyAddr))
		if err != nil {
			return err
		}
		defer c.Close()
		var p int
		var rec bool
		if err := c.QueryRow("SELECT inet_server_port(), pg_is_in_recovery()").Scan(&p, &rec); err != nil {
			return err
		}
		if strconv.Itoa(p) != port(want.pgAddr) || rec {
			return fmt.Errorf("HAProxy forwards to port %d (in recovery %v)", p, rec)
		}
		return nil
	})
}

// backrest runs a pgbackrest command on the topology's configuration.
func (tp *topology) backrest(args ...string) string {
	tp.t.Helper()
	return tp.run(append([]string{"pgbackrest", "--config=" + tp.pgbackrest, "--stanza=payd"}, args...)...)
}

func httpOK(url string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// waitFor polls cond every 100 ms until it returns nil, failing the test
// with cond's last error after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = cond(); err == nil {
			return
		}
	}
	if err == nil {
		err = errors.New("timed out")
	}
	t.Fatalf("waiting %v for %s: %v", within, what, err)
}
