package netguard

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// ErrRefused is matched (errors.Is) by every refusal of a destination.
var ErrRefused = errors.New("netguard: destination refused")

// ErrUnresolvable is matched (errors.Is) when a host name has no address.
var ErrUnresolvable = errors.New("netguard: destination unresolvable")

// Reasons a destination is refused; they name a category and never the address.
const (
	ReasonLoopback       = "loopback"
	ReasonPrivate        = "private"
	ReasonLinkLocal      = "link_local"
	ReasonMetadata       = "cloud_metadata"
	ReasonUnspecified    = "unspecified"
	ReasonMulticast      = "multicast"
	ReasonReserved       = "reserved"
	ReasonDocumentation  = "documentation"
	ReasonIPv4Embedding  = "ipv4_embedding"
	ReasonInvalidAddress = "invalid_address"
	ReasonNetwork        = "network"
)

// RefusedError is a refusal with its category; errors.Is(err, ErrRefused) holds.
type RefusedError struct {
	Reason string // one of the Reason* constants
}

// Error names the category only.
func (e *RefusedError) Error() string { return "netguard: destination refused (" + e.Reason + ")" }

// Is makes every RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refused(reason string) error { return &RefusedError{Reason: reason} }

// Policy says which destinations beyond the public internet a caller may reach.
type Policy struct {
	// AllowPrivate admits private ranges (RFC 1918, fc00::/7, CGNAT). Customer
	// databases are often self-hosted, so sources turn it on; webhooks do not.
	AllowPrivate bool
	// AllowHosts names hosts (or IP literals) that may also resolve to
	// loopback and private addresses: for local development and tests only
	// (VIGIA_WEBHOOK_ALLOW_HOSTS). Matching ignores case and a trailing dot.
	AllowHosts []string
}

// class is what an address is, before any policy applies.
type class int

const (
	classPublic class = iota
	classPrivate
	classLoopback
	classForbidden
)

type prefixReason struct {
	p      netip.Prefix
	reason string
}

func pr(s, reason string) prefixReason { return prefixReason{netip.MustParsePrefix(s), reason} }

// metadataPrefixes are cloud metadata and host-agent endpoints; they are
// checked first so that no allowance (private, allowlisted host) admits them.
var metadataPrefixes = []prefixReason{
	pr("169.254.169.254/32", ReasonMetadata), // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
	pr("169.254.170.2/32", ReasonMetadata),   // AWS ECS task metadata
	pr("100.100.100.200/32", ReasonMetadata), // Alibaba Cloud
	pr("168.63.129.16/32", ReasonMetadata),   // Azure wire server (a public address)
	pr("fd00:ec2::254/128", ReasonMetadata),  // AWS IMDS over IPv6
	pr("fd00:ec2::23/128", ReasonMetadata),   // AWS DNS resolver over IPv6
	pr("fd00:ec2::123/128", ReasonMetadata),  // AWS time sync over IPv6
}

// v4Forbidden are IPv4 ranges no policy admits.
var v4Forbidden = []prefixReason{
	pr("0.0.0.0/8", ReasonUnspecified),
	pr("169.254.0.0/16", ReasonLinkLocal),
	pr("192.0.0.0/24", ReasonReserved), // IETF protocol assignments
	pr("192.0.2.0/24", ReasonDocumentation),
	pr("192.31.196.0/24", ReasonReserved), // AS112
	pr("192.52.193.0/24", ReasonReserved), // AMT
	pr("192.88.99.0/24", ReasonIPv4Embedding),
	pr("192.175.48.0/24", ReasonReserved), // AS112 direct delegation
	pr("198.18.0.0/15", ReasonReserved),   // benchmarking
	pr("198.51.100.0/24", ReasonDocumentation),
	pr("203.0.113.0/24", ReasonDocumentation),
	pr("224.0.0.0/4", ReasonMulticast),
	pr("240.0.0.0/4", ReasonReserved), // includes broadcast 255.255.255.255
}

var v4Private = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"),
}

var v4Loopback = netip.MustParsePrefix("127.0.0.0/8")

// v6Forbidden are IPv6 ranges no policy admits. Order matters: the more
// specific NAT64 and embedding prefixes come before the broad ones.
var v6Forbidden = []prefixReason{
	pr("64:ff9b::/96", ReasonIPv4Embedding),    // NAT64 well-known prefix
	pr("64:ff9b:1::/48", ReasonIPv4Embedding),  // NAT64 local-use prefix
	pr("::ffff:0:0:0/96", ReasonIPv4Embedding), // SIIT
	pr("::/96", ReasonIPv4Embedding),           // IPv4-compatible (deprecated); :: and ::1 are handled before
	pr("100::/64", ReasonReserved),             // discard-only
	pr("2001::/32", ReasonIPv4Embedding),       // Teredo
	pr("2002::/16", ReasonIPv4Embedding),       // 6to4
	pr("2001:db8::/32", ReasonDocumentation),
	pr("3fff::/20", ReasonDocumentation),
	pr("2001::/23", ReasonReserved),         // IETF protocol assignments
	pr("2620:4f:8000::/48", ReasonReserved), // AS112
	pr("fe80::/10", ReasonLinkLocal),
	pr("fec0::/10", ReasonReserved), // deprecated site-local
	pr("ff00::/8", ReasonMulticast),
}

var (
	v6ULA           = netip.MustParsePrefix("fc00::/7")
	v6GlobalUnicast = netip.MustParsePrefix("2000::/3")
)

// classify says what ip is; reason is set for classForbidden.
func classify(ip netip.Addr) (c class, reason string) {
	if !ip.IsValid() {
		return classForbidden, ReasonInvalidAddress
	}
	c, reason = classifyUnzoned(ip.WithZone("").Unmap())
	if ip.Zone() != "" && c != classForbidden {
		// A zone only makes sense for link-local scopes we never reach.
		return classForbidden, ReasonInvalidAddress
	}
	return c, reason
}

// classifyUnzoned classifies an address without zone, IPv4-mapped already
// unmapped: the kernel connects a mapped address to the IPv4 address itself.
func classifyUnzoned(ip netip.Addr) (c class, reason string) {
	for _, m := range metadataPrefixes {
		if m.p.Contains(ip) {
			return classForbidden, m.reason
		}
	}
	if ip.Is4() {
		if v4Loopback.Contains(ip) {
			return classLoopback, ReasonLoopback
		}
		for _, f := range v4Forbidden {
			if f.p.Contains(ip) {
				return classForbidden, f.reason
			}
		}
		for _, p := range v4Private {
			if p.Contains(ip) {
				return classPrivate, ReasonPrivate
			}
		}
		return classPublic, ""
	}
	switch {
	case ip == netip.IPv6Unspecified():
		return classForbidden, ReasonUnspecified
	case ip == netip.IPv6Loopback():
		return classLoopback, ReasonLoopback
	}
	for _, f := range v6Forbidden {
		if f.p.Contains(ip) {
			return classForbidden, f.reason
		}
	}
	if v6ULA.Contains(ip) {
		return classPrivate, ReasonPrivate
	}
	if !v6GlobalUnicast.Contains(ip) {
		return classForbidden, ReasonReserved
	}
	return classPublic, ""
}

// CheckAddr reports whether ip may be reached as host under p. host is the
// name or literal the caller asked for; it matters only for AllowHosts. The error matches ErrRefused and names a category only.
func (p Policy) CheckAddr(host string, ip netip.Addr) error {
	c, reason := classify(ip)
	switch c {
	case classPublic:
		return nil
	case classPrivate:
		if p.AllowPrivate || p.allowsHost(host) {
			return nil
		}
	case classLoopback:
		if p.allowsHost(host) {
			return nil
		}
	}
	return refused(reason)
}

// allowsHost reports whether host is allowlisted. An IP-literal entry admits
// only a destination spelled as that literal, never a name resolving to it.
func (p Policy) allowsHost(host string) bool {
	h := normalizeHost(host)
	if h == "" {
		return false
	}
	hAddr, hErr := netip.ParseAddr(h)
	for _, a := range p.AllowHosts {
		a = normalizeHost(a)
		if a == h {
			return true
		}
		if hErr != nil {
			continue
		}
		if lit, err := netip.ParseAddr(a); err == nil && lit.Unmap() == hAddr.Unmap() {
			return true
		}
	}
	return false
}

func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	h = strings.TrimPrefix(h, "[")
	h = strings.TrimSuffix(h, "]")
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}

// ParseAllowHosts splits a setting such as VIGIA_WEBHOOK_ALLOW_HOSTS
// ("localhost, receiver.test") into host names, dropping empty entries.
func ParseAllowHosts(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if h := normalizeHost(f); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// parseHostAddr reads host as an address literal the way the OS would:
// bracketed or bare IPv6, and IPv4 in every inet_aton spelling. numeric is
// true when host must be an address (it is a literal, or its last label is a
// number, which the WHATWG URL standard also treats as an IPv4 host); ok is
// false when such a host is not a valid address.
func parseHostAddr(host string) (ip netip.Addr, numeric, ok bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		return a, true, err == nil
	}
	h = strings.TrimSuffix(h, ".")
	labels := strings.Split(h, ".")
	if !isNumberLabel(labels[len(labels)-1]) {
		return netip.Addr{}, false, false
	}
	a, good := parseIPv4Loose(labels)
	return a, true, good
}

// isNumberLabel reports whether a label is a decimal, octal or hex number.
func isNumberLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0X") {
		for _, r := range l[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
		return true
	}
	for _, r := range l {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// parseIPv4Loose implements inet_aton: one to four parts, each decimal,
// octal (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseIPv4Loose(parts []string) (netip.Addr, bool) {
	if len(parts) < 1 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		v, ok := parseIPv4Part(s)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseIPv4Part(s string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || strings.ContainsAny(s, "+-_") {
		return 0, false
	}
	v, err := strconv.ParseUint(s, base, 32)
	return v, err == nil
}
