// Package delivery holds the mechanics of one webhook delivery: the signed
// headers, the body, one guarded POST, what its result means and when to try
// again. Persistence, fan-out to channels and the job queue live elsewhere.
//
// A delivery keeps its X-Service-Delivery id across attempts; each attempt
// gets a fresh X-Service-Timestamp and signature. The signature is
// "v1=" + hex HMAC-SHA256 keyed with the whole "whsec_…" secret text over
// "<timestamp>.<raw body>"; the receiver guide with test vectors is
// docs/webhooks.md, which this package's tests read so that it cannot drift.
//
// Nothing here puts the URL, a host, an address, a secret or a response body
// into an error or an Attempt.
package delivery
