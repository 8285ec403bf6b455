package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/payd/payd/internal/merchants"
)

func runMerchant(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: payd merchant create --name N [--bic BIC [--deferred-settlement]] [--json]\n       payd merchant kyc --merchant ID --status approved|rejected")
		return errUsage
	}
	switch args[0] {
	case "create":
		fs := flag.NewFlagSet("merchant create", flag.ContinueOnError)
		fs.SetOutput(e.stderr)
		name := fs.String("name", "", "merchant name (required)")
		bic := fs.String("bic", "", "make the merchant a participant bank with this BIC")
		deferred := fs.Bool("deferred-settlement", false, "participant bank settles asynchronously (ACSP, then ACSC)")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.Parse(args[1:]); err != nil {
			return errUsage
		}
		m, err := open(ctx, e, "")
		if err != nil {
			return err
		}
		defer m.Close()
		c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: *name, BIC: *bic, DeferredSettlement: *deferred})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(c)
		}
		fmt.Fprintf(e.stdout, "merchant         %s\nsecret keys      %s\n                 %s\npublishable key  %s\nportal login     %s / %s\n",
			c.MerchantID, c.SecretKeys[0], c.SecretKeys[1], c.PublishableKey, c.Portal.Email, c.Portal.Password)
		return nil
	case "kyc":
		fs := flag.NewFlagSet("merchant kyc", flag.ContinueOnError)
		fs.SetOutput(e.stderr)
		id := fs.String("merchant", "", "merchant id")
		status := fs.String("status", "", "approved or rejected")
		if err := fs.Parse(args[1:]); err != nil || *id == "" || *status == "" {
			fmt.Fprintln(e.stderr, "usage: payd merchant kyc --merchant ID --status approved|rejected")
			return errUsage
		}
		m, err := open(ctx, e, "")
		if err != nil {
			return err
		}
		defer m.Close()
		if err := m.Merchants.SetKYC(ctx, *id, *status); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "merchant %s KYC %s\n", *id, *status)
		return nil
	}
	fmt.Fprintf(e.stderr, "payd merchant: unknown subcommand %q\n", args[0])
	return errUsage
}

func runProvider(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "connect" {
		fmt.Fprintln(e.stderr, "usage: payd provider connect --merchant ID --provider P --config FILE")
		return errUsage
	}
	fs := flag.NewFlagSet("provider connect", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	id := fs.String("merchant", "", "merchant id")
	provider := fs.String("provider", "", "provider code")
	file := fs.String("config", "", `JSON file: {"base_url","api_key","callback_secret","timeout"}`)
	if err := fs.Parse(args[1:]); err != nil || *id == "" || *provider == "" || *file == "" {
		fmt.Fprintln(e.stderr, "usage: payd provider connect --merchant ID --provider P --config FILE")
		return errUsage
	}
	raw, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	var cfg merchants.ProviderConfig
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("%s: %v", *file, err)
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Merchants.ConnectProvider(ctx, *id, *provider, cfg); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "provider %s connected for merchant %s (credentials stored encrypted)\n", *provider, *id)
	return nil
}
