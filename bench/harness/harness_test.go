package harness

import (
	"flag"
	"slices"
	"testing"
)

func TestLevels(t *testing.T) {
	got, err := Levels("clients", "1, 16,64")
	if err != nil || !slices.Equal(got, []int{1, 16, 64}) {
		t.Fatalf("Levels = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,,2", "0", "-3", "x"} {
		if _, err := Levels("clients", bad); err == nil {
			t.Errorf("Levels(%q) accepted", bad)
		}
	}
}

func TestRequireLoopback(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80"} {
		if err := RequireLoopback(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://127.0.0.1:8080", "http://10.0.0.1:8080", "http://example.com", "127.0.0.1:8080"} {
		if err := RequireLoopback(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestDatabaseFlags(t *testing.T) {
	for _, c := range []struct {
		args        []string
		engine, url string
	}{
		{nil, "sqlite", ""},
		{[]string{"-engine", "postgres", "-database-url", "postgres://h/db"}, "postgres", "postgres://h/db"},
		{[]string{"-db", "postgres://h/db"}, "postgres", "postgres://h/db"},
		{[]string{"-db", "sqlite:/tmp/x.db"}, "sqlite", "sqlite:/tmp/x.db"},
	} {
		t.Setenv("PAYD_TEST_DATABASE_URL", "")
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		d := DatabaseFlags(fs)
		if err := fs.Parse(c.args); err != nil || d.Engine != c.engine || d.URL != c.url {
			t.Errorf("%v: engine=%q url=%q err=%v", c.args, d.Engine, d.URL, err)
		}
	}
}
