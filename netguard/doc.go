// Package netguard is the one guarded dialer behind every outbound connection
// Vigia makes: webhook deliveries, ticket providers and customer databases.
//
// The guard works on addresses, not names: a host is resolved once, every
// resolved address is checked against a Policy, and the connection is opened
// to the checked address itself, so a DNS answer that changes between check
// and connect (rebinding) cannot reach an internal address. The operating
// system's connect is checked a second time through net.Dialer.Control.
//
// What is refused, whatever the Policy:
//   - unspecified (0.0.0.0/8, ::), multicast (224.0.0.0/4, ff00::/8),
//     broadcast and reserved (240.0.0.0/4), link-local (169.254.0.0/16,
//     fe80::/10) and cloud metadata (169.254.169.254, 169.254.170.2,
//     fd00:ec2::254, fd00:ec2::23, fd00:ec2::123, 100.100.100.200,
//     168.63.129.16);
//   - special-purpose ranges (192.0.0.0/24, AS112, AMT, 198.18.0.0/15
//     benchmarking, 192.88.99.0/24 6to4 relay, 100::/64 discard) and
//     documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
//     2001:db8::/32, 3fff::/20);
//   - IPv6 forms that embed an IPv4 address routed by a gateway we do not
//     control: NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16),
//     Teredo and the rest of 2001::/23, IPv4-compatible (::/96) and SIIT
//     (::ffff:0:0:0/96). An IPv4-mapped address (::ffff:a.b.c.d) is different:
//     the kernel connects to the embedded IPv4 address itself, so it is
//     unmapped and judged as that IPv4 address;
//   - any IPv6 address outside global unicast 2000::/3 that is not listed as
//     private below (deprecated site-local fec0::/10 included).
//
// Loopback (127.0.0.0/8, ::1) is admitted only for a host named in
// Policy.AllowHosts. Private ranges (10.0.0.0/8, 172.16.0.0/12,
// 192.168.0.0/16, fc00::/7 and CGNAT 100.64.0.0/10, the last being what
// overlay networks such as Tailscale hand out) are admitted with
// Policy.AllowPrivate or for an allowlisted host.
//
// Numeric host spellings are parsed the way the C library's inet_aton does
// (127.1, 2130706433, 0x7f000001, 0177.0.0.1) before any lookup, so a
// spelling trick is judged as the address it stands for. Errors name a
// category, never the host, the address or the URL.
package netguard
