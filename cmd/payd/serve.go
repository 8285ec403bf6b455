package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/payd/payd/internal/app"
)

func runServe(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	addr := fs.String("addr", "", "listen address (PAYD_ADDR)")
	db := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := app.ConfigFromEnv(e.getenv)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
		if e.getenv("PAYD_PUBLIC_URL") == "" {
			cfg.PublicURL = "http://" + *addr
		}
	}
	if *db != "" {
		cfg.DatabaseURL = *db
	}
	m := &app.Main{Config: cfg, Out: e.stdout, Logger: app.NewLogger(e.stderr, cfg.LogLevel)}
	if err := m.Run(ctx); err != nil {
		m.Close()
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			m.Logger.Info("shutting down")
			return m.Close()
		case <-hup:
			m.Reload(ctx)
		}
	}
}

func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	db := fs.String("database-url", "", "database URL (PAYD_DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	m, err := open(ctx, e, *db)
	if err != nil {
		return err
	}
	defer m.Close()
	e.stdout.Write([]byte("migrations applied (" + m.DB.Dialect().String() + ")\n"))
	return nil
}
