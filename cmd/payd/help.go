package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// usage describes one runnable command for `payd ... --help` and for
// docs/cli.md, which is generated from the same text (TestCLIReference).
type usage struct {
	synopsis string   // what follows "payd <path>"
	about    string   // what it does, a paragraph
	vars     []string // environment variables it reads (described in variables)
}

// usages holds the usage of every runnable command by path ("merchant create").
var usages = map[string]usage{}

// describe registers the usage of a runnable command.
func describe(path string, u usage) { usages[path] = u }

// variables describes every environment variable a command can read.
var variables = map[string]string{
	"PAYD_ADDR":                       "listen address (default 127.0.0.1:8080); client commands use http:// + it when PAYD_URL is unset",
	"PAYD_DATABASE_URL":               "sqlite:PATH or postgres://... (default sqlite:payd.db)",
	"PAYD_SECRETS_KEY":                "64 hex characters sealing provider credentials, webhook and TOTP secrets at rest",
	"PAYD_SECRETS_KEY_FILE":           "a file holding the secrets key, read when PAYD_SECRETS_KEY is unset (SQLite default: <database path>.key, made on first use)",
	"PAYD_LOG_LEVEL":                  "debug, info, warn or error (default info for serve, warn for the other commands)",
	"PAYD_LOG_FORMAT":                 "json (default) or text: the format of the log lines on standard error",
	"PAYD_PUBLIC_URL":                 "base of the redirect_urls payd hands out (default http:// + PAYD_ADDR)",
	"PAYD_DEMO":                       "false: no demo merchant on a new database (default true)",
	"PAYD_WORKERS":                    "false: run only the HTTP API in this process (default true)",
	"PAYD_SANDBOX_TIMEOUT_DELAY":      "delay of the sandbox network_timeout scenario (default 30s)",
	"PAYD_SANDBOX_PUSH_DELAY":         "when sandbox push approvals arrive (default 3s)",
	"PAYD_WEBHOOK_RETRY_SCHEDULE":     "waits before each webhook retry (default 1m,5m,30m,2h,6h,12h,24h)",
	"PAYD_WEBHOOK_BREAKER_FAILURES":   "consecutive failed attempts that disable a webhook endpoint, with the period; 0 turns it off (default 20)",
	"PAYD_WEBHOOK_BREAKER_PERIOD":     "how long those failures must span at least (default 6h)",
	"PAYD_SANCTIONS_LIST":             "sanctions lists, comma-separated paths or https URLs: OFAC sdn.csv (alt.csv beside it adds aliases), UN Security Council consolidated XML, EU financial sanctions XML; each file's format is read from its content",
	"PAYD_P2PE_KEYS":                  "file of live base derivation keys for terminals",
	"PAYD_RATE_LIMIT":                 "requests per second per key; 0 turns the limit off (default 200)",
	"PAYD_RATE_BURST":                 "burst of the rate limit (default 400)",
	"PAYD_RECONCILE_INTERVAL":         "live-provider reconciliation period (default 30s)",
	"PAYD_BREAKER_OPEN":               "how long a provider's circuit breaker stays open (default 30s)",
	"PAYD_INTENT_EXPIRY":              "a payment intent still requires_action this long after creation is canceled as abandoned; 0 never (default 24h)",
	"PAYD_CAPTURE_WINDOW":             "a card authorisation not captured this long after it was authorised is released (canceled, abandoned); 0 never (default 168h)",
	"PAYD_RETENTION_EVENTS":           "how long an event is kept once dispatched and no delivery of it is pending, with its deliveries: days (30d), a duration (720h) or 0 for forever (default 30d)",
	"PAYD_RETENTION_DELIVERIES":       "how long a finished webhook delivery and its attempts are kept: at most PAYD_RETENTION_EVENTS unless that is 0 (default 30d)",
	"PAYD_RETENTION_REQUEST_LOGS":     "how long a request log entry is kept, besides the newest 1,000 per merchant and mode; 0 for as long as it is among them (default 30d)",
	"PAYD_RETENTION_IDEMPOTENCY_KEYS": "how long an idempotency key is kept after its answer: at least 24h (default 24h)",
	"PAYD_REQUEST_LOG":                "false: keep no request log in this process (payd logs tail, GET /v1/request_logs; default true)",
	"GOMEMLIMIT":                      "the Go runtime's soft memory limit (serve's default 64MiB keeps payd under 100 MB resident; off turns it off)",
	"PAYD_DB_MAX_CONNS":               "database connection pool size (default 32 on PostgreSQL, 8 on SQLite, where the writer has one more of its own)",
	"PAYD_IDEMPOTENCY_LEASE":          "how soon the Idempotency-Key of a request that called a live provider is free for a retry to resume it once its run stopped (killed, or cut off from the database); a running request renews it every third of it, however long its provider call takes (default 10s)",
	"PAYD_URL":                        "the payd server client commands talk to (default http:// + PAYD_ADDR)",
	"PAYD_API_KEY":                    "the API key client commands send (a secret key, sk_test_...; default: the profile's)",
	"PAYD_PROFILE":                    "the profile payd login kept that client commands use (default: the default profile)",
	"PAYD_CONFIG":                     "the client's config file: login profiles, listen's signing secrets (default payd/config.json in the user config directory)",
	"OTEL_EXPORTER_OTLP_ENDPOINT":     "turns OpenTelemetry tracing on: spans go over OTLP/HTTP to this endpoint (the other OTEL_* variables apply: headers, sampler, service name; docs/operations.md)",
	"PAYD_TERMINAL_STATE_DIR":         "where terminal simulate keeps each device's KSN counter (default payd/terminals in the user cache directory)",
}

// Variable groups commands share.
var (
	databaseVars = []string{"PAYD_DATABASE_URL", "PAYD_SECRETS_KEY", "PAYD_SECRETS_KEY_FILE", "PAYD_LOG_LEVEL", "PAYD_LOG_FORMAT"}
	clientVars   = []string{"PAYD_URL", "PAYD_ADDR", "PAYD_API_KEY", "PAYD_PROFILE", "PAYD_CONFIG"}
)

// errHelp reports that help was printed on request: exit status 0.
var errHelp = errors.New("help printed")

// newFlags returns the flag set of the runnable command at path, whose
// --help prints the command's usage, flags and variables.
func newFlags(path string) *flag.FlagSet {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { printHelp(fs.Output(), path, fs) }
	return fs
}

// parseFlags parses args: --help prints the help to stdout (errHelp, exit
// 0); a bad flag prints the error and the help to stderr (errUsage, exit 2).
func parseFlags(e *env, fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(e.stdout, fs.Name(), fs)
		return errHelp
	case err != nil:
		fmt.Fprintf(e.stderr, "payd %s: %v\n\n", fs.Name(), err)
		printHelp(e.stderr, fs.Name(), fs)
		return errUsage
	}
	return nil
}

// badUsage prints why the arguments are wrong and the command's help to
// stderr.
func badUsage(e *env, fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(e.stderr, "payd %s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	printHelp(e.stderr, fs.Name(), fs)
	return errUsage
}

// printHelp writes the help of the runnable command at path.
func printHelp(w io.Writer, path string, fs *flag.FlagSet) {
	u := usages[path]
	fmt.Fprintf(w, "usage: payd %s %s\n", path, u.synopsis)
	if u.about != "" {
		fmt.Fprintf(w, "\n%s\n", u.about)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.VisitAll(func(f *flag.Flag) {
			name, text := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if name != "" {
				line += " " + name
			}
			fmt.Fprintf(w, "%s\n        %s", line, text)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
	if len(u.vars) > 0 {
		fmt.Fprintln(w, "\nenvironment:")
		for _, v := range u.vars {
			fmt.Fprintf(w, "  %s\n        %s\n", v, variables[v])
		}
	}
}

// printGroupHelp writes the help of a command with subcommands.
func printGroupHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "payd %s: %s\n\nusage:\n", c.name, c.summary)
	for _, s := range c.subs {
		fmt.Fprintf(w, "  payd %s %s %s\n", c.name, s, usages[c.name+" "+s].synopsis)
	}
	fmt.Fprintf(w, "\nRun payd %s SUBCOMMAND --help for its flags and environment variables.\n", c.name)
}

// printUsage writes the list of commands.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: payd COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun payd COMMAND --help for a command's flags and environment variables;")
	fmt.Fprintln(w, "payd --version prints the version and commit. Configuration comes from the environment (README.md).")
}

// suggest returns the known word nearest to typed, or "" when none is close
// (at most two edits, or a third of its letters when longer).
func suggest(typed string, known []string) string {
	best, bestDist := "", max(2, len(typed)/3)+1
	for _, k := range known {
		if d := editDistance(typed, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// version and commit are set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)" ./cmd/payd
//
// Without version payd reports the module version ("(devel)" in a checkout).
// The commit is the VCS revision Go records in the binary when it builds from
// a git checkout with VCS stamping on (its default; GOFLAGS=-buildvcs=false
// turns it off); commit is used only when the binary has none.
var version, commit = "", ""

// versionString describes this build: "payd VERSION (commit REV, GOVERSION)".
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return describeBuild(version, commit, info)
}

// describeBuild forms versionString's line from the -X variables and the
// build information (nil when the binary has none).
func describeBuild(version, commit string, info *debug.BuildInfo) string {
	v, rev, modified, goVersion := version, "", "", ""
	if info != nil {
		if v == "" {
			v = info.Main.Version
		}
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+dirty"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev, modified = commit, ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		rev = "unknown"
	}
	out := "payd " + v + " (commit " + rev + modified
	if goVersion != "" {
		out += ", " + goVersion
	}
	return out + ")"
}

// writeReference writes docs/cli.md: every command's help, produced by
// running `payd ... --help` itself, so the reference and --help cannot differ.
func writeReference(ctx context.Context, w io.Writer) error {
	fmt.Fprint(w, "# payd command reference\n\n"+
		"Generated from `payd COMMAND --help` by `PAYD_UPDATE_CLI_DOCS=1 go test ./cmd/payd -run TestCLIReference`;\n"+
		"a test fails when this file and the commands' help differ. Every command reads its configuration from the\n"+
		"environment; a flag, where there is one, overrides its variable.\n\n")
	var top bytes.Buffer
	run(ctx, &env{stdout: &top, stderr: io.Discard, getenv: func(string) string { return "" }}, []string{"--help"})
	fmt.Fprintf(w, "```\n$ payd --help\n%s```\n", top.String())
	for _, path := range commandPaths() {
		var out bytes.Buffer
		args := append(strings.Fields(path), "--help")
		if code := run(ctx, &env{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }}, args); code != 0 {
			return fmt.Errorf("payd %s --help: exit status %d", path, code)
		}
		fmt.Fprintf(w, "\n## payd %s\n\n```\n%s```\n", path, out.String())
	}
	return nil
}

// commandPaths lists every runnable command ("serve", "merchant create", ...)
// in help order.
func commandPaths() []string {
	var out []string
	for _, c := range commands() {
		if len(c.subs) == 0 {
			out = append(out, c.name)
		}
		for _, s := range c.subs {
			out = append(out, c.name+" "+s)
		}
	}
	return out
}
