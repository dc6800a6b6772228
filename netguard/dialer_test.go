package netguard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/netguard"
)

func TestDialContextAdmitsAllowlistedLocalhost(t *testing.T) {
	ln := MustListen(t)
	// The system resolver: localhost comes from /etc/hosts, as in development.
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"localhost"}}, nil)
	conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("localhost", portOf(t, ln)))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	accepted.Close()
}

func TestDialContextResolvesOnceAndConnectsToCheckedAddress(t *testing.T) {
	ln := MustListen(t)
	// A second lookup would get an address nothing listens on; connecting
	// by name again would therefore fail.
	r := &sequenceResolver{answers: [][]string{{"127.0.0.1"}, {"127.0.0.2"}}}
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"receiver.test"}}, r)
	conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("receiver.test", portOf(t, ln)))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.Close()
	if r.Calls() != 1 {
		t.Fatalf("resolver called %d times, want 1", r.Calls())
	}
}

func TestDialContextRefusesLoopbackWithoutAllowlist(t *testing.T) {
	ln := MustListen(t)
	port := portOf(t, ln)
	d := netguard.NewDialer(netguard.Policy{AllowPrivate: true}, mapResolver{"localhost": {"127.0.0.1"}})
	for _, host := range []string{"localhost", "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "::ffff:127.0.0.1"} {
		_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port))
		if !errors.Is(err, netguard.ErrRefused) {
			t.Fatalf("%s: err = %v, want ErrRefused", host, err)
		}
		if strings.Contains(err.Error(), port) || strings.Contains(err.Error(), "127") {
			t.Fatalf("%s: error text %q names the destination", host, err)
		}
	}
	requireAcceptedNothing(t, ln)
}

func TestDialContextDefeatsDNSRebinding(t *testing.T) {
	ln := MustListen(t)
	port := portOf(t, ln)
	// Public when the URL is saved, loopback when the delivery is sent.
	r := &sequenceResolver{answers: [][]string{{"93.184.215.14"}, {"127.0.0.1"}}}
	policy := netguard.Policy{}
	if err := netguard.ValidateURL(context.Background(), "https://rebind.example.net:"+port+"/hook", policy, r); err != nil {
		t.Fatalf("validation should see the public answer: %v", err)
	}
	d := netguard.NewDialer(policy, r)
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.example.net", port))
	if !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	client := netguard.NewHTTPClient(d, 0, nil)
	resp, err := client.Get("https://rebind.example.net:" + port + "/hook")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("client reached the rebound address")
	}
	if !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("client err = %v, want ErrRefused", err)
	}
	requireAcceptedNothing(t, ln)
}

func TestDialContextRefusesWhenAnyAnswerIsInternal(t *testing.T) {
	ln := MustListen(t)
	d := netguard.NewDialer(netguard.Policy{}, mapResolver{"mixed.example.net": {"93.184.215.14", "127.0.0.1"}})
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("mixed.example.net", portOf(t, ln)))
	if !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	requireAcceptedNothing(t, ln)
}

func TestDialContextRefusesOtherNetworks(t *testing.T) {
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"localhost"}}, nil)
	for _, network := range []string{"udp", "unix", "ip4:icmp"} {
		if _, err := d.DialContext(context.Background(), network, "localhost:53"); !errors.Is(err, netguard.ErrRefused) {
			t.Fatalf("%s: err = %v, want ErrRefused", network, err)
		}
	}
}

func TestDialContextReportsUnresolvable(t *testing.T) {
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"v4only.test"}}, mapResolver{"v4only.test": {"127.0.0.1"}})
	if _, err := d.DialContext(context.Background(), "tcp", "nowhere.test:443"); !errors.Is(err, netguard.ErrUnresolvable) {
		t.Fatalf("unknown name: err = %v, want ErrUnresolvable", err)
	}
	if _, err := d.DialContext(context.Background(), "tcp6", "v4only.test:443"); !errors.Is(err, netguard.ErrUnresolvable) {
		t.Fatalf("tcp6 to v4-only name: err = %v, want ErrUnresolvable", err)
	}
}

func TestDialContextConnectionRefusedHidesAddress(t *testing.T) {
	ln := MustListen(t)
	port := portOf(t, ln)
	ln.Close() // nothing listens on port now
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"127.0.0.1"}}, nil)
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", port))
	var de *netguard.DialError
	if !errors.As(err, &de) || de.Reason != "connection refused" {
		t.Fatalf("err = %v, want a connection-refused DialError", err)
	}
	if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), port) {
		t.Fatalf("error text %q names the destination", err)
	}
}

func TestDialContextRefusesMalformedAddresses(t *testing.T) {
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{"localhost"}}, nil)
	for _, addr := range []string{"localhost", "localhost:0", "localhost:https", "localhost:70000", ":443", "999.1.1.1:443"} {
		if _, err := d.DialContext(context.Background(), "tcp", addr); !errors.Is(err, netguard.ErrRefused) {
			t.Fatalf("%q: err = %v, want ErrRefused", addr, err)
		}
	}
}
