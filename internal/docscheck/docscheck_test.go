package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = filepath.Dir(dir)
	}
}

// files returns README.md and every Markdown file under docs/ and bench/.
func files(t *testing.T, root string) []string {
	t.Helper()
	out := []string{filepath.Join(root, "README.md")}
	for _, dir := range []string{"docs", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestDocsHaveNoMachinePaths: docs/, bench/ and README.md name no directory of
// the machine they were written on.
func TestDocsHaveNoMachinePaths(t *testing.T) {
	root := repoRoot(t)
	fs := files(t, root)
	if len(fs) < 10 {
		t.Fatalf("found only %d Markdown files under %s", len(fs), root)
	}
	for _, p := range fs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, pr := range MachinePaths(rel, string(b)) {
			t.Error(pr)
		}
	}
}

// TestDocsLinksResolve: every relative link of docs/, bench/ and README.md
// names a file of the repository, and a #fragment a heading of it.
func TestDocsLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, p := range files(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range Links(root, p, string(b)) {
			t.Error(pr)
		}
	}
}

func TestMachinePathsFound(t *testing.T) {
	for _, c := range []struct {
		line string
		want int
	}{
		{"run `go build -o /tmp/bp ./bench/payments`", 1},
		{"PAYD_DATABASE_URL=sqlite:/tmp/wk/payd.db payd serve", 1},
		{"(`/work/shared/perf/anchors.sh 16`)", 1},
		{"see /root/.cache/x and /home/alice/payd", 2},
		{"/Users/bob/payd/docs", 1},
		{"TMPDIR, else `/tmp`", 0},
		{"`../shared/perf/anchors.sh 16 10`", 0},
		{"GET /v1/payment_intents/{id}", 0},
		{"a path like src/work/tmp/x", 0},
		{"~/.cache/payd/terminals", 0},
	} {
		if got := MachinePaths("f.md", c.line); len(got) != c.want {
			t.Errorf("%q: %d machine paths %v, want %d", c.line, len(got), got, c.want)
		}
	}
}

func TestLinksChecked(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	must(os.WriteFile(filepath.Join(root, "docs", "b.md"), []byte("# Title\n\n## The write path\n\n## Two engines, one SQL\n"), 0o644))
	a := filepath.Join(root, "docs", "a.md")
	text := strings.Join([]string{
		"[ok](b.md) [ok](b.md#the-write-path) [ok](b.md#two-engines-one-sql) [ok](#local)",
		"[web](https://example.com/x) [mail](mailto:a@b.c)",
		"[missing](c.md)",
		"[bad anchor](b.md#no-such-heading)",
		"[outside](../../etc/passwd)",
		"```",
		"[in a fence](nowhere.md)",
		"```",
		"## Local",
	}, "\n")
	got := Links(root, a, text)
	var lines []int
	for _, p := range got {
		lines = append(lines, p.Line)
	}
	if len(got) != 3 || lines[0] != 3 || lines[1] != 4 || lines[2] != 5 {
		t.Fatalf("problems %v, want lines 3, 4 and 5", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"The write path":                "the-write-path",
		"SQLite's files":                "sqlites-files",
		"`payd serve`":                  "payd-serve",
		"Two engines, one SQL":          "two-engines-one-sql",
		"Method: ratios to two anchors": "method-ratios-to-two-anchors",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
