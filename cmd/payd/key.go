package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func runKey(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: payd key create --merchant ID --mode test|live --kind secret|publishable [--json]\n       payd key revoke --merchant ID --key KEY_ID\n       payd key list --merchant ID --mode test|live")
		return errUsage
	}
	fs := flag.NewFlagSet("key "+args[0], flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	id := fs.String("merchant", "", "merchant id")
	mode := fs.String("mode", "test", "test or live")
	kind := fs.String("kind", "secret", "secret or publishable")
	keyID := fs.String("key", "", "key id (key_...)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args[1:]); err != nil || *id == "" || (*mode != "test" && *mode != "live") {
		fmt.Fprintln(e.stderr, "payd key: --merchant is required and --mode is test or live")
		return errUsage
	}
	m, err := open(ctx, e, "")
	if err != nil {
		return err
	}
	defer m.Close()
	switch args[0] {
	case "create":
		k, err := m.Merchants.CreateKey(ctx, *id, *mode == "live", *kind)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(k)
		}
		fmt.Fprintf(e.stdout, "%s  %s (shown once)\n", k.ID, k.Secret)
		return nil
	case "revoke":
		if *keyID == "" {
			return errUsage
		}
		if err := m.Merchants.RevokeKey(ctx, *id, *keyID); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "key %s revoked\n", *keyID)
		return nil
	case "list":
		keys, err := m.Merchants.ListKeys(ctx, *id, *mode == "live")
		if err != nil {
			return err
		}
		return json.NewEncoder(e.stdout).Encode(keys)
	}
	return errUsage
}
