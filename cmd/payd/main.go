// Command payd is the payments service: `payd serve` runs the API, sandbox
// pages, portal and workers; the other commands are the operator's tools.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/errs"
)

// command is one subcommand: run receives the arguments after its name.
// A command with subs is a group ("merchant create", "merchant list"): payd
// checks the subcommand before run sees it, so run can switch on args[0].
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
	subs    []string
}

// env is what every command reads and writes.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	stdin          io.Reader // nil: os.Stdin
}

// registered holds the commands; each command file adds its own in init, so
// new commands need no edit here.
var registered []command

func register(c command) { registered = append(registered, c) }

func init() {
	register(command{name: "serve", summary: "run the HTTP API, sandbox pages, portal and background workers", run: runServe})
	register(command{name: "migrate", summary: "apply the schema migrations and exit", run: runMigrate})
	register(command{name: "merchant", summary: "create, list and approve merchants", run: runMerchant, subs: []string{"create", "list", "kyc"}})
	register(command{name: "key", summary: "create, revoke and list API keys", run: runKey, subs: []string{"create", "revoke", "list"}})
	register(command{name: "provider", summary: "store a live provider's configuration", run: runProvider, subs: []string{"connect"}})
}

// commands returns the commands in the order help lists them: serve and
// migrate first, then by name.
func commands() []command {
	out := append([]command(nil), registered...)
	rank := func(c command) string {
		switch c.name {
		case "serve":
			return "0"
		case "migrate":
			return "1"
		}
		return "2" + c.name
	}
	sort.Slice(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(ctx, e, os.Args[1:]))
}

// run dispatches to a command and returns the process exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(e.stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(e.stdout, versionString())
		return 0
	}
	c, ok := find(args[0])
	if !ok {
		fmt.Fprintf(e.stderr, "payd: unknown command %q%s\n\n", args[0], didYouMean(args[0], names()))
		printUsage(e.stderr)
		return 2
	}
	if len(c.subs) > 0 {
		if len(args) < 2 || isHelp(args[1]) {
			w, code := e.stdout, 0
			if len(args) < 2 {
				w, code = e.stderr, 2
			}
			printGroupHelp(w, c)
			return code
		}
		if !contains(c.subs, args[1]) {
			fmt.Fprintf(e.stderr, "payd %s: unknown subcommand %q%s\n\n", c.name, args[1], didYouMean(args[1], c.subs))
			printGroupHelp(e.stderr, c)
			return 2
		}
	}
	err := c.run(ctx, e, args[1:])
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	if de := errs.As(err); de != nil {
		fmt.Fprintf(e.stderr, "payd %s: %s\n", args[0], de.Message)
	} else {
		fmt.Fprintf(e.stderr, "payd %s: %v\n", args[0], err)
	}
	return 1
}

var errUsage = errors.New("usage")

func find(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func names() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func didYouMean(typed string, known []string) string {
	if s := suggest(typed, known); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// open loads the configuration and opens the database and services.
func open(ctx context.Context, e *env, dbFlag string) (*app.Main, error) {
	cfg, err := app.ConfigFromEnv(e.getenv)
	if err != nil {
		return nil, err
	}
	if dbFlag != "" {
		cfg.DatabaseURL = dbFlag
	}
	if e.getenv("PAYD_LOG_LEVEL") == "" {
		// A command prints its own output; what the services log at info
		// (a sanctions list loaded, keys reloaded) concerns a serving process.
		cfg.LogLevel = "warn"
	}
	m := &app.Main{Config: cfg, Out: e.stdout, Logger: cfg.Logger(e.stderr)}
	if err := m.Open(ctx); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}
