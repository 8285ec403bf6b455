package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		ip         string
		test, live bool // allowed in test mode, in live mode
	}{
		{"93.184.215.14", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", true, false},
		{"127.8.9.10", true, false},
		{"::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"10.0.0.1", false, false},
		{"172.16.5.4", false, false},
		{"192.168.1.1", false, false},
		{"fd00::1", false, false},
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"100.64.1.1", false, false},
		{"255.255.255.255", false, false},
		{"64:ff9b::a9fe:a9fe", false, false}, // NAT64 of 169.254.169.254
		{"64:ff9b::5db8:d70e", false, false}, // NAT64 of a public address: still not dialled directly
		{"::ffff:10.0.0.1", false, false},
		{"198.18.0.1", false, false},
		// IPv4-embedding IPv6 forms: refused whatever they embed.
		{"::127.0.0.1", false, false},                          // IPv4-compatible loopback
		{"::a9fe:a9fe", false, false},                          // IPv4-compatible metadata address
		{"::10.0.0.1", false, false},                           // IPv4-compatible private
		{"::93.184.215.14", false, false},                      // IPv4-compatible public: deprecated form, still refused
		{"::ffff:0:7f00:1", false, false},                      // IPv4-translated loopback
		{"::ffff:0:a9fe:a9fe", false, false},                   // IPv4-translated metadata address
		{"::ffff:0:5db8:d70e", false, false},                   // IPv4-translated public
		{"::ffff:a9fe:a9fe", false, false},                     // IPv4-mapped metadata address
		{"::ffff:7f00:1", true, false},                         // IPv4-mapped loopback is 127.0.0.1 itself
		{"64:ff9b::127.0.0.1", false, false},                   // NAT64 loopback
		{"64:ff9b::10.1.2.3", false, false},                    // NAT64 private
		{"64:ff9b:1::7f00:1", false, false},                    // local-use NAT64
		{"64:ff9b:1:a9fe:a9fe::", false, false},                // local-use NAT64, /48 layout
		{"2002:7f00:1::1", false, false},                       // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::", false, false},                     // 6to4 of 169.254.169.254
		{"2002:5db8:d70e::1", false, false},                    // 6to4 of a public address
		{"2001::1", false, false},                              // Teredo
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, false}, // Teredo, obfuscated client
		{"fe80::1%eth0", false, false},                         // a zone does not hide the range
		{"::127.0.0.1%1", false, false},
		{"2001:4860:4860::8888", true, true}, // public, just outside Teredo
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.ip)
		if err := checkAddr(ip, false); (err == nil) != c.test {
			t.Errorf("test mode %s: err=%v, want allowed=%v", c.ip, err, c.test)
		}
		if err := checkAddr(ip, true); (err == nil) != c.live {
			t.Errorf("live mode %s: err=%v, want allowed=%v", c.ip, err, c.live)
		} else if err != nil && !errors.Is(err, ErrAddressRefused) {
			t.Errorf("%s: error %v is not ErrAddressRefused", c.ip, err)
		}
	}
}

// TestValidateURLRefusesEmbeddedIPv4: registration refuses the IPv6 forms
// of refused IPv4 addresses with a 400 naming url.
func TestValidateURLRefusesEmbeddedIPv4(t *testing.T) {
	s := &Service{resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("offline") }}
	for _, h := range []string{"::127.0.0.1", "::ffff:0:7f00:1", "::a9fe:a9fe", "2001::1", "64:ff9b::a9fe:a9fe",
		"64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1", "::ffff:169.254.169.254", "::127.0.0.1%25lo"} {
		err := s.ValidateURL(context.Background(), "https://["+h+"]/hooks", true)
		if err == nil || !strings.Contains(err.Error(), "(url)") {
			t.Errorf("live https://[%s]/hooks: %v, want a refusal naming url", h, err)
		}
	}
}

// TestDialerChecksEveryConnection: the dialer refuses a disallowed address
// whatever the name resolved to at registration, and tries the next address
// of a name when one is refused.
func TestDialerChecksEveryConnection(t *testing.T) {
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "internal.example":
			return []netip.Addr{netip.MustParseAddr("10.1.1.1"), netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, errors.New("no such host")
	}
	c := newDeliveryClient(true, resolve, 2*time.Second, nil)
	for _, u := range []string{"https://internal.example/x", "https://127.0.0.1:1/x", "https://[::1]:1/x", "https://169.254.169.254/",
		"https://[::127.0.0.1]:1/x", "https://[::ffff:0:7f00:1]:1/x", "https://[::a9fe:a9fe]/", "https://[2001::1]/",
		"https://[64:ff9b::7f00:1]:1/", "https://[2002:7f00:1::]:1/"} {
		_, err := c.Post(u, "application/json", strings.NewReader("{}"))
		if err == nil || !errors.Is(err, ErrAddressRefused) {
			t.Errorf("live %s: %v, want refused", u, err)
		}
	}
	// A name resolving to an embedding form is refused at dial time too.
	rc := newDeliveryClient(true, func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::a9fe:a9fe"), netip.MustParseAddr("2001::1")}, nil
	}, 2*time.Second, nil)
	if _, err := rc.Post("https://rebind.example/", "application/json", strings.NewReader("{}")); !errors.Is(err, ErrAddressRefused) {
		t.Errorf("live name resolving to embedded forms: %v, want refused", err)
	}
	tc := newDeliveryClient(false, resolve, 2*time.Second, nil)
	if _, err := tc.Post("http://169.254.169.254/", "application/json", strings.NewReader("{}")); !errors.Is(err, ErrAddressRefused) {
		t.Errorf("test mode link-local: %v, want refused", err)
	}
	// Test mode may reach loopback: the dial goes out (and is refused by
	// the closed port, not by the policy).
	if _, err := tc.Post("http://127.0.0.1:1/", "application/json", strings.NewReader("{}")); err == nil || errors.Is(err, ErrAddressRefused) {
		t.Errorf("test mode loopback: %v, want a connection error", err)
	}
}

func TestRetryWait(t *testing.T) {
	s := &Service{schedule: []time.Duration{time.Second, time.Second, 2 * time.Second}}
	for n, want := range []time.Duration{time.Second, time.Second, 2 * time.Second} {
		for i := 0; i < 100; i++ {
			d, ok := s.retryWait(n + 1)
			if !ok || d < want || d > want+want/5 {
				t.Fatalf("retry %d: %s %v, want %s plus at most 20%%", n+1, d, ok, want)
			}
		}
	}
	// "1s,1s,2s" means four attempts: after the fourth, no retry.
	if _, ok := s.retryWait(4); ok {
		t.Fatal("a fifth attempt was scheduled")
	}
	s.noJitter = true
	if d, _ := s.retryWait(3); d != 2*time.Second {
		t.Fatalf("no jitter: %s", d)
	}
}

func TestKindOfID(t *testing.T) {
	cases := map[string]ObjectKind{
		"pi_01J": KindPaymentIntent, "po_01J": KindPayout, "po_bulk_01J": KindPayoutBatch, "batch_01J": KindPayoutBatch,
		"3f1c2b9e-8d4a-4c3b-9a1e-5b6c7d8e9f01": KindTransfer, "in_1": KindInvoice,
	}
	for id, want := range cases {
		if got, ok := KindOfID(id); !ok || got != want {
			t.Errorf("%s: %s %v, want %s", id, got, ok, want)
		}
	}
	for _, id := range []string{"", "evt_1", "term_1", "3f1c2b9e8d4a4c3b9a1e5b6c7d8e9f01"} {
		if k, ok := KindOfID(id); ok {
			t.Errorf("%q: kind %s, want none", id, k)
		}
	}
	for _, typ := range EventTypes() {
		if _, ok := KindOf(typ); !ok {
			t.Errorf("%s has no kind", typ)
		}
	}
}
