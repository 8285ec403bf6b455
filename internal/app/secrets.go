package app

import (
	"context"
	"fmt"

	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// resolveSecretsKey decides the key that seals provider credentials, webhook
// signing secrets and TOTP secrets at rest: PAYD_SECRETS_KEY, else the file
// PAYD_SECRETS_KEY_FILE, else (SQLite only) the file <database path>.key,
// created with a new random key on first use. It returns the key ("" when
// none: PostgreSQL without a key) and where it came from, for messages.
func resolveSecretsKey(cfg Config) (key, source string, err error) {
	switch {
	case cfg.SecretsKey != "":
		return cfg.SecretsKey, "PAYD_SECRETS_KEY", nil
	case cfg.SecretsKeyFile != "":
		key, err := secretbox.ReadKeyFile(cfg.SecretsKeyFile)
		return key, "PAYD_SECRETS_KEY_FILE " + cfg.SecretsKeyFile, err
	}
	path := store.SQLitePath(cfg.DatabaseURL)
	if path == "" {
		return "", "", nil
	}
	key, _, err = secretbox.KeyFile(path + ".key")
	return key, "the key file " + path + ".key", err
}

// checkSecretsKey compares the key's check value with the one the database
// recorded when it was first opened with a key, recording it if there is
// none. A process with another key, or without one on a database that has
// one, is refused: it could not open what the others sealed.
func checkSecretsKey(ctx context.Context, db *store.DB, key, source string) error {
	if key == "" {
		var recorded string
		err := db.QueryRow(ctx, `SELECT value FROM instance_facts WHERE name = 'secrets_key_check'`).Scan(&recorded)
		if store.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("this database's secrets are sealed with a key (check value %s), and none is configured: "+
			"set PAYD_SECRETS_KEY or PAYD_SECRETS_KEY_FILE to it (every process sharing a PostgreSQL database needs the same key)", recorded)
	}
	check, err := secretbox.CheckValue(key)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	var recorded string
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO instance_facts (name, value, created_at) VALUES ('secrets_key_check', ?, ?)
			ON CONFLICT (name) DO NOTHING`, check, store.Micros(tx.Now())); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM instance_facts WHERE name = 'secrets_key_check'`).Scan(&recorded)
	})
	if err != nil {
		return err
	}
	if recorded != check {
		return fmt.Errorf("the secrets key from %s (check value %s) is not the key this database's secrets are sealed with (check value %s): "+
			"start payd with the database's key", source, check, recorded)
	}
	return nil
}
