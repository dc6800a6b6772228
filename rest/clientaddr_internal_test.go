package rest

import (
	"net/http"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	xff := clientAddr{trusted: proxies, header: HeaderXForwardedFor}
	fwd := clientAddr{trusted: proxies, header: HeaderForwarded}
	cases := []struct {
		name   string
		c      clientAddr
		remote string
		header map[string][]string
		want   string
	}{
		{"no trusted proxies: the header is ignored", clientAddr{header: HeaderXForwardedFor}, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "10.1.2.3"},
		{"an untrusted peer cannot name another client", xff, "203.0.113.9:5000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"a trusted proxy names the client", xff, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"a spoofed first hop is skipped: the rightmost untrusted address counts", xff, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"1.1.1.1, 198.51.100.1, 10.9.9.9"}}, "198.51.100.1"},
		{"several header lines are one list", xff, "192.0.2.7:80",
			map[string][]string{"X-Forwarded-For": {"1.1.1.1", "198.51.100.2"}}, "198.51.100.2"},
		{"a garbled hop ends the chain at the last trusted one", xff, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, not-an-address"}}, "10.1.2.3"},
		{"only trusted hops: the leftmost", xff, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"10.0.0.5, 10.0.0.6"}}, "10.0.0.5"},
		{"the other header is not read", xff, "10.1.2.3:5000",
			map[string][]string{"Forwarded": {"for=198.51.100.1"}}, "10.1.2.3"},
		{"Forwarded with port and quotes", fwd, "10.1.2.3:5000",
			map[string][]string{"Forwarded": {`for="198.51.100.1:4711";proto=https, for=10.0.0.8`}}, "198.51.100.1"},
		{"Forwarded IPv6", fwd, "10.1.2.3:5000",
			map[string][]string{"Forwarded": {`for="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::17"},
		{"Forwarded unknown node", fwd, "10.1.2.3:5000",
			map[string][]string{"Forwarded": {`for=unknown`}}, "10.1.2.3"},
		{"X-Forwarded-For is not read when Forwarded is configured", fwd, "10.1.2.3:5000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "10.1.2.3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
			for k, vs := range tc.header {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			if got := tc.c.of(r); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "example.org", "10.0.0.1/8/2"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
