package interp

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// blockedPrefixes are the address ranges a plugin request may never reach,
// beyond what netip.Addr's predicates cover: shared address space (CGNAT),
// "this network", IETF protocol assignments, benchmarking, reserved and
// broadcast, NAT64 well-known prefix mapping to private space is covered by
// unmapping.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// PublicAddr reports whether a plugin request may connect to addr: not
// loopback, private (RFC 1918, fc00::/7), link-local, multicast,
// unspecified, CGNAT or reserved. IPv4-mapped IPv6 addresses are judged as
// IPv4.
func PublicAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// dialControl refuses non-public addresses at dial time, after DNS
// resolution, so a host name that resolves (or re-resolves) to a private
// address is refused too.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to dial %s: %v", address, err)
	}
	if !PublicAddr(ap.Addr()) {
		return fmt.Errorf("refusing to dial %s: not a public address", ap.Addr())
	}
	return nil
}

// NewTransport returns the http.Transport plugin requests use when
// Options.Transport is nil. It ignores proxy settings from the environment,
// requires TLS 1.2 or later, and, unless allowPrivate is set (tests only),
// refuses loopback and private addresses at dial time (see PublicAddr).
func NewTransport(allowPrivate bool) *http.Transport {
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = dialControl
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

// defaultTransport and privateTransport are shared so connections are reused
// across runs.
var (
	defaultTransport = NewTransport(false)
	privateTransport = NewTransport(true)
)

// hostAllowed reports whether host (lower case, no port) matches one of the
// manifest's network entries (seed 004 "What the plugin declares",
// SPEC-DECISIONS §6): "example.com" matches only itself; "*.example.com"
// matches any subdomain of example.com but not example.com itself.
func hostAllowed(network []string, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, h := range network {
		h = strings.ToLower(strings.TrimSpace(h))
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(host, "."+rest) && len(host) > len(rest)+1 {
				return true
			}
			continue
		}
		if host == h {
			return true
		}
	}
	return false
}

// checkURL returns a message saying why a public request to u is refused,
// or "" when it is allowed: only https, only the default port, only hosts in
// network.
func checkURL(network []string, u *url.URL) string {
	if u.Scheme != "https" {
		scheme := u.Scheme
		if scheme == "" {
			scheme = "no scheme"
		}
		return fmt.Sprintf("%s: only https is allowed (got %s)", u.Redacted(), scheme)
	}
	if p := u.Port(); p != "" && p != "443" {
		return fmt.Sprintf("%s: only the default https port is allowed", u.Redacted())
	}
	if !hostAllowed(network, u.Hostname()) {
		return fmt.Sprintf("host %s is not in network", u.Hostname())
	}
	return ""
}
