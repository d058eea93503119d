// Package netguard decides which IP addresses the outgoing requests of plugins may reach: the one
// list that the interpreter's requests (interp) and the fetching of plugin files (plugin) check when
// dialling, after DNS, so that neither can be pointed into the host's own network (docs/DECISIONS.md
// §6).
package netguard

import "net/netip"

// blocked are the special-purpose ranges (IANA IPv4 and IPv6 special-purpose registries) that
// netip.Addr's predicates do not cover. IPv6 ranges that embed an IPv4 address we can decode
// (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) are not here: PublicAddr judges the embedded address.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 broadcast

	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated), with :: and ::1
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64: the embedding is the network's own
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an address we cannot judge
	netip.MustParsePrefix("2001:2::/48"),     // benchmarking
	netip.MustParsePrefix("2001:10::/28"),    // ORCHID (deprecated)
	netip.MustParsePrefix("2001:20::/28"),    // ORCHIDv2
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("5f00::/16"),       // SRv6 segment identifiers
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// PublicAddr reports whether a request may connect to addr: a valid unicast address that is not
// loopback, private (RFC 1918, fc00::/7), link-local, multicast, unspecified, broadcast or in
// another special-purpose range, and has no IPv6 zone. An IPv6 address that embeds an IPv4 one (IPv4-mapped
// ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::) is judged by that IPv4
// address, since that is where the packets end up.
func PublicAddr(addr netip.Addr) bool {
	if addr.Zone() != "" {
		return false // scoped to a local link; netip.Prefix.Contains never matches a zoned address
	}
	addr = addr.Unmap()
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return PublicAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixTo4.Contains(addr):
			return PublicAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !addr.IsValid() || addr.IsUnspecified() || addr.IsLoopback() || addr.IsPrivate() ||
		addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() ||
		addr.IsMulticast() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
