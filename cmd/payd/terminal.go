package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/terminals/card"
	"github.com/payd/payd/internal/terminals/simulator"
)

func init() {
	register(command{"terminal", "terminal simulate: encrypt a card read like a terminal and post it", runTerminal})
}

const terminalUsage = `usage: payd terminal simulate --terminal ID --card PAN --amount MINOR [--currency DJF]
                             [--expiry YYYY-MM] [--ksn-counter N] [--idempotency-key KEY]

Encrypts a chip read the way the terminal's model does (countertop: TDES DUKPT, mobile: AES-128 DUKPT)
under the sandbox base derivation key, posts it to POST /v1/terminals/{id}/payments and prints the
resulting payment intent as JSON. Exit status 0 when the intent succeeded, 1 otherwise.
Server: PAYD_URL (default http:// + PAYD_ADDR); key: PAYD_API_KEY (a test secret key).
Each terminal's KSN counter is kept in PAYD_TERMINAL_STATE_DIR (default: payd/terminals under the user
cache directory) so consecutive runs advance it; --ksn-counter sets it.`

func runTerminal(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "simulate" {
		fmt.Fprintln(e.stderr, terminalUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("terminal simulate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprintln(e.stderr, terminalUsage) }
	terminalID := fs.String("terminal", "", "terminal id (term_...)")
	pan := fs.String("card", "", "card number")
	amount := fs.String("amount", "", "amount in minor units")
	currency := fs.String("currency", "DJF", "ISO 4217 currency")
	expiry := fs.String("expiry", "", "card expiry YYYY-MM (default: December, three years ahead)")
	counter := fs.Uint("ksn-counter", 0, "use this DUKPT transaction counter instead of the stored next one")
	idemKey := fs.String("idempotency-key", "", "Idempotency-Key to send (default: a fresh one)")
	if err := fs.Parse(args[1:]); err != nil {
		return errUsage
	}
	amountMinor, err := strconv.ParseInt(*amount, 10, 64)
	if *terminalID == "" || *pan == "" || err != nil || amountMinor <= 0 || fs.NArg() > 0 || *counter > 1<<32-1 {
		fmt.Fprintln(e.stderr, "payd terminal simulate: --terminal, --card and a positive --amount are required")
		fmt.Fprintln(e.stderr, terminalUsage)
		return errUsage
	}
	var exp card.Expiry
	if *expiry != "" {
		t, err := time.Parse("2006-01", *expiry)
		if err != nil {
			fmt.Fprintln(e.stderr, "payd terminal simulate: --expiry must be YYYY-MM")
			return errUsage
		}
		exp = card.Expiry{Year: t.Year(), Month: t.Month()}
	}
	base := e.getenv("PAYD_URL")
	if base == "" {
		addr := e.getenv("PAYD_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		base = "http://" + addr
	}
	apiKey := e.getenv("PAYD_API_KEY")
	if apiKey == "" {
		return errors.New("PAYD_API_KEY is not set: export a test secret key (sk_test_...)")
	}
	dir, err := simulator.DefaultStateDir(e.getenv)
	if err != nil {
		return err
	}
	c := &simulator.Client{BaseURL: base, APIKey: apiKey, State: simulator.State{Dir: dir}}
	res, err := c.Pay(ctx, simulator.Payment{TerminalID: *terminalID, PAN: strings.ReplaceAll(*pan, " ", ""),
		AmountMinor: amountMinor, Currency: *currency, Expiry: exp, Counter: uint32(*counter), IdempotencyKey: *idemKey})
	if err != nil {
		return err
	}
	if res.Status == "" {
		return fmt.Errorf("the payment was refused (%d) %s", res.HTTPStatus, simulator.ErrorMessage(res.Body))
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, bytes.TrimSpace(res.Body), "", "  ") != nil {
		pretty.Reset()
		pretty.Write(res.Body)
	}
	fmt.Fprintln(e.stdout, pretty.String())
	if !res.Succeeded {
		return fmt.Errorf("the payment intent is %s (KSN %s)", res.Status, res.KSN)
	}
	return nil
}
