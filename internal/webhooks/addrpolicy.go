package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Where deliveries may go: live endpoints only to public
// addresses over https; test-mode endpoints also to loopback (a developer's
// receiver on localhost) over http or https. Neither mode reaches private,
// link-local (cloud metadata at 169.254.169.254), unspecified, multicast or
// reserved addresses. The check runs on the address actually dialled, after
// DNS resolution, so a name that resolves to a public address at registration
// and to an internal one later (DNS rebinding) is still refused.

// ErrAddressRefused is returned when a delivery target is not allowed.
var ErrAddressRefused = errors.New("webhook target address refused")

// IPv6 forms that carry an IPv4 address (RFC 4291, RFC 6052, RFC 3056,
// RFC 4380). A packet to one of them can end up at the embedded IPv4 address
// (through a translator, a relay or an operating system that still honours
// the deprecated forms), so each is checked as its embedded address first and
// then refused as a range in both modes: a receiver has a real public IPv4 or
// IPv6 address and never needs them. IPv4-mapped ::ffff:a.b.c.d is not here:
// it is the IPv4 address itself and is unmapped before any check.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")           // ::a.b.c.d, deprecated (:: and ::1 excepted)
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // ::ffff:0:a.b.c.d (SIIT)
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")    // NAT64, IPv4 in the last 32 bits
	nat64LocalUse  = netip.MustParsePrefix("64:ff9b:1::/48")  // local-use NAT64, IPv4 position depends on the operator's prefix length
	sixToFour      = netip.MustParsePrefix("2002::/16")       // 6to4, IPv4 in bits 16-47
	teredo         = netip.MustParsePrefix("2001::/32")       // Teredo: server IPv4 in bits 32-63, client IPv4 obfuscated
)

// extra ranges that are not public unicast but that netip's predicates miss.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (shared address space)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	ipv4Compatible,
	ipv4Translated,
	nat64WellKnown,
	nat64LocalUse,
	sixToFour,
	teredo,
	netip.MustParsePrefix("100::/64"),      // discard-only
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("fec0::/10"),     // deprecated site-local
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, if it is
// one of the embedding forms whose IPv4 sits at a fixed place. Teredo and
// local-use NAT64 are refused as whole prefixes and need no extraction.
func embeddedIPv4(ip netip.Addr) (netip.Addr, string, bool) {
	if !ip.Is6() || ip.Is4In6() {
		return netip.Addr{}, "", false
	}
	b := ip.As16()
	switch {
	case ipv4Compatible.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "IPv4-compatible", true
	case ipv4Translated.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "IPv4-translated", true
	case nat64WellKnown.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "NAT64", true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4", true
	}
	return netip.Addr{}, "", false
}

// checkAddr says whether a delivery may connect to ip in the given mode.
func checkAddr(ip netip.Addr, livemode bool) error {
	// A zone (fe80::1%eth0) would make every Prefix.Contains below false.
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrAddressRefused)
	}
	if v4, form, ok := embeddedIPv4(ip); ok {
		if err := checkAddr(v4, livemode); err != nil {
			return fmt.Errorf("%w: %s embeds, in %s form, a refused address: %s", ErrAddressRefused, ip, form, addrReason(err))
		}
		return fmt.Errorf("%w: %s embeds the IPv4 address %s in %s form (use the IPv4 address itself)", ErrAddressRefused, ip, v4, form)
	}
	switch {
	case ip.IsLoopback():
		if livemode {
			return fmt.Errorf("%w: %s is a loopback address (live endpoints must be public)", ErrAddressRefused, ip)
		}
		return nil
	case ip.IsUnspecified():
		return fmt.Errorf("%w: %s is the unspecified address", ErrAddressRefused, ip)
	case ip.IsPrivate():
		return fmt.Errorf("%w: %s is a private address", ErrAddressRefused, ip)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is a link-local address", ErrAddressRefused, ip)
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return fmt.Errorf("%w: %s is a multicast address", ErrAddressRefused, ip)
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in the reserved range %s", ErrAddressRefused, ip, p)
		}
	}
	return nil
}

// Resolver looks up a host's addresses (net.DefaultResolver in production;
// tests substitute one to simulate DNS rebinding).
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

func defaultResolver(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// guardedDialer resolves the host itself, refuses any address the mode does
// not allow, and dials only an allowed address; the dialer's Control hook
// checks the socket's address once more at connect time.
type guardedDialer struct {
	livemode bool
	resolve  Resolver
	dialer   net.Dialer
}

func newGuardedDialer(livemode bool, resolve Resolver) *guardedDialer {
	g := &guardedDialer{livemode: livemode, resolve: resolve}
	g.dialer = net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot parse %q", ErrAddressRefused, address)
			}
			return checkAddr(ap.Addr(), livemode)
		}}
	return g
}

// DialContext implements http.Transport's DialContext.
func (g *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		if addrs, err = g.resolve(ctx, host); err != nil {
			return nil, err
		}
	}
	var firstErr error
	for _, ip := range addrs {
		if err := checkAddr(ip, g.livemode); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil || errors.Is(firstErr, ErrAddressRefused) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no address for %s", host)
	}
	return nil, firstErr
}

// newDeliveryClient returns the HTTP client for one mode: the guarded
// dialer, no proxy (a proxy would dial on our behalf, unchecked), no
// redirects (a 3xx is an answer that is not 2xx, and following it could
// leave the allowed addresses), and the 5-second limit of a delivery.
func newDeliveryClient(livemode bool, resolve Resolver, timeout time.Duration, tlsConfig *tls.Config) *http.Client {
	g := newGuardedDialer(livemode, resolve)
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSClientConfig:       tlsConfig,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
