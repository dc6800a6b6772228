package rest

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Forwarding headers a trusted proxy may set (Config.ForwardedHeader).
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded"
)

// clientAddr tells clients apart: the connection's address, unless that address is a
// trusted proxy (Config.TrustedProxies); then the configured forwarding header is read
// from the right, and the first address that is not itself a trusted proxy is the
// client. Without trusted proxies no header is read: anyone can write one.
type clientAddr struct {
	trusted []netip.Prefix
	header  string
}

func (c clientAddr) of(r *http.Request) string {
	remote := remoteHost(r.RemoteAddr)
	if len(c.trusted) == 0 {
		return remote
	}
	addr, err := netip.ParseAddr(remote)
	if err != nil || !c.isTrusted(addr) {
		return remote
	}
	hops := c.hops(r.Header)
	client := addr
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(hops[i])
		if err != nil {
			// An unknown or obfuscated hop ends the chain: the last address a trusted
			// proxy vouched for is the client.
			break
		}
		client = hop.Unmap()
		if !c.isTrusted(client) {
			break
		}
	}
	return client.String()
}

func (c clientAddr) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// hops lists the addresses of the forwarding header, client first.
func (c clientAddr) hops(h http.Header) []string {
	var out []string
	if strings.EqualFold(c.header, HeaderForwarded) {
		for _, line := range h.Values(HeaderForwarded) {
			for _, elem := range strings.Split(line, ",") {
				out = append(out, forwardedFor(elem))
			}
		}
		return out
	}
	for _, line := range h.Values(HeaderXForwardedFor) {
		for _, a := range strings.Split(line, ",") {
			out = append(out, strings.TrimSpace(a))
		}
	}
	return out
}

// forwardedFor reads the for= node of one RFC 7239 element: 192.0.2.1,
// "[2001:db8::1]:4711" or "192.0.2.1:80"; "unknown" and obfuscated nodes give "".
func forwardedFor(elem string) string {
	for _, pair := range strings.Split(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if strings.HasPrefix(v, "[") {
			if end := strings.Index(v, "]"); end > 0 {
				return v[1:end]
			}
			return ""
		}
		if host, _, err := net.SplitHostPort(v); err == nil {
			return host
		}
		return v
	}
	return ""
}

func remoteHost(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

// ParseTrustedProxies reads a comma-separated list of CIDRs or single addresses
// (VIGIA_TRUSTED_PROXIES).
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
