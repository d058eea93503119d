package netguard

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"162.105.129.122", true},
		{"8.8.8.8", true},
		{"2001:da8:201::1", true},
		{"2606:4700::1111", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::8.8.8.8", true},
		{"2002:808:808::1", true},

		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.1.2.3", false},
		{"100.64.0.1", false},
		{"100.127.255.254", false},
		{"127.0.0.1", false},
		{"127.8.8.8", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"192.0.0.1", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},

		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false},
		{"::8.8.8.8", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:0:8.8.8.8", false},
		{"64:ff9b::127.0.0.1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"64:ff9b::10.0.0.1", false},
		{"64:ff9b::100.64.0.1", false},
		{"64:ff9b:1::8.8.8.8", false},
		{"100::1", false},
		{"2001::1", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"2001:2::1", false},
		{"2001:db8::1", false},
		{"2002:7f00:1::1", false},
		{"2002:a9fe:a9fe::1", false},
		{"2002:c0a8:101::1", false},
		{"3fff::1", false},
		{"fc00::1", false},
		{"fd00::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"2001:da8::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"ff0e::1", false},
	}
	for _, tc := range tests {
		if got := PublicAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("PublicAddr(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	if PublicAddr(netip.Addr{}) {
		t.Error("PublicAddr(zero Addr) = true, want false")
	}
}
