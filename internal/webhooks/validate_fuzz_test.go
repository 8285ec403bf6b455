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
