package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/terminals/simulator"
)

func init() {
	register(command{name: "terminal", summary: "encrypt a card read like a terminal and post it", run: runTerminal, subs: []string{"simulate"}})
	describe("terminal simulate", usage{
		synopsis: "--terminal ID --card PAN --amount MINOR [--currency DJF] [--expiry YYYY-MM] [--ksn-counter N] [--idempotency-key KEY]",
		about: "Encrypts a chip read the way the terminal's model does (countertop: TDES DUKPT, mobile: AES-128 DUKPT)\n" +
			"under the sandbox base derivation key, posts it to POST /v1/terminals/{id}/payments and prints the\n" +
			"resulting payment intent as JSON. Exit status 0 when the intent succeeded, 1 otherwise. Each terminal's\n" +
			"KSN counter is kept in PAYD_TERMINAL_STATE_DIR so consecutive runs advance it; --ksn-counter sets it.",
		vars: append(append([]string(nil), clientVars...), "PAYD_TERMINAL_STATE_DIR"),
	})
}

func runTerminal(ctx context.Context, e *env, args []string) error {
	fs := newFlags("terminal simulate")
	terminalID := fs.String("terminal", "", "terminal id (term_...)")
	pan := fs.String("card", "", "card number")
	amount := fs.String("amount", "", "amount in minor units")
	currency := fs.String("currency", "DJF", "ISO 4217 currency")
	expiry := fs.String("expiry", "", "card expiry YYYY-MM (default: December, three years ahead)")
	counter := fs.Uint("ksn-counter", 0, "use this DUKPT transaction counter instead of the stored next one")
	idemKey := fs.String("idempotency-key", "", "Idempotency-Key to send (default: a fresh one)")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	amountMinor, err := strconv.ParseInt(*amount, 10, 64)
	if *terminalID == "" || *pan == "" || err != nil || amountMinor <= 0 || fs.NArg() > 0 || *counter > 1<<32-1 {
		return badUsage(e, fs, "--terminal, --card and a positive --amount are required")
	}
	var exp card.Expiry
	if *expiry != "" {
		t, err := time.Parse("2006-01", *expiry)
		if err != nil {
			return badUsage(e, fs, "--expiry must be YYYY-MM")
		}
		exp = card.Expiry{Year: t.Year(), Month: t.Month()}
	}
	api, err := newAPIClient(e)
	if err != nil {
		return err
	}
	dir, err := simulator.DefaultStateDir(e.getenv)
	if err != nil {
		return err
	}
	c := &simulator.Client{BaseURL: api.base, APIKey: api.key, State: simulator.State{Dir: dir}}
	res, err := c.Pay(ctx, simulator.Payment{TerminalID: *terminalID, PAN: strings.ReplaceAll(*pan, " ", ""),
		AmountMinor: amountMinor, Currency: *currency, Expiry: exp, Counter: uint32(*counter), IdempotencyKey: *idemKey})
	if err != nil {
		return err
	}
	if res.Status == "" {
		return fmt.Errorf("the payment was refused (%d) %s", res.HTTPStatus, simulator.ErrorMessage(res.Body))
	}
	printJSON(e.stdout, res.Body)
	if !res.Succeeded {
		return fmt.Errorf("the payment intent is %s (KSN %s)", res.Status, res.KSN)
	}
	return nil
}
