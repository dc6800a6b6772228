package delivery

import (
	"net/http"
	"strconv"
	"time"
)

// Header names of a delivery (part 6).
const (
	HeaderPrefix         = "X-Service-"
	HeaderEvent          = HeaderPrefix + "Event"
	HeaderDelivery       = HeaderPrefix + "Delivery"
	HeaderTimestamp      = HeaderPrefix + "Timestamp"
	HeaderSignature      = HeaderPrefix + "Signature"
	HeaderIdempotencyKey = "Idempotency-Key"
)

// DefaultLegacyPrefix is the previous product-name prefix under which the
// four X-Service-* headers are repeated until the legacy period ends.
const DefaultLegacyPrefix = "X-Vigil-"

// DefaultLegacyUntil is the first instant legacy headers are no longer sent:
// the contract keeps them "until 31 May 2027", that day included.
func DefaultLegacyUntil() time.Time { return time.Date(2027, time.June, 1, 0, 0, 0, 0, time.UTC) }

// Headers returns the headers of one attempt: X-Service-Event, -Delivery,
// -Timestamp and -Signature (omitted when sig is empty: a channel created
// before signing existed), Idempotency-Key when idempotencyKey is set (state
// events), and each X-Service-* header again under legacyPrefix while now is
// before legacyUntil (an empty legacyPrefix sends none). Content-Type is set
// by Send.
func Headers(event, deliveryID string, ts int64, sig string, idempotencyKey string,
	legacyPrefix string, legacyUntil time.Time, now time.Time,
) http.Header {
	h := make(http.Header, 10)
	set := func(suffix, value string) {
		h.Set(HeaderPrefix+suffix, value)
		if legacyPrefix != "" && now.Before(legacyUntil) {
			h.Set(legacyPrefix+suffix, value)
		}
	}
	set("Event", event)
	set("Delivery", deliveryID)
	set("Timestamp", strconv.FormatInt(ts, 10))
	if sig != "" {
		set("Signature", sig)
	}
	if idempotencyKey != "" {
		h.Set(HeaderIdempotencyKey, idempotencyKey)
	}
	return h
}
