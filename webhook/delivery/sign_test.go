package delivery_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

func TestVerify(t *testing.T) {
	const (
		secret = "whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
		old    = "whsec_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
		ts     = int64(1795255200)
	)
	body := []byte(`{"event":"service.test","title":"olá"}`)
	sig := delivery.Sign(secret, ts, body)
	at := func(offset int64) time.Time { return time.Unix(ts+offset, 0) }
	tests := []struct {
		name   string
		secret string
		header string
		ts     int64
		body   []byte
		now    time.Time
		want   error
	}{
		{"Valid", secret, sig, ts, body, at(0), nil},
		{"ValidAtEdgeOfWindowLate", secret, sig, ts, body, at(300), nil},
		{"ValidAtEdgeOfWindowEarly", secret, sig, ts, body, at(-300), nil},
		{"AnyOfSeveralValues", secret, delivery.Sign(old, ts, body) + ", " + sig, ts, body, at(0), nil},
		{"OtherSchemesIgnored", secret, "v0=abc," + sig, ts, body, at(0), nil},
		{"UppercaseHexAccepted", secret, "v1=" + strings.ToUpper(strings.TrimPrefix(sig, "v1=")), ts, body, at(0), nil},
		{"TooOld", secret, sig, ts, body, at(301), delivery.ErrTimestamp},
		{"FromTheFuture", secret, sig, ts, body, at(-301), delivery.ErrTimestamp},
		{"HostileTimestamp", secret, sig, -1 << 63, body, at(0), delivery.ErrTimestamp},
		{"WrongSecret", old, sig, ts, body, at(0), delivery.ErrSignature},
		{"BodyChanged", secret, sig, ts, []byte(`{"event":"service.test","title":"ola"}`), at(0), delivery.ErrSignature},
		{"TimestampChanged", secret, sig, ts + 1, body, at(0), delivery.ErrSignature},
		{"NotHex", secret, "v1=zz", ts, body, at(0), delivery.ErrSignature},
		{"Truncated", secret, sig[:20], ts, body, at(0), delivery.ErrSignature},
		{"Empty", secret, "", ts, body, at(0), delivery.ErrNoSignature},
		{"OnlyOtherSchemes", secret, "v2=abc", ts, body, at(0), delivery.ErrNoSignature},
		{"NoSecret", "", sig, ts, body, at(0), delivery.ErrNoSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := delivery.Verify(tt.secret, tt.header, tt.ts, tt.body, tt.now, 0)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestVerifyHonoursCustomTolerance(t *testing.T) {
	body := []byte("{}")
	sig := delivery.Sign("whsec_x", 1000, body)
	if err := delivery.Verify("whsec_x", sig, 1000, body, time.Unix(1061, 0), time.Minute); !errors.Is(err, delivery.ErrTimestamp) {
		t.Fatalf("61 s with a 60 s tolerance: %v, want ErrTimestamp", err)
	}
}

func TestSignIsLowercaseHexOverTimestampDotBody(t *testing.T) {
	sig := delivery.Sign("whsec_k", 42, []byte("x"))
	if !regexp.MustCompile(`^v1=[0-9a-f]{64}$`).MatchString(sig) {
		t.Fatalf("Sign = %q", sig)
	}
	if sig == delivery.Sign("k", 42, []byte("x")) {
		t.Fatalf("the whsec_ prefix is not part of the key")
	}
}

func TestNewSecretIsPrefixedRandomHex(t *testing.T) {
	format := regexp.MustCompile(`^whsec_[0-9a-f]{64}$`)
	a, b := delivery.NewSecret(), delivery.NewSecret()
	if !format.MatchString(a) || !format.MatchString(b) {
		t.Fatalf("secrets %q, %q do not match %s", a, b, format)
	}
	if a == b {
		t.Fatalf("two secrets are equal")
	}
}

func TestIdempotencyKey(t *testing.T) {
	key := event.IdempotencyKey("ds_01", "sc_42", delivery.EventDatasetVerdictChanged, "")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(key) {
		t.Fatalf("key %q is not 64 lowercase hex", key)
	}
	if key != event.IdempotencyKey("ds_01", "sc_42", delivery.EventDatasetVerdictChanged, "") {
		t.Fatalf("key is not deterministic")
	}
	distinct := [][4]string{
		{"ds_01", "sc_42", delivery.EventDatasetVerdictChanged, ""},
		{"ds_01", "sc_43", delivery.EventDatasetVerdictChanged, ""},
		{"ds_01", "sc_42", delivery.EventPolicyViolationOpened, "not_null"},
		{"ds_01", "sc_42", delivery.EventPolicyViolationOpened, "unique"},
		{"a", "bc", "", ""},
		{"ab", "c", "", ""},
		{"a|b", "", "", ""},
		{"a", "|b", "", ""},
	}
	seen := map[string]int{}
	for i, parts := range distinct {
		k := event.IdempotencyKey(parts[0], parts[1], parts[2], parts[3])
		if j, dup := seen[k]; dup {
			t.Fatalf("inputs %d and %d share a key", j, i)
		}
		seen[k] = i
	}
}

func BenchmarkSign4KiB(b *testing.B) {
	body := []byte(strings.Repeat("x", 4<<10))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		delivery.Sign(secret, 1795255200, body)
	}
}
