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

	"github.com/pkuinfo/harness/internal/netguard"
)

// PublicAddr reports whether a plugin request may connect to addr: not loopback, private,
// link-local, multicast, unspecified, broadcast or another special-purpose range, with the IPv4
// address inside IPv4-mapped, NAT64 and 6to4 addresses judged as IPv4. It is
// netguard.PublicAddr, the list plugin files are fetched under too.
func PublicAddr(addr netip.Addr) bool { return netguard.PublicAddr(addr) }

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
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    15 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		MaxResponseHeaderBytes: MaxResponseHeader,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
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
// docs/DECISIONS.md §6): "example.com" matches only itself; "*.example.com"
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
