package netguard_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/vigia-data/vigia/netguard"
)

// webhookResolver is the DNS every ValidateURL case sees.
var webhookResolver = mapResolver{
	"hooks.example.net":    {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	"localhost":            {"127.0.0.1", "::1"},
	"internal.example.net": {"10.1.2.3"},
	"mixed.example.net":    {"93.184.215.14", "192.168.1.10"},
	"metadata.example.net": {"169.254.169.254"},
	"mapped.example.net":   {"::ffff:127.0.0.1"},
	"receiver.test":        {"127.0.0.1"},
}

func TestValidateURLRefusesForWebhooks(t *testing.T) {
	tests := []struct {
		name, url, code string
	}{
		{"HTTPScheme", "http://hooks.example.net/hook", netguard.CodeURLScheme},
		{"FTPScheme", "ftp://hooks.example.net/hook", netguard.CodeURLScheme},
		{"ShortDecimalLoopback", "https://127.1/hook", netguard.CodeDestinationRefused},
		{"IntegerLoopback", "https://2130706433/hook", netguard.CodeDestinationRefused},
		{"HexLoopback", "https://0x7f000001/hook", netguard.CodeDestinationRefused},
		{"HexDottedLoopback", "https://0x7f.0.0.1/hook", netguard.CodeDestinationRefused},
		{"OctalLoopback", "https://0177.0.0.1/hook", netguard.CodeDestinationRefused},
		{"TrailingDotLoopback", "https://127.0.0.1./hook", netguard.CodeDestinationRefused},
		{"PercentEncodedLoopback", "https://%31%32%37.0.0.1/hook", netguard.CodeURLInvalid},
		{"FullwidthDigits", "https://\uff11\uff12\uff17.0.0.1/hook", netguard.CodeURLInvalid},
		{"IPv4MappedLoopback", "https://[::ffff:127.0.0.1]/hook", netguard.CodeDestinationRefused},
		{"IPv6Loopback", "https://[::1]/hook", netguard.CodeDestinationRefused},
		{"CloudMetadata", "https://169.254.169.254/latest/meta-data", netguard.CodeDestinationRefused},
		{"AWSMetadataIPv6", "https://[fd00:ec2::254]/latest", netguard.CodeDestinationRefused},
		{"AlibabaMetadata", "https://100.100.100.200/latest", netguard.CodeDestinationRefused},
		{"Userinfo", "https://user:pass@hooks.example.net/hook", netguard.CodeURLUserinfo},
		{"UserOnly", "https://user@hooks.example.net/hook", netguard.CodeURLUserinfo},
		{"Private10", "https://10.0.0.1/hook", netguard.CodeDestinationRefused},
		{"Private192", "https://192.168.0.1/hook", netguard.CodeDestinationRefused},
		{"CGNAT", "https://100.64.0.1/hook", netguard.CodeDestinationRefused},
		{"Unspecified", "https://0/hook", netguard.CodeDestinationRefused},
		{"Broadcast", "https://255.255.255.255/hook", netguard.CodeDestinationRefused},
		{"LinkLocalWithZone", "https://[fe80::1%25eth0]/hook", netguard.CodeDestinationRefused},
		{"NAT64Loopback", "https://[64:ff9b::7f00:1]/hook", netguard.CodeDestinationRefused},
		{"SixToFour", "https://[2002:7f00:1::]/hook", netguard.CodeDestinationRefused},
		{"Teredo", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", netguard.CodeDestinationRefused},
		{"Documentation", "https://192.0.2.10/hook", netguard.CodeDestinationRefused},
		{"NameResolvingToLoopback", "https://localhost/hook", netguard.CodeDestinationRefused},
		{"NameResolvingToPrivate", "https://internal.example.net/hook", netguard.CodeDestinationRefused},
		{"NameWithOneInternalAnswer", "https://mixed.example.net/hook", netguard.CodeDestinationRefused},
		{"NameResolvingToMetadata", "https://metadata.example.net/hook", netguard.CodeDestinationRefused},
		{"NameResolvingToMappedLoopback", "https://mapped.example.net/hook", netguard.CodeDestinationRefused},
		{"Unresolvable", "https://nowhere.example.net/hook", netguard.CodeUnresolvable},
		{"NumericOutOfRange", "https://999.1.1.1/hook", netguard.CodeURLInvalid},
		{"BadOctal", "https://08.0.0.1/hook", netguard.CodeURLInvalid},
		{"PortZero", "https://hooks.example.net:0/hook", netguard.CodeURLInvalid},
		{"NoHost", "https:///hook", netguard.CodeURLInvalid},
		{"Opaque", "https:hooks.example.net", netguard.CodeURLInvalid},
		{"Empty", "", netguard.CodeURLInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := netguard.ValidateURL(context.Background(), tt.url, netguard.Policy{}, webhookResolver)
			if got := netguard.URLErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (err %v), want %q", got, err, tt.code)
			}
			// The text is the code alone: no URL, host or address can leak.
			if err.Error() != tt.code {
				t.Fatalf("error text = %q, want exactly the code", err.Error())
			}
			if tt.code == netguard.CodeDestinationRefused && !errors.Is(err, netguard.ErrRefused) {
				t.Fatalf("destination_refused does not match ErrRefused")
			}
		})
	}
}

func TestValidateURLAdmits(t *testing.T) {
	tests := []struct {
		name, url string
		policy    netguard.Policy
	}{
		{"PublicName", "https://hooks.example.net/hook?x=1", netguard.Policy{}},
		{"PublicNameWithPort", "https://hooks.example.net:8443/hook", netguard.Policy{}},
		{"PublicLiteral", "https://93.184.215.14/hook", netguard.Policy{}},
		{"PublicMappedLiteral", "https://[::ffff:93.184.215.14]/hook", netguard.Policy{}},
		{"AllowlistedLocalhost", "https://localhost:8443/hook", netguard.Policy{AllowHosts: []string{"localhost"}}},
		{"AllowlistedIgnoresCaseAndDot", "https://LOCALHOST./hook", netguard.Policy{AllowHosts: []string{"localhost"}}},
		{"AllowlistedTestName", "https://receiver.test/hook", netguard.Policy{AllowHosts: netguard.ParseAllowHosts("localhost, receiver.test")}},
		{"AllowlistedLiteral", "https://127.0.0.1/hook", netguard.Policy{AllowHosts: []string{"127.0.0.1"}}},
		{"PrivateForSources", "https://internal.example.net/hook", netguard.Policy{AllowPrivate: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := netguard.ValidateURL(context.Background(), tt.url, tt.policy, webhookResolver); err != nil {
				t.Fatalf("ValidateURL: %v", err)
			}
		})
	}
}

func TestValidateURLAllowlistDoesNotAdmit(t *testing.T) {
	tests := []struct {
		name, url string
		policy    netguard.Policy
	}{
		{"MetadataBehindAllowlistedName", "https://metadata.example.net/", netguard.Policy{AllowHosts: []string{"metadata.example.net"}}},
		{"OtherNameResolvingToLoopback", "https://localhost/", netguard.Policy{AllowHosts: []string{"receiver.example.net"}}},
		{"NameResolvingToAllowlistedLiteral", "https://receiver.test/", netguard.Policy{AllowHosts: []string{"127.0.0.1"}}},
		{"LoopbackWithAllowPrivate", "https://localhost/", netguard.Policy{AllowPrivate: true}},
		{"MetadataWithAllowPrivate", "https://[fd00:ec2::254]/", netguard.Policy{AllowPrivate: true}},
		{"AlibabaMetadataWithAllowPrivate", "https://100.100.100.200/", netguard.Policy{AllowPrivate: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := netguard.ValidateURL(context.Background(), tt.url, tt.policy, webhookResolver)
			if !errors.Is(err, netguard.ErrRefused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
		})
	}
}

func TestCheckAddrClassifiesEveryRange(t *testing.T) {
	webhook := netguard.Policy{}
	source := netguard.Policy{AllowPrivate: true}
	tests := []struct {
		addr                string
		webhookOK, sourceOK bool
		reasonWhenRefused   string
	}{
		{"93.184.215.14", true, true, ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, true, ""},
		{"::ffff:93.184.215.14", true, true, ""},
		{"127.0.0.1", false, false, netguard.ReasonLoopback},
		{"127.255.255.254", false, false, netguard.ReasonLoopback},
		{"::1", false, false, netguard.ReasonLoopback},
		{"::ffff:127.0.0.1", false, false, netguard.ReasonLoopback},
		{"10.0.0.1", false, true, netguard.ReasonPrivate},
		{"172.16.0.1", false, true, netguard.ReasonPrivate},
		{"172.31.255.255", false, true, netguard.ReasonPrivate},
		{"192.168.1.1", false, true, netguard.ReasonPrivate},
		{"100.64.0.1", false, true, netguard.ReasonPrivate},
		{"fc00::1", false, true, netguard.ReasonPrivate},
		{"fd12:3456::1", false, true, netguard.ReasonPrivate},
		{"169.254.169.254", false, false, netguard.ReasonMetadata},
		{"169.254.170.2", false, false, netguard.ReasonMetadata},
		{"fd00:ec2::254", false, false, netguard.ReasonMetadata},
		{"100.100.100.200", false, false, netguard.ReasonMetadata},
		{"168.63.129.16", false, false, netguard.ReasonMetadata},
		{"169.254.1.1", false, false, netguard.ReasonLinkLocal},
		{"fe80::1", false, false, netguard.ReasonLinkLocal},
		{"0.0.0.0", false, false, netguard.ReasonUnspecified},
		{"0.1.2.3", false, false, netguard.ReasonUnspecified},
		{"::", false, false, netguard.ReasonUnspecified},
		{"224.0.0.1", false, false, netguard.ReasonMulticast},
		{"239.255.255.250", false, false, netguard.ReasonMulticast},
		{"ff02::1", false, false, netguard.ReasonMulticast},
		{"255.255.255.255", false, false, netguard.ReasonReserved},
		{"240.0.0.1", false, false, netguard.ReasonReserved},
		{"198.18.0.1", false, false, netguard.ReasonReserved},
		{"192.0.0.8", false, false, netguard.ReasonReserved},
		{"192.0.2.1", false, false, netguard.ReasonDocumentation},
		{"198.51.100.1", false, false, netguard.ReasonDocumentation},
		{"203.0.113.1", false, false, netguard.ReasonDocumentation},
		{"2001:db8::1", false, false, netguard.ReasonDocumentation},
		{"3fff::1", false, false, netguard.ReasonDocumentation},
		{"64:ff9b::808:808", false, false, netguard.ReasonIPv4Embedding},
		{"64:ff9b:1::a00:1", false, false, netguard.ReasonIPv4Embedding},
		{"2002:808:808::1", false, false, netguard.ReasonIPv4Embedding},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, false, netguard.ReasonIPv4Embedding},
		{"::808:808", false, false, netguard.ReasonIPv4Embedding},
		{"::ffff:0:808:808", false, false, netguard.ReasonIPv4Embedding},
		{"192.88.99.1", false, false, netguard.ReasonIPv4Embedding},
		{"2001:2::1", false, false, netguard.ReasonReserved},
		{"fec0::1", false, false, netguard.ReasonReserved},
		{"100::1", false, false, netguard.ReasonReserved},
		{"4000::1", false, false, netguard.ReasonReserved},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.addr)
			check := func(p netguard.Policy, wantOK bool, policyName string) {
				err := p.CheckAddr("", ip)
				if wantOK {
					if err != nil {
						t.Fatalf("%s policy refused: %v", policyName, err)
					}
					return
				}
				var re *netguard.RefusedError
				if !errors.As(err, &re) || !errors.Is(err, netguard.ErrRefused) {
					t.Fatalf("%s policy: err = %v, want a refusal", policyName, err)
				}
				if re.Reason != tt.reasonWhenRefused {
					t.Fatalf("%s policy: reason = %q, want %q", policyName, re.Reason, tt.reasonWhenRefused)
				}
			}
			check(webhook, tt.webhookOK, "webhook")
			check(source, tt.sourceOK, "source")
		})
	}
}

func TestParseAllowHostsNormalizes(t *testing.T) {
	got := netguard.ParseAllowHosts(" localhost,Receiver.Test. ,, [::1]")
	want := []string{"localhost", "receiver.test", "::1"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func BenchmarkValidateURL(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if err := netguard.ValidateURL(ctx, "https://hooks.example.net/hook", netguard.Policy{}, webhookResolver); err != nil {
			b.Fatal(err)
		}
	}
}
