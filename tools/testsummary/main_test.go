package main

import (
	"bytes"
	"strings"
	"testing"
)

const stream = `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestOne"}
{"Action":"output","Package":"example.com/a","Test":"TestOne","Output":"=== RUN   TestOne\n"}
{"Action":"output","Package":"example.com/a","Test":"TestOne","Output":"    db_test.go:12: PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=...\n"}
{"Action":"output","Package":"example.com/a","Test":"TestOne","Output":"--- SKIP: TestOne (0.00s)\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestOne","Elapsed":0}
{"Action":"output","Package":"example.com/a","Test":"TestTwo","Output":"    other_test.go:40: PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=...\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestTwo","Elapsed":0}
{"Action":"output","Package":"example.com/a","Test":"TestLong","Output":"    x_test.go:3: skipped with -short\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestLong","Elapsed":0}
{"Action":"pass","Package":"example.com/a","Elapsed":1.5}
{"Action":"output","Package":"example.com/b","Test":"TestBad","Output":"    b_test.go:9: want 2, got 3\n"}
{"Action":"fail","Package":"example.com/b","Test":"TestBad","Elapsed":0.2}
{"Action":"output","Package":"example.com/b","Output":"FAIL\n"}
{"Action":"fail","Package":"example.com/b","Elapsed":12.25}
`

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	if run(strings.NewReader(stream), &out) {
		t.Error("a stream with a failed test reported success")
	}
	got := out.String()
	for _, want := range []string{
		"ok  \texample.com/a\t1.5s",
		"b_test.go:9: want 2, got 3", // a failing test's output is shown
		"FAIL\texample.com/b\t12.2s",
		"3 tests skipped, for 2 reasons:",
		"     2  PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=...",
		"     1  skipped with -short",
		"example.com/a TestOne",
		"12.2s  example.com/b",
		"FAILED (2):",
		"example.com/b TestBad",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	// Passing tests' output is not printed.
	if strings.Contains(got, "=== RUN   TestOne") {
		t.Errorf("a skipped test's run line was printed:\n%s", got)
	}
}

func TestSummaryAllPass(t *testing.T) {
	var out bytes.Buffer
	in := `{"Action":"pass","Package":"example.com/a","Test":"TestOne","Elapsed":0.1}
{"Action":"pass","Package":"example.com/a","Elapsed":0.3}
`
	if !run(strings.NewReader(in), &out) {
		t.Fatalf("all passed but reported failure:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "no test skipped") || !strings.Contains(out.String(), "all passed") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestBuildFailure(t *testing.T) {
	var out bytes.Buffer
	in := `{"ImportPath":"example.com/c","Action":"build-output","Output":"c.go:1: syntax error\n"}
{"ImportPath":"example.com/c","Action":"build-fail"}
{"Action":"fail","Package":"example.com/c","Elapsed":0}
`
	if run(strings.NewReader(in), &out) {
		t.Fatalf("a build failure reported success:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "c.go:1: syntax error") || !strings.Contains(out.String(), "example.com/c (build)") {
		t.Errorf("the build error is not shown:\n%s", out.String())
	}
}
