package terminals

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/terminals/dukpt"
)

const (
	liveTDES = "A1B2C3D4E5F60718293A4B5C6D7E8F90"
	liveAES  = "00112233445566778899AABBCCDDEEFF"
)

func writeKeyFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p2pe.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKeysSandboxAndLive(t *testing.T) {
	k, err := NewKeys(writeKeyFile(t, `{"countertop":"`+liveTDES+`","mobile":"`+strings.ToLower(liveAES)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		live  bool
		model Model
		want  string
	}{{false, Countertop, SandboxBDKTDES}, {false, Mobile, SandboxBDKAES128}, {true, Countertop, liveTDES}, {true, Mobile, liveAES}} {
		got, err := k.BDK(c.live, c.model)
		want, _ := dukpt.ParseKey(c.want)
		if err != nil || !got.Equal(want) {
			t.Errorf("BDK(live=%v, %s): wrong key (err %v)", c.live, c.model, err)
		}
		if s := fmt.Sprintf("%v %+v %#v %s", got, got, got, got); strings.Contains(strings.ToUpper(s), c.want[:8]) {
			t.Errorf("a key prints its bytes: %s", s)
		}
	}
	if got := k.LiveModels(); len(got) != 2 {
		t.Errorf("live models %v", got)
	}
}

func TestKeysWithoutFile(t *testing.T) {
	k, err := NewKeys("")
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.BDK(true, Countertop)
	if e := errs.As(err); e == nil || e.Code != "p2pe_keys_unavailable" || e.Kind != errs.KindUnavailable {
		t.Fatalf("live BDK without a key file: %v", err)
	}
	if _, err := k.BDK(false, Mobile); err != nil {
		t.Fatalf("sandbox BDK: %v", err)
	}
}

func TestKeysOneModel(t *testing.T) {
	k, err := NewKeys(writeKeyFile(t, `{"mobile":"`+liveAES+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.BDK(true, Mobile); err != nil {
		t.Fatal(err)
	}
	if _, err := k.BDK(true, Countertop); !errs.IsCode(err, "p2pe_keys_unavailable") {
		t.Fatalf("countertop without a key: %v", err)
	}
}

// TestKeyFileErrors checks that every refusal names the problem and never
// repeats a key or the file's content.
func TestKeyFileErrors(t *testing.T) {
	secret := "DEADBEEFCAFEBABE0011223344556677"
	cases := map[string]string{
		"short key":         `{"countertop":"` + secret[:30] + `"}`,
		"long key":          `{"countertop":"` + secret + `00"}`,
		"not hex":           `{"countertop":"` + strings.Replace(secret, "D", "Z", 1) + `"}`,
		"unknown model":     `{"kiosk":"` + secret + `"}`,
		"key as the name":   `{"` + secret + `":"` + secret + `"}`,
		"not JSON":          secret,
		"truncated JSON":    `{"countertop":"` + secret,
		"a number":          `{"countertop":` + secret[8:16] + `}`,
		"empty":             `{}`,
		"the ANSI test key": `{"countertop":"` + SandboxBDKTDES + `"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewKeys(writeKeyFile(t, body))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := strings.ToUpper(err.Error())
			for _, leak := range []string{secret[:8], secret[8:16], secret[16:24], SandboxBDKTDES[:8], "DEADBEEF"} {
				if strings.Contains(msg, leak) {
					t.Fatalf("the error repeats key material: %v", err)
				}
			}
			if !strings.Contains(err.Error(), "P2PE key file") {
				t.Fatalf("the error does not say what failed: %v", err)
			}
		})
	}
	if _, err := NewKeys(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestKeysReloadKeepsKeysOnFailure(t *testing.T) {
	p := writeKeyFile(t, `{"countertop":"`+liveTDES+`"}`)
	k, err := NewKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"countertop":"nope"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := k.Reload(); err == nil {
		t.Fatal("reload accepted a bad file")
	}
	if _, err := k.BDK(true, Countertop); err != nil {
		t.Fatalf("a failed reload dropped the key in use: %v", err)
	}
	if err := os.WriteFile(p, []byte(`{"mobile":"`+liveAES+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := k.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.BDK(true, Countertop); err == nil {
		t.Fatal("a reload kept a key the file no longer holds")
	}
}

// TestKeyFileOpenToOthersRefused: a PAYD_P2PE_KEYS file whose mode gives
// anything to the group or to others is refused at start and on reload,
// with an error naming the file and not a key; 0600 and 0400 are read.
func TestKeyFileOpenToOthersRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o602, 0o660} {
		p := writeKeyFile(t, `{"countertop":"`+liveTDES+`"}`)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := NewKeys(p)
		if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), liveTDES[:12]) {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		p := writeKeyFile(t, `{"countertop":"`+liveTDES+`"}`)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := NewKeys(p); err != nil {
			t.Errorf("mode %04o refused: %v", mode, err)
		}
	}
	p := writeKeyFile(t, `{"countertop":"`+liveTDES+`"}`)
	k, err := NewKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := k.Reload(); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("reload of a file open to others: %v", err)
	}
	if _, err := k.BDK(true, Countertop); err != nil {
		t.Errorf("the refused reload dropped the keys: %v", err)
	}
}
