package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzValidateURL: whatever the input, an accepted live URL is https with a
// host that is a name or an allowed address, and refusals are 400s naming
// url.
func FuzzValidateURL(f *testing.F) {
	for _, s := range []string{"https://example.com/hooks", "http://localhost:4242/x", "https://127.0.0.1/", "https://[::1]/",
		"https://10.0.0.1/", "ftp://x/", "https://u:p@example.com/", "https://example.com:99999/", "https:///x", "//example.com"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	s := &Service{resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("offline") }}
	f.Fuzz(func(t *testing.T, raw string, live bool) {
		err := s.ValidateURL(context.Background(), raw, live)
		if err != nil {
			if !strings.Contains(err.Error(), "(url)") {
				t.Fatalf("refusal does not name url: %v", err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("accepted unparsable %q", raw)
		}
		if live && u.Scheme != "https" {
			t.Fatalf("accepted live %q", raw)
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			t.Fatalf("accepted scheme of %q", raw)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			if checkAddr(ip, live) != nil {
				t.Fatalf("accepted address %s (live %v)", ip, live)
			}
		} else if h := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")); live && (h == "localhost" || strings.HasSuffix(h, ".localhost")) {
			t.Fatalf("accepted live %q", raw)
		}
	})
}

// FuzzEmbeddedIPv4: any IPv6 address that carries a refused IPv4 address
// (IPv4-compatible, IPv4-mapped, IPv4-translated, NAT64, local-use NAT64,
// 6to4) is refused, and so is every Teredo address, in both modes.
func FuzzEmbeddedIPv4(f *testing.F) {
	for _, v4 := range [][4]byte{{127, 0, 0, 1}, {169, 254, 169, 254}, {10, 0, 0, 1}, {93, 184, 215, 14}, {0, 0, 0, 1}, {0, 0, 0, 0}} {
		for form := byte(0); form < 7; form++ {
			f.Add(v4[0], v4[1], v4[2], v4[3], form, uint64(1), false)
			f.Add(v4[0], v4[1], v4[2], v4[3], form, uint64(0), true)
		}
	}
	f.Fuzz(func(t *testing.T, a, b, c, d, form byte, rest uint64, live bool) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		var x [16]byte
		place := func(at int) { copy(x[at:at+4], []byte{a, b, c, d}) }
		teredoForm := false
		switch form % 7 {
		case 0: // IPv4-compatible ::a.b.c.d
			place(12)
		case 1: // IPv4-mapped ::ffff:a.b.c.d
			x[10], x[11] = 0xff, 0xff
			place(12)
		case 2: // IPv4-translated ::ffff:0:a.b.c.d
			x[8], x[9] = 0xff, 0xff
			place(12)
		case 3: // NAT64 64:ff9b::a.b.c.d
			x[0], x[1], x[2], x[3] = 0x00, 0x64, 0xff, 0x9b
			place(12)
		case 4: // local-use NAT64 64:ff9b:1::/48, IPv4 after the /48 and free bits after
			x[0], x[1], x[2], x[3], x[4], x[5] = 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01
			place(6)
			for i := 0; i < 6; i++ {
				x[10+i] = byte(rest >> (8 * i))
			}
		case 5: // 6to4 2002:a.b.c.d::/48, free subnet and interface bits
			x[0], x[1] = 0x20, 0x02
			place(2)
			for i := 0; i < 8; i++ {
				x[6+i] = byte(rest >> (8 * i))
			}
		case 6: // Teredo 2001:0:server:flags:port:client, everything free
			teredoForm = true
			x[0], x[1] = 0x20, 0x01
			place(4)
			for i := 0; i < 8; i++ {
				x[8+i] = byte(rest >> (8 * i))
			}
		}
		v6 := netip.AddrFrom16(x)
		if v6 == netip.IPv6Loopback() || v6 == netip.IPv6Unspecified() {
			// ::1 and :: are not IPv4-compatible addresses; ::1 is loopback.
			return
		}
		err6 := checkAddr(v6, live)
		if teredoForm && err6 == nil {
			t.Fatalf("Teredo address %s accepted (live %v)", v6, live)
		}
		if err6 == nil && checkAddr(v4, live) != nil {
			t.Fatalf("%s accepted but its embedded %s is refused (live %v)", v6, v4, live)
		}
		if err6 != nil && !errors.Is(err6, ErrAddressRefused) {
			t.Fatalf("%s: %v is not ErrAddressRefused", v6, err6)
		}
	})
}
