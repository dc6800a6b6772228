package delivery

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every channel signing secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock (part 6: 300 seconds).
const DefaultTolerance = 300 * time.Second

// Errors of Verify; their text names no secret, signature or body.
var (
	ErrNoSignature = errors.New("delivery: no v1 signature")
	ErrTimestamp   = errors.New("delivery: timestamp outside tolerance")
	ErrSignature   = errors.New("delivery: signature mismatch")
	ErrNoSecret    = errors.New("delivery: empty secret")
)

// NewSecret returns a channel signing secret: "whsec_" followed by 32 random
// bytes as 64 lowercase hex characters, the same alphabet as API tokens, so
// it survives shells, YAML and copy-paste unquoted. The whole text, prefix
// included, is the HMAC key.
func NewSecret() string {
	var b [32]byte
	// crypto/rand.Read never fails (Go 1.24+); a failing system source
	// crashes the program rather than return a weak secret.
	_, _ = rand.Read(b[:])
	return SecretPrefix + hex.EncodeToString(b[:])
}

// Sign returns the X-Service-Signature value of one attempt:
// "v1=" + lowercase hex HMAC-SHA256, keyed with the full secret text as bytes,
// over "<timestamp>.<raw body>".
func Sign(secret string, timestamp int64, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a delivery as a receiver does. header is the
// X-Service-Signature value, which may hold several comma-separated v1=
// values (during a rotation): any match is accepted, each compared in
// constant time. timestamp is X-Service-Timestamp; it must lie within
// tolerance of now (DefaultTolerance when tolerance is not positive). body
// must be the raw bytes received, before any parsing. Verify returns
// ErrNoSecret, ErrTimestamp, ErrNoSignature or ErrSignature.
func Verify(secret, header string, timestamp int64, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrNoSecret
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	// Compare in whole seconds: subtracting times could saturate on a
	// hostile timestamp and pass the check.
	tol := int64(tolerance / time.Second)
	if n := now.Unix(); timestamp < n-tol || timestamp > n+tol {
		return ErrTimestamp
	}
	want := mac(secret, timestamp, body)
	seen, match := false, false
	for part := range strings.SplitSeq(header, ",") {
		value, ok := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !ok {
			continue
		}
		seen = true
		got, err := hex.DecodeString(value)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			match = true
		}
	}
	switch {
	case match:
		return nil
	case !seen:
		return ErrNoSignature
	}
	return ErrSignature
}
