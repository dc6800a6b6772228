package netguard_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// mapResolver answers from a fixed table; unknown names are NXDOMAIN.
type mapResolver map[string][]string

func (m mapResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	// Like real DNS, names are case-insensitive and may end in a dot.
	answers, ok := m[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return toIPAddrs(answers), nil
}

// sequenceResolver gives answers[i] on the i-th lookup (the last one after
// that) and counts lookups: the DNS-rebinding attacker.
type sequenceResolver struct {
	mu      sync.Mutex
	answers [][]string
	calls   int
}

func (s *sequenceResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.calls, len(s.answers)-1)
	s.calls++
	return toIPAddrs(s.answers[i]), nil
}

func (s *sequenceResolver) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func toIPAddrs(answers []string) []net.IPAddr {
	out := make([]net.IPAddr, 0, len(answers))
	for _, a := range answers {
		ip := netip.MustParseAddr(a)
		out = append(out, net.IPAddr{IP: net.IP(ip.AsSlice()), Zone: ip.Zone()})
	}
	return out
}

// MustListen opens a TCP listener on 127.0.0.1 that the test closes.
func MustListen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// requireAcceptedNothing proves ln has accepted no connection so far without
// waiting on a clock: it dials a sentinel and checks that the first
// connection in the (FIFO) accept queue is the sentinel itself.
func requireAcceptedNothing(tb testing.TB, ln net.Listener) {
	tb.Helper()
	sentinel, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatalf("dial sentinel: %v", err)
	}
	defer sentinel.Close()
	conn, err := ln.Accept()
	if err != nil {
		tb.Fatalf("accept: %v", err)
	}
	defer conn.Close()
	if conn.RemoteAddr().String() != sentinel.LocalAddr().String() {
		tb.Fatalf("listener accepted a connection before the sentinel")
	}
}

// portOf returns the port of a listener's address.
func portOf(tb testing.TB, ln net.Listener) string {
	tb.Helper()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		tb.Fatalf("split: %v", err)
	}
	return port
}
