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
	"syscall"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/errs"
)

// command is one subcommand: run receives the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what every command reads and writes.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// registered holds the commands; each command file adds its own in init, so
// new commands need no edit here.
var registered []command

func register(c command) { registered = append(registered, c) }

func init() {
	register(command{"serve", "run the HTTP API, sandbox pages, portal and background workers", runServe})
	register(command{"migrate", "apply the schema migrations and exit", runMigrate})
	register(command{"merchant", "merchant create | merchant kyc", runMerchant})
	register(command{"key", "key create | key revoke | key list", runKey})
	register(command{"provider", "provider connect: store a live provider's configuration", runProvider})
}

func commands() []command { return registered }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(ctx, e, os.Args[1:]))
}

// run dispatches to a command and returns the process exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if err := c.run(ctx, e, args[1:]); err != nil {
				if errors.Is(err, errUsage) {
					return 2
				}
				if de := errs.As(err); de != nil {
					fmt.Fprintf(e.stderr, "payd %s: %s\n", args[0], de.Message)
				} else {
					fmt.Fprintf(e.stderr, "payd %s: %v\n", args[0], err)
				}
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(e.stderr, "payd: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return 2
}

var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: payd <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from the environment (PAYD_ADDR, PAYD_DATABASE_URL, ...); see README.md.")
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
	m := &app.Main{Config: cfg, Out: e.stdout, Logger: app.NewLogger(e.stderr, cfg.LogLevel)}
	if err := m.Open(ctx); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}
