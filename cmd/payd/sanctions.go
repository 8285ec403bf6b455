package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/screening"
)

func init() {
	register(command{name: "sanctions", summary: "screen a name against the sanctions list", run: runSanctions, subs: []string{"check"}})
	describe("sanctions check", usage{
		synopsis: "[--list PATH|URL[,PATH|URL...]] [--threshold 0.82] [--json] NAME",
		about:    "Prints the entries of the sanctions list a name resembles, with their scores.",
		vars:     []string{"PAYD_SANCTIONS_LIST"},
	})
}

// runSanctions is `payd sanctions check [--list PATH] [--threshold F] [--json] NAME`:
// it prints the listed entries the name resembles, with their scores.
func runSanctions(ctx context.Context, e *env, args []string) error {
	fs := newFlags("sanctions check")
	list := fs.String("list", "", "list files or https URLs, comma-separated: OFAC sdn.csv, UN consolidated XML, EU FSF XML (PAYD_SANCTIONS_LIST)")
	threshold := fs.Float64("threshold", screening.DefaultThreshold, "score at or above which a listed name is a hit")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	name := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(name) == "" {
		return badUsage(e, fs, "a NAME to screen is required")
	}
	cfg, err := app.ConfigFromEnv(e.getenv)
	if err != nil {
		return err
	}
	if *list == "" {
		*list = cfg.SanctionsList
	}
	if *list == "" {
		return fmt.Errorf("no sanctions list: set PAYD_SANCTIONS_LIST or pass --list")
	}
	start := time.Now()
	l, err := screening.Load(ctx, *list)
	if err != nil {
		return err
	}
	loaded := time.Since(start)
	start = time.Now()
	res := l.Screen(name, screening.Options{Threshold: *threshold})
	took := time.Since(start)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(e.stdout, "%q: %s against %d entries and %d aliases (list loaded in %v, screened in %v)\n",
		name, res.Status, l.Size(), l.AliasCount(), loaded.Round(time.Millisecond), took.Round(time.Microsecond))
	for _, m := range res.Matches {
		via := ""
		if m.IsAlias {
			via = fmt.Sprintf(" via alias %q", m.MatchedName)
		}
		fmt.Fprintf(e.stdout, "  %.3f  %s (%s entry %d, %s, %s)%s\n", m.Score, m.ListName, m.List, m.EntryID, m.Type, strings.Join(m.Programs, ", "), via)
	}
	return nil
}
