package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/vigia-data/vigia/netguard"
)

// Timeout bounds one attempt (part 6: the receiver replies within 10 s).
const Timeout = 10 * time.Second

// MaxAttempts is the most sends of one delivery (the first and three retries).
const MaxAttempts = 4

// maxDrain is how much of a response body is read before closing: enough to
// reuse the connection for a typical empty or short reply, never stored.
const maxDrain = 4 << 10

// userAgent identifies deliveries in receivers' logs.
const userAgent = "Vigia-Webhook/1"

// Outcome is what one attempt means for the delivery.
type Outcome string

// Outcomes of an attempt.
const (
	OutcomeDelivered Outcome = "delivered" // 2xx
	OutcomeRetry     Outcome = "retry"     // 5xx, timeout, refused or dropped connection
	OutcomeFailed    Outcome = "failed"    // 4xx (429 included), 3xx, invalid certificate: final
	OutcomeRefused   Outcome = "refused"   // anti-SSRF refusal or unresolvable host: final
)

// Attempt is the record of one send. Err is a stable short text that never
// holds the URL, the host, an address or the response body.
type Attempt struct {
	N          int           // 1-based attempt number, set by the caller
	StatusCode int           // 0 when no response arrived
	Err        string        // "" when delivered
	Outcome    Outcome       //
	Duration   time.Duration // from request start to response drained
}

// Stable Err texts of an Attempt.
const (
	ErrTextRefused       = "destination refused"
	ErrTextUnresolvable  = "destination unresolvable"
	ErrTextTimeout       = "timeout"
	ErrTextConnRefused   = "connection refused"
	ErrTextDropped       = "connection dropped"
	ErrTextUnreachable   = "network unreachable"
	ErrTextTLSCert       = "tls certificate invalid"
	ErrTextTLS           = "tls handshake failed"
	ErrTextRedirect      = "redirect not followed"
	ErrTextCanceled      = "canceled"
	ErrTextInvalidURL    = "invalid url"
	ErrTextRequestFailed = "request failed"
)

// Backoff returns the wait after attempt n (1-based) before the next one: 1 s
// after the first, 5 s after the second, 25 s after the third; false after
// the fourth, when the delivery is over (at most 4 sends in about 70 s).
func Backoff(n int) (time.Duration, bool) {
	switch n {
	case 1:
		return time.Second, true
	case 2:
		return 5 * time.Second, true
	case 3:
		return 25 * time.Second, true
	}
	return 0, false
}

// Classify maps a response or a client error to an Outcome: 2xx delivered;
// 5xx retry; 3xx (never followed), 4xx and anything else failed; an SSRF
// refusal or an unresolvable host refused; a certificate the client cannot
// trust failed (it will not fix itself within a minute); any other network
// error (timeout, connection refused or dropped) retry.
func Classify(resp *http.Response, err error) Outcome {
	if err != nil {
		switch {
		case errors.Is(err, netguard.ErrRefused), errors.Is(err, netguard.ErrUnresolvable):
			return OutcomeRefused
		case isCertError(err):
			return OutcomeFailed
		}
		return OutcomeRetry
	}
	if resp == nil {
		return OutcomeRetry
	}
	switch c := resp.StatusCode; {
	case c >= 200 && c <= 299:
		return OutcomeDelivered
	case c >= 500 && c <= 599:
		return OutcomeRetry
	}
	return OutcomeFailed
}

// Send makes one POST of body to rawURL with headers h and Content-Type
// application/json, bounded by Timeout (and by the client's own timeout),
// through client, which must come from netguard.NewHTTPClient. At most a
// few KiB of the reply are read and discarded. The returned Attempt has
// N = 0; the caller numbers it.
func Send(ctx context.Context, client *http.Client, rawURL string, body []byte, h http.Header) Attempt {
	start := time.Now()
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return Attempt{Err: ErrTextInvalidURL, Outcome: OutcomeFailed}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: ErrTextInvalidURL, Outcome: OutcomeFailed}
	}
	req.Header = h.Clone()
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Attempt{Err: errText(err), Outcome: Classify(nil, err), Duration: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
	a := Attempt{StatusCode: resp.StatusCode, Outcome: Classify(resp, nil), Duration: time.Since(start)}
	if a.Outcome != OutcomeDelivered {
		a.Err = statusText(resp.StatusCode)
	}
	return a
}

func statusText(code int) string {
	if code >= 300 && code <= 399 {
		return ErrTextRedirect
	}
	return "http " + strconv.Itoa(code)
}

// ErrorText is the stable text of an HTTP client error (one of the ErrText*
// constants), for other outbound calls through the guarded client (ticket
// providers): it never holds a URL, a host or an address.
func ErrorText(err error) string { return errText(err) }

// errText turns a client error into a stable text. err.Error() is never
// used: it carries the URL (url.Error) and the address (net.OpError).
func errText(err error) string {
	switch {
	case errors.Is(err, netguard.ErrRefused):
		return ErrTextRefused
	case errors.Is(err, netguard.ErrUnresolvable):
		return ErrTextUnresolvable
	case isTimeout(err):
		return ErrTextTimeout
	case errors.Is(err, context.Canceled):
		return ErrTextCanceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrTextConnRefused
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return ErrTextUnreachable
	case isCertError(err):
		return ErrTextTLSCert
	case isTLSError(err):
		return ErrTextTLS
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return ErrTextDropped
	}
	return ErrTextRequestFailed
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isCertError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verification)
}

func isTLSError(err error) bool {
	var (
		record tls.RecordHeaderError
		alert  tls.AlertError
	)
	return errors.As(err, &record) || errors.As(err, &alert)
}

// Delivery is what stays the same across the attempts of one delivery; each
// attempt gets a fresh timestamp and signature.
type Delivery struct {
	URL            string // secret: never logged or shown
	Secret         string // channel signing secret; "" sends no signature (unsigned legacy channel)
	Event          string
	ID             string // X-Service-Delivery, identical across attempts
	IdempotencyKey string // state events only
	Body           []byte // raw JSON, signed and sent as is
	LegacyPrefix   string // DefaultLegacyPrefix, or "" for none
	LegacyUntil    time.Time
}

// Attempt signs and sends attempt n at now, through client.
func (d Delivery) Attempt(ctx context.Context, client *http.Client, n int, now time.Time) Attempt {
	ts := now.Unix()
	sig := ""
	if d.Secret != "" {
		sig = Sign(d.Secret, ts, d.Body)
	}
	h := Headers(d.Event, d.ID, ts, sig, d.IdempotencyKey, d.LegacyPrefix, d.LegacyUntil, now)
	a := Send(ctx, client, d.URL, d.Body, h)
	a.N = n
	return a
}
