package card

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadNeverRevealsCardData prints, logs and marshals a Read every way the
// service might and checks that only the brand and last four digits appear.
func TestReadNeverRevealsCardData(t *testing.T) {
	const pan = "4111111111111111"
	ac := []byte{0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x23, 0x45, 0x67}
	data, err := EncodeChipRead(pan, 2029, time.July, ac, 500, "262")
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromTLV(data)
	if err != nil {
		t.Fatal(err)
	}
	type payment struct {
		ID   string
		Card Read
		card Read
		ptr  *Read
	}
	p := payment{ID: "pi_1", Card: r, card: r, ptr: &r}

	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		outputs = append(outputs, fmt.Sprintf(verb, r), fmt.Sprintf(verb, &r), fmt.Sprintf(verb, p), fmt.Sprintf(verb, &p))
	}
	outputs = append(outputs, r.String(), r.GoString(), fmt.Sprint(r), fmt.Sprintln(r, p),
		fmt.Sprintf("%v", []Read{r}), fmt.Sprintf("%v", map[string]Read{"k": r}))
	wrapped := fmt.Errorf("charging %v: %w", r, errors.New("declined"))
	outputs = append(outputs, wrapped.Error())
	for _, v := range []any{r, &r, p, []Read{r}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(j))
	}
	var logs bytes.Buffer
	// Without their timestamps, whose digits may hold a secret's by chance.
	noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, noTime), slog.NewTextHandler(&logs, noTime)} {
		l := slog.New(h)
		l.Info("read", "card", r, "payment", p, "ptr", &r)
		l.Info("read", slog.Any("card", r), slog.Group("g", "card", r))
	}
	outputs = append(outputs, logs.String())

	secrets := []string{pan, pan[:6], "11111111", hex.EncodeToString(r.Track2()), hex.EncodeToString(ac),
		"deadbeef", "DEADBEEF", "222 173 190 239", "2907"}
	// A pointer field printed with %d, %x or %X shows its address, whose
	// digits may hold a secret's by chance (an address with "2907" in it):
	// the address is not card data, so it is taken out before the check.
	addr := uint64(reflect.ValueOf(&r).Pointer())
	addrs := []string{strconv.FormatUint(addr, 10), strconv.FormatUint(addr, 16)}
	for _, out := range outputs {
		out = strings.ToLower(out)
		for _, a := range addrs {
			out = strings.ReplaceAll(out, a, "<address>")
		}
		for _, s := range secrets {
			if strings.Contains(out, strings.ToLower(s)) {
				t.Errorf("output reveals %q: %s", s, out)
			}
		}
	}
	if want := "card.Read{brand: visa, last4: 1111}"; r.String() != want {
		t.Errorf("String() = %q, want %q", r.String(), want)
	}
	if j, _ := json.Marshal(r); string(j) != `{"brand":"visa","last4":"1111"}` {
		t.Errorf("json = %s", j)
	}
}

// TestReadAccessorsCopy checks that callers cannot change a Read through returned slices.
func TestReadAccessorsCopy(t *testing.T) {
	data, _ := EncodeChipRead("4242424242424242", 2028, time.December, testCryptogram, 1, "262")
	r, err := FromTLV(data)
	if err != nil {
		t.Fatal(err)
	}
	r.Cryptogram()[0] ^= 0xff
	r.Track2()[0] ^= 0xff
	if !bytes.Equal(r.Cryptogram(), testCryptogram) || r.Track2()[0] != 0x42 {
		t.Error("accessors returned the Read's own storage")
	}
	// The decrypted buffer can be wiped after FromTLV without changing the Read.
	for i := range data {
		data[i] = 0
	}
	if r.PAN() != "4242424242424242" || !bytes.Equal(r.Cryptogram(), testCryptogram) {
		t.Error("Read aliases the decrypted payload")
	}
	var zero Read
	if zero.PAN() != "" || zero.Cryptogram() != nil || zero.Track2() != nil || zero.CurrencyNumeric() != "" {
		t.Error("zero Read accessors")
	}
	if _, ok := zero.AmountMinor(); ok || !zero.ExpiredAt(time.Now()) {
		t.Error("zero Read amount or expiry")
	}
}
