package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

func init() {
	describe("key create", usage{
		synopsis: "--merchant ID --mode test|live --kind secret|publishable [--json]",
		about: "Creates one more API key and prints it once. Live keys need a merchant whose KYC is approved and\n" +
			"that has a live provider connected.",
		vars: databaseVars,
	})
	describe("key revoke", usage{
		synopsis: "--merchant ID --key KEY_ID",
		about:    "Revokes a key: requests with it are refused from then on.",
		vars:     databaseVars,
	})
	describe("key list", usage{
		synopsis: "--merchant ID --mode test|live",
		about:    "Lists a merchant's keys of one mode as JSON (ids and prefixes, never the secrets).",
		vars:     databaseVars,
	})
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func runKey(ctx context.Context, e *env, args []string) error {
	fs := newFlags("key " + args[0])
	id := fs.String("merchant", "", "merchant id")
	var mode, kind, keyID *string
	var asJSON *bool
	switch args[0] {
	case "create":
		mode = fs.String("mode", "test", "test or live")
		kind = fs.String("kind", "secret", "secret or publishable")
		asJSON = fs.Bool("json", false, "print JSON")
	case "revoke":
		keyID = fs.String("key", "", "key id (key_...)")
	case "list":
		mode = fs.String("mode", "test", "test or live")
	}
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if *id == "" {
		return badUsage(e, fs, "--merchant is required")
	}
	if mode != nil && *mode != "test" && *mode != "live" {
		return badUsage(e, fs, "--mode is test or live")
	}
	if keyID != nil && *keyID == "" {
		return badUsage(e, fs, "--key is required")
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	switch args[0] {
	case "create":
		k, err := m.Merchants.CreateKeyByOperator(ctx, *id, *mode == "live", *kind)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(k)
		}
		fmt.Fprintf(e.stdout, "%s  %s (shown once)\n", k.ID, k.Secret)
		return nil
	case "revoke":
		if err := m.Merchants.RevokeKeyByOperator(ctx, *id, *keyID); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "key %s revoked\n", *keyID)
		return nil
	default: // list
		keys, err := m.Merchants.ListKeys(ctx, *id, *mode == "live")
		if err != nil {
			return err
		}
		return json.NewEncoder(e.stdout).Encode(keys)
	}
}
