package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/payd/payd/internal/merchants"
)

func init() {
	register(command{name: "user", summary: "create and list portal users, reset a forgotten password", run: runUser, subs: []string{"create", "list", "reset-password"}})
	describe("merchant create", usage{
		synopsis: "--name N [--bic BIC [--deferred-settlement]] [--json]",
		about: "Creates a merchant with two sandbox secret keys (two principals, for four-eyes approvals), a sandbox\n" +
			"publishable key and a portal admin login, and prints them once. The admin's password is a one-time\n" +
			"invitation: the first portal sign-in must choose the admin's own. With --bic the merchant is also a\n" +
			"participant bank for ISO 20022 transfers.",
		vars: databaseVars,
	})
	describe("merchant list", usage{
		synopsis: "[--json]",
		about:    "Lists every merchant, oldest first: id, name, KYC status, BIC and creation time.",
		vars:     databaseVars,
	})
	describe("merchant kyc", usage{
		synopsis: "--merchant ID --status approved|rejected",
		about:    "Records the merchant's KYC decision; live keys need approved KYC and a connected live provider.",
		vars:     databaseVars,
	})
	describe("provider connect", usage{
		synopsis: "--merchant ID --provider P --config FILE",
		about: "Stores a live provider's configuration for a merchant, its credentials sealed with the secrets key\n" +
			`(FILE is JSON: {"base_url","api_key","callback_secret","timeout"}).`,
		vars: databaseVars,
	})
	describe("user reset-password", usage{
		synopsis: "--email E",
		about: "Gives the portal user with this email a new random password, prints it once and signs the user out\n" +
			"of every open portal session. The printed password is a one-time invitation: at the next portal sign-in\n" +
			"the user must choose their own before anything else works.",
		vars: databaseVars,
	})
}

func runMerchant(ctx context.Context, e *env, args []string) error {
	fs := newFlags("merchant " + args[0])
	switch args[0] {
	case "create":
		name := fs.String("name", "", "merchant name (required)")
		bic := fs.String("bic", "", "make the merchant a participant bank with this BIC")
		deferred := fs.Bool("deferred-settlement", false, "participant bank settles asynchronously (ACSP, then ACSC)")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parseFlags(e, fs, args[1:]); err != nil {
			return err
		}
		if *name == "" {
			return badUsage(e, fs, "--name is required")
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
		fmt.Fprintf(e.stdout, "merchant         %s\nsecret keys      %s\n                 %s\npublishable key  %s\nportal login     %s / %s\n                 (a one-time password: the first sign-in chooses the admin's own)\n",
			c.MerchantID, c.SecretKeys[0], c.SecretKeys[1], c.PublishableKey, c.Portal.Email, c.Portal.Password)
		return nil
	case "list":
		asJSON := fs.Bool("json", false, "print JSON (an array of merchants)")
		if err := parseFlags(e, fs, args[1:]); err != nil {
			return err
		}
		m, err := open(ctx, e, "")
		if err != nil {
			return err
		}
		defer m.Close()
		list, err := m.Merchants.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []merchants.Merchant{}
			}
			return json.NewEncoder(e.stdout).Encode(list)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tKYC\tBIC\tCREATED")
		for _, mer := range list {
			bic := mer.BIC
			if bic == "" {
				bic = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mer.ID, mer.Name, mer.KYCStatus, bic, mer.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	default: // kyc
		id := fs.String("merchant", "", "merchant id")
		status := fs.String("status", "", "approved or rejected")
		if err := parseFlags(e, fs, args[1:]); err != nil {
			return err
		}
		if *id == "" || *status == "" {
			return badUsage(e, fs, "--merchant and --status are required")
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
}

func runProvider(ctx context.Context, e *env, args []string) error {
	fs := newFlags("provider connect")
	id := fs.String("merchant", "", "merchant id")
	provider := fs.String("provider", "", "provider code")
	file := fs.String("config", "", `JSON file: {"base_url","api_key","callback_secret","timeout"}`)
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *id == "" || *provider == "" || *file == "" {
		return badUsage(e, fs, "--merchant, --provider and --config are required")
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

func runUser(ctx context.Context, e *env, args []string) error {
	switch args[0] {
	case "create":
		return runUserCreate(ctx, e, args)
	case "list":
		return runUserList(ctx, e, args)
	}
	fs := newFlags("user reset-password")
	email := fs.String("email", "", "the portal user's email")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *email == "" {
		return badUsage(e, fs, "--email is required")
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	password, err := m.Merchants.ResetPassword(ctx, *email)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "new portal password for %s (shown once): %s\n", *email, password)
	return nil
}
