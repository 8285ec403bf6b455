package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"gopkg.in/yaml.v3"
)

// deployDir is the repository's deploy/ directory, beside this package.
const deployDir = "../../deploy"

// dockerInstruction is one instruction of a Dockerfile (continuation lines
// joined, comments dropped).
type dockerInstruction struct{ op, args string }

func readDockerfile(t *testing.T, path string) []dockerInstruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dockerInstruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, dockerInstruction{strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDeployArtefacts checks deploy/ as far as this machine can (it has no
// container runtime): the Dockerfile's runtime stage is FROM scratch, runs as
// a non-root user, health-checks with `payd healthcheck` and starts `payd
// serve`; the binary built with the Dockerfile's own environment and flags is
// static and reports the stamped version and commit; the compose file runs two
// payd processes on PostgreSQL with every secret from a file; the systemd unit
// passes `systemd-analyze verify` (skipped where it is not installed).
func TestDeployArtefacts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds payd as the container image does: skipped with -short")
	}
	ins := readDockerfile(t, filepath.Join(deployDir, "Dockerfile"))
	var stages []int // index of each FROM
	for i, in := range ins {
		if in.op == "FROM" {
			stages = append(stages, i)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a runtime stage", len(stages))
	}
	build, runtime := ins[stages[0]:stages[len(stages)-1]], ins[stages[len(stages)-1]:]
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(goMod)
	if ins[0].op != "ARG" || goLine == nil || ins[0].args != "GO_VERSION="+string(goLine[1]) || build[0].args != "golang:${GO_VERSION} AS build" {
		t.Errorf("the build stage's Go (%v, %s) is not go.mod's %s", ins[0], build[0].args, goLine)
	}
	if runtime[0].args != "scratch" {
		t.Errorf("runtime stage FROM %s, want scratch", runtime[0].args)
	}
	last := map[string]string{}
	for _, in := range runtime {
		last[in.op] = in.args
	}
	if u := last["USER"]; u == "" || u == "root" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:") {
		t.Errorf("runtime USER %q, want a non-root user", u)
	}
	var health []string
	hc := last["HEALTHCHECK"]
	if i := strings.Index(hc, "CMD "); i < 0 || json.Unmarshal([]byte(hc[i+4:]), &health) != nil {
		t.Fatalf("HEALTHCHECK %q: want CMD in exec form", hc)
	}
	if len(health) < 2 || health[0] != "/payd" {
		t.Fatalf("HEALTHCHECK runs %v, want /payd healthcheck", health)
	}
	if c, ok := find(health[1]); !ok || c.name != "healthcheck" {
		t.Fatalf("HEALTHCHECK runs payd %q, which is not the healthcheck command", health[1])
	}
	var entry, cmd []string
	if json.Unmarshal([]byte(last["ENTRYPOINT"]), &entry) != nil || json.Unmarshal([]byte(last["CMD"]), &cmd) != nil ||
		strings.Join(append(entry, cmd...), " ") != "/payd serve" {
		t.Errorf("ENTRYPOINT %s CMD %s, want /payd serve", last["ENTRYPOINT"], last["CMD"])
	}
	if !strings.Contains(last["ENV"], "PAYD_ADDR=0.0.0.0:") {
		t.Errorf("runtime ENV %q: payd must listen beyond the container's loopback", last["ENV"])
	}

	// The build stage's environment and go build line, run here.
	var buildEnv []string
	var goBuild string
	for _, in := range build {
		switch {
		case in.op == "ENV":
			for _, kv := range regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`).FindAllStringSubmatch(in.args, -1) {
				if kv[1] != "GOPROXY" { // this machine's own proxy setting stays
					buildEnv = append(buildEnv, kv[1]+"="+strings.Trim(kv[2], `"`))
				}
			}
		case in.op == "RUN" && strings.HasPrefix(in.args, "go build "):
			goBuild = in.args
		}
	}
	if !contains(buildEnv, "CGO_ENABLED=0") {
		t.Fatalf("build stage ENV %v: want CGO_ENABLED=0", buildEnv)
	}
	m := regexp.MustCompile(`^go build -ldflags "([^"]*)" -o \S+ (\./cmd/payd)$`).FindStringSubmatch(goBuild)
	if m == nil {
		t.Fatalf("build stage's go build line %q is not the shape this test runs", goBuild)
	}
	const version, commit = "v9.8.7-image", "0123456789abcdef0123456789abcdef01234567"
	ldflags := strings.NewReplacer("${VERSION}", version, "${COMMIT}", commit).Replace(m[1])
	bin := filepath.Join(t.TempDir(), "payd")
	gb := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, m[2])
	gb.Dir = "../.."
	gb.Env = append(os.Environ(), buildEnv...)
	if out, err := gb.CombinedOutput(); err != nil {
		t.Fatalf("go build as the Dockerfile does: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the image's binary is dynamically linked (%v): it cannot run FROM scratch", p.Type)
		}
	}
	f.Close()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), version) || !strings.Contains(string(out), commit[:12]) {
		t.Fatalf("the image's payd --version: %q %v, want %s and commit %s", out, err, version, commit[:12])
	}

	t.Run("compose", func(t *testing.T) { checkCompose(t) })
	t.Run("systemd", func(t *testing.T) { checkSystemdUnit(t, bin) })
}

// composeFile is the part of a compose file the test reads.
type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Environment map[string]string `yaml:"environment"`
		Secrets     []string          `yaml:"secrets"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File        string `yaml:"file"`
		Environment string `yaml:"environment"`
	} `yaml:"secrets"`
}

func checkCompose(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "compose", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for name, s := range c.Secrets {
		if s.File == "" || s.Environment != "" {
			t.Errorf("secret %s is not read from a file", name)
		}
	}
	var payds, postgres int
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, "postgres:") {
			postgres++
			if s.Environment["POSTGRES_PASSWORD"] != "" || !strings.HasPrefix(s.Environment["POSTGRES_PASSWORD_FILE"], "/run/secrets/") {
				t.Errorf("%s: the database password must come from a secret file", name)
			}
			continue
		}
		if s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || filepath.Clean(filepath.Join(deployDir, "compose", s.Build.Context)) != filepath.Clean(filepath.Join(deployDir, "..")) {
			t.Errorf("%s: not built from the repository with deploy/Dockerfile: %+v", name, s.Build)
			continue
		}
		payds++
		env := s.Environment
		if env["PAYD_SECRETS_KEY"] != "" {
			t.Errorf("%s: the secrets key is inline", name)
		}
		keyFile := env["PAYD_SECRETS_KEY_FILE"]
		if !strings.HasPrefix(keyFile, "/run/secrets/") || !contains(s.Secrets, strings.TrimPrefix(keyFile, "/run/secrets/")) {
			t.Errorf("%s: PAYD_SECRETS_KEY_FILE %q is not one of its secrets %v", name, keyFile, s.Secrets)
		}
		u, err := url.Parse(env["PAYD_DATABASE_URL"])
		if err != nil || u.Scheme != "postgres" || u.User == nil {
			t.Errorf("%s: PAYD_DATABASE_URL %q: want a PostgreSQL URL naming its user (%v)", name, env["PAYD_DATABASE_URL"], err)
		} else if _, inline := u.User.Password(); inline {
			t.Errorf("%s: PAYD_DATABASE_URL holds the database password", name)
		} else if _, ok := s.DependsOn[u.Hostname()]; !ok {
			t.Errorf("%s: does not wait for its database %s", name, u.Hostname())
		}
		if pass := env["PGPASSFILE"]; !contains(s.Secrets, strings.TrimPrefix(pass, "/run/secrets/")) {
			t.Errorf("%s: PGPASSFILE %q is not one of its secrets", name, pass)
		}
		for k := range env {
			if _, known := variables[k]; !known && k != "PGPASSFILE" {
				t.Errorf("%s: %s is not a variable payd reads", name, k)
			}
		}
	}
	if payds != 2 || postgres != 1 {
		t.Errorf("compose.yaml runs %d payd processes and %d PostgreSQL, want 2 and 1", payds, postgres)
	}

	// payd (pgx) takes the password from the pgpass line make-secrets.sh writes.
	pass := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(pass, []byte("postgres:5432:payd:payd:s3cret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", pass)
	cfg, err := pgconn.ParseConfig("postgres://payd@postgres:5432/payd?sslmode=disable")
	if err != nil || cfg.Password != "s3cret-from-file" {
		t.Errorf("PGPASSFILE not used: %v", err)
	}
	script, err := os.ReadFile(filepath.Join(deployDir, "compose", "make-secrets.sh"))
	if err != nil || !bytes.Contains(script, []byte("postgres:5432:payd:payd:")) || !bytes.Contains(script, []byte("umask 077")) {
		t.Errorf("make-secrets.sh does not write the pgpass line compose.yaml's URL needs, owner-only (%v)", err)
	}
}

func checkSystemdUnit(t *testing.T, bin string) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "systemd", "payd.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "ProtectHome=yes",
		"DynamicUser=yes", "CapabilityBoundingSet=\n", "LoadCredential=secrets_key:", "Environment=PAYD_SECRETS_KEY_FILE=%d/secrets_key"} {
		if !bytes.Contains(raw, []byte("\n"+want)) {
			t.Errorf("payd.service lacks %q", strings.TrimSpace(want))
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: install systemd to verify deploy/systemd/payd.service")
	}
	// verify checks that ExecStart's binary exists: point it at the one built.
	unit := filepath.Join(t.TempDir(), "payd.service")
	if err := os.WriteFile(unit, bytes.ReplaceAll(raw, []byte("/usr/local/bin/payd"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	// verify exits 0 on settings it ignores with a warning, so any output fails.
	out, err := exec.Command(analyze, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=yes", "--threshold=20", unit).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: exposure above 2.0: %v\n%s", err, out)
	}
}
