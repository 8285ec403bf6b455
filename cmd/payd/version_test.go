package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

func TestDescribeBuild(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1a077ad0c3f2e0e1b6a3d0c7a1e3d9f5b2c4a6e8"}, {Key: "vcs.modified", Value: "true"}}}
	unstamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	for _, c := range []struct {
		version, commit string
		info            *debug.BuildInfo
		want            string
	}{
		{"v1.2.3", "", stamped, "payd v1.2.3 (commit 1a077ad0c3f2+dirty, go1.26.8)"},
		{"", "", stamped, "payd (devel) (commit 1a077ad0c3f2+dirty, go1.26.8)"},
		{"v1.2.3", "", unstamped, "payd v1.2.3 (commit unknown, go1.26.8)"},
		{"v1.2.3", "0123456789abcdef0123", unstamped, "payd v1.2.3 (commit 0123456789ab, go1.26.8)"},
		{"v1.2.3", "0123456789abcdef0123", stamped, "payd v1.2.3 (commit 1a077ad0c3f2+dirty, go1.26.8)"},
		{"", "", nil, "payd (devel) (commit unknown)"},
	} {
		if got := describeBuild(c.version, c.commit, c.info); got != c.want {
			t.Errorf("describeBuild(%q, %q) = %q, want %q", c.version, c.commit, got, c.want)
		}
	}
}

// TestVersionOfABuiltBinary builds payd with the command docs/operations.md
// gives (version and commit set by -ldflags, which names the commit also
// where Go records none: GOFLAGS=-buildvcs=false, a git worktree, whose .git
// is a file Go does not look into) and checks that --version names both.
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds payd: skipped with -short")
	}
	root := testutil.RepoRoot(t)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (git rev-parse HEAD: %v)", err)
	}
	bin := filepath.Join(t.TempDir(), "payd")
	rev := strings.TrimSpace(string(head))
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test -X main.commit="+rev, "-o", bin, "./cmd/payd")
	build.Dir, build.Env = root, testutil.GoBuildEnv()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("payd --version: %v", err)
	}
	want := "payd v9.8.7-test (commit " + rev[:12]
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("payd --version = %q, want it to start with %q", out, want)
	}
}
