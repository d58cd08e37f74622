package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestRefusedSpecialPurposeRanges takes one address from each range of the
// IANA IPv4 and IPv6 Special-Purpose Address Registries (and multicast,
// broadcast and the space outside IPv6 global unicast), written out here
// rather than read from the guard's own table, and asserts that the guard
// refuses it, at save time (CheckURL) and at connect time (checkDial),
// unless private addresses are allowed.
func TestRefusedSpecialPurposeRanges(t *testing.T) {
	tests := []struct {
		rangeName string
		addr      string
		wantKind  string
	}{
		// IPv4.
		{"0.0.0.0/8 this network", "0.1.2.3", "unspecified"},
		{"0.0.0.0/32 this host", "0.0.0.0", "unspecified"},
		{"10.0.0.0/8 private", "10.255.255.254", "private"},
		{"100.64.0.0/10 shared", "100.127.255.254", "CGNAT"},
		{"127.0.0.0/8 loopback", "127.0.0.1", "loopback"},
		{"169.254.0.0/16 link-local", "169.254.169.254", "link-local"},
		{"172.16.0.0/12 private", "172.31.255.254", "private"},
		{"192.0.0.0/24 IETF protocol assignments", "192.0.0.9", "IETF"},
		{"192.0.0.0/29 DS-Lite", "192.0.0.2", "IETF"},
		{"192.0.0.170/32 NAT64 discovery", "192.0.0.170", "IETF"},
		{"192.0.2.0/24 TEST-NET-1", "192.0.2.1", "documentation"},
		{"192.31.196.0/24 AS112-v4", "192.31.196.1", "AS112"},
		{"192.52.193.0/24 AMT", "192.52.193.1", "AMT"},
		{"192.88.99.0/24 6to4 relay anycast", "192.88.99.1", "6to4 relay"},
		{"192.168.0.0/16 private", "192.168.1.1", "private"},
		{"192.175.48.0/24 AS112 direct delegation", "192.175.48.6", "AS112"},
		{"198.18.0.0/15 benchmarking (low)", "198.18.0.1", "benchmarking"},
		{"198.18.0.0/15 benchmarking (high)", "198.19.255.254", "benchmarking"},
		{"198.51.100.0/24 TEST-NET-2", "198.51.100.7", "documentation"},
		{"203.0.113.0/24 TEST-NET-3", "203.0.113.7", "documentation"},
		{"224.0.0.0/4 multicast (local)", "224.0.0.251", "multicast"},
		{"224.0.0.0/4 multicast (admin scoped)", "239.255.255.250", "multicast"},
		{"240.0.0.0/4 reserved", "240.0.0.1", "reserved"},
		{"240.0.0.0/4 reserved (high)", "255.255.255.254", "reserved"},
		{"255.255.255.255/32 limited broadcast", "255.255.255.255", "broadcast"},
		// IPv6.
		{"::/128 unspecified", "::", "unspecified"},
		{"::1/128 loopback", "::1", "loopback"},
		{"::ffff:0:0/96 IPv4-mapped", "::ffff:8.8.8.8", "IPv4-mapped"},
		{"::/96 IPv4-compatible", "::8.8.8.8", "IPv4-compatible"},
		{"64:ff9b::/96 NAT64", "64:ff9b::808:808", "NAT64"},
		{"64:ff9b:1::/48 NAT64 local use", "64:ff9b:1:ffff::1", "NAT64"},
		{"100::/64 discard-only", "100::1", "discard"},
		{"100:0:0:1::/64 dummy", "100:0:0:1::1", "dummy"},
		{"2001::/23 IETF protocol assignments", "2001:1::1", "IETF"},
		{"2001::/23 IETF protocol assignments (high)", "2001:1ff:ffff::1", "IETF"},
		{"2001::/32 Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"2001:2::/48 benchmarking", "2001:2::1", "benchmarking"},
		{"2001:3::/32 AMT", "2001:3::1", "IETF"},
		{"2001:4:112::/48 AS112-v6", "2001:4:112::1", "IETF"},
		{"2001:10::/28 ORCHID", "2001:10::1", "ORCHID"},
		{"2001:20::/28 ORCHIDv2", "2001:2f:ffff::1", "ORCHIDv2"},
		{"2001:30::/28 Drone Remote ID", "2001:30::1", "IETF"},
		{"2001:db8::/32 documentation", "2001:db8::1", "documentation"},
		{"2002::/16 6to4", "2002:808:808::1", "6to4"},
		{"2620:4f:8000::/48 AS112 direct delegation", "2620:4f:8000::1", "AS112"},
		{"3fff::/20 documentation", "3fff:fff::1", "documentation"},
		{"5f00::/16 SRv6 SIDs", "5f00::1", "SRv6"},
		{"fc00::/7 unique local", "fd00:ec2::254", "unique local"},
		{"fe80::/10 link-local", "fe80::1", "link-local"},
		{"fe80::/10 link-local with a zone", "fe80::1%eth0", "link-local"},
		{"fec0::/10 site-local", "fec0::1", "site-local"},
		{"ff00::/8 multicast", "ff02::1", "multicast"},
		{"ff00::/8 multicast (global)", "ff0e::1", "multicast"},
		{"outside 2000::/3", "4000::1", "reserved"},
		{"outside 2000::/3 (low)", "1::1", "reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.rangeName, func(t *testing.T) {
			assertRefused(t, tt.addr, tt.wantKind)
		})
	}
}

// TestRefusedIPv4Embeddings proves that an IPv6 address carrying an IPv4
// address is refused outright, whether the IPv4 address is the metadata
// service, loopback or public, in each form of embedding.
func TestRefusedIPv4Embeddings(t *testing.T) {
	embeddings := []struct {
		name     string
		wantKind string
		embed    func(v4 [4]byte) string
	}{
		{"IPv4-mapped ::ffff:0:0/96", "IPv4-mapped", func(b [4]byte) string {
			return netip.AddrFrom16(netip.AddrFrom4(b).As16()).String()
		}},
		{"IPv4-compatible ::/96", "IPv4-compatible", func(b [4]byte) string {
			return "::" + hex32(b)
		}},
		{"NAT64 64:ff9b::/96", "NAT64", func(b [4]byte) string {
			return "64:ff9b::" + hex32(b)
		}},
		{"NAT64 local use 64:ff9b:1::/48 (RFC 6052 /48 layout)", "NAT64", func(b [4]byte) string {
			// Prefix /48: v4 bits 0-15 in the 4th group, then the u octet, then bits 16-31.
			return netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 0, 1, b[0], b[1], 0, b[2], b[3]}).String()
		}},
		{"NAT64 local use 64:ff9b:1::/48 (/96 layout)", "NAT64", func(b [4]byte) string {
			return "64:ff9b:1::" + hex32(b)
		}},
		{"6to4 2002::/16", "6to4", func(b [4]byte) string {
			return "2002:" + hex32(b) + "::1"
		}},
		{"Teredo 2001::/32 (client address obfuscated)", "Teredo", func(b [4]byte) string {
			x := [4]byte{^b[0], ^b[1], ^b[2], ^b[3]}
			return "2001:0:4136:e378:8000:63bf:" + hex32(x)
		}},
	}
	carried := map[string][4]byte{
		"metadata 169.254.169.254": {169, 254, 169, 254},
		"loopback 127.0.0.1":       {127, 0, 0, 1},
		"private 10.0.0.1":         {10, 0, 0, 1},
		"public 8.8.8.8":           {8, 8, 8, 8},
	}
	for _, e := range embeddings {
		for name, v4 := range carried {
			addr := e.embed(v4)
			t.Run(e.name+"/"+name, func(t *testing.T) {
				if ip := netip.MustParseAddr(addr); !ip.Is6() {
					t.Fatalf("test address %s is not IPv6", addr)
				}
				assertRefused(t, addr, e.wantKind)
			})
		}
	}
}

// TestAllowedPublicAddresses is the other side: ordinary public addresses,
// including the ones just outside a refused range, are allowed.
func TestAllowedPublicAddresses(t *testing.T) {
	for _, addr := range []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34",
		"1.0.0.1",         // just past 0.0.0.0/8
		"100.63.255.255",  // just below 100.64.0.0/10
		"100.128.0.0",     // just above it
		"192.0.1.1",       // just past 192.0.0.0/24
		"198.17.255.255",  // just below 198.18.0.0/15
		"198.20.0.0",      // just above it
		"223.255.255.254", // just below multicast
		"2606:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::200e",
		"2001:200::1",  // just past 2001::/23
		"2003::1",      // just past 2002::/16
		"3ffe:ffff::1", // below 3fff::/20, still global unicast
	} {
		t.Run(addr, func(t *testing.T) {
			ip := netip.MustParseAddr(addr)
			if bad, kind := Refused(ip); bad {
				t.Fatalf("Refused(%s) = true (%s), want allowed", addr, kind)
			}
			if err := checkDial(netip.AddrPortFrom(ip, 443).String(), Refused); err != nil {
				t.Errorf("checkDial = %v", err)
			}
			if err := CheckURL("https://"+hostOf(ip)+"/hook", false); err != nil {
				t.Errorf("CheckURL = %v", err)
			}
		})
	}
}

// assertRefused checks that addr is refused with a kind mentioning
// wantKind by Refused, by checkDial and by CheckURL, and allowed by
// CheckURL when private addresses are allowed.
func assertRefused(t *testing.T, addr, wantKind string) {
	t.Helper()
	ip := netip.MustParseAddr(addr)
	bad, kind := Refused(ip)
	if !bad || !strings.Contains(kind, wantKind) {
		t.Fatalf("Refused(%s) = %v, %q; want true, a kind mentioning %q", addr, bad, kind, wantKind)
	}
	if err := checkDial(netip.AddrPortFrom(ip, 80).String(), Refused); !errors.Is(err, ErrRefused) {
		t.Errorf("checkDial(%s) = %v, want ErrRefused", addr, err)
	}
	raw := "http://" + hostOf(ip) + ":8080/hook"
	err := CheckURL(raw, false)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), wantKind) {
		t.Errorf("CheckURL(%s) = %v, want ErrRefused naming %q", raw, err, wantKind)
	}
	if err := CheckURL(raw, true); err != nil {
		t.Errorf("CheckURL(%s, allowPrivate) = %v, want allowed", raw, err)
	}
}

// hostOf writes ip as the host of a URL (brackets around IPv6, the zone
// escaped).
func hostOf(ip netip.Addr) string {
	if ip.Is4() {
		return ip.String()
	}
	return "[" + strings.Replace(ip.String(), "%", "%25", 1) + "]"
}

// hex32 writes four bytes as the two last groups of an IPv6 address.
func hex32(b [4]byte) string {
	return netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]}).String()[2:]
}
