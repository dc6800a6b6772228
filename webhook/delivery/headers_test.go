package delivery_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigia-data/vigia/webhook/delivery"
)

func TestHeaders(t *testing.T) {
	const (
		id  = "0b9f3c3e-8a51-4c1e-9d4f-2f6f1c7d9a10"
		sig = "v1=abc"
		key = "5dcb9d1532a6910ec181568e73ca831444b8481ffab2cc01a64a26c018dac7d2"
	)
	until := delivery.DefaultLegacyUntil()
	lastLegacyDay := time.Date(2027, time.May, 31, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		name           string
		sig, idem, pfx string
		now            time.Time
		want           http.Header
	}{
		{"SignedAlertWithLegacyNames", sig, "", delivery.DefaultLegacyPrefix, lastLegacyDay, http.Header{
			"X-Service-Event": {"service.alerts"}, "X-Service-Delivery": {id},
			"X-Service-Timestamp": {"1795255200"}, "X-Service-Signature": {sig},
			"X-Vigil-Event": {"service.alerts"}, "X-Vigil-Delivery": {id},
			"X-Vigil-Timestamp": {"1795255200"}, "X-Vigil-Signature": {sig},
		}},
		{"LegacyNamesEndAfter31May2027", sig, "", delivery.DefaultLegacyPrefix, until, http.Header{
			"X-Service-Event": {"service.alerts"}, "X-Service-Delivery": {id},
			"X-Service-Timestamp": {"1795255200"}, "X-Service-Signature": {sig},
		}},
		{"UnsignedChannelOmitsSignatureOnly", "", "", delivery.DefaultLegacyPrefix, lastLegacyDay, http.Header{
			"X-Service-Event": {"service.alerts"}, "X-Service-Delivery": {id},
			"X-Service-Timestamp": {"1795255200"},
			"X-Vigil-Event":       {"service.alerts"}, "X-Vigil-Delivery": {id},
			"X-Vigil-Timestamp": {"1795255200"},
		}},
		{"StateEventCarriesIdempotencyKeyOnce", sig, key, "x-other-", lastLegacyDay, http.Header{
			"X-Service-Event": {"service.alerts"}, "X-Service-Delivery": {id},
			"X-Service-Timestamp": {"1795255200"}, "X-Service-Signature": {sig},
			"X-Other-Event": {"service.alerts"}, "X-Other-Delivery": {id},
			"X-Other-Timestamp": {"1795255200"}, "X-Other-Signature": {sig},
			"Idempotency-Key": {key},
		}},
		{"NoLegacyPrefix", sig, "", "", lastLegacyDay, http.Header{
			"X-Service-Event": {"service.alerts"}, "X-Service-Delivery": {id},
			"X-Service-Timestamp": {"1795255200"}, "X-Service-Signature": {sig},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := delivery.Headers("service.alerts", id, 1795255200, tt.sig, tt.idem, tt.pfx, until, tt.now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsStateEvent(t *testing.T) {
	tests := map[string]bool{
		delivery.EventDatasetVerdictChanged:   true,
		delivery.EventPolicyViolationOpened:   true,
		delivery.EventPolicyViolationResolved: true,
		delivery.EventDomainVerdictChanged:    true,
		delivery.EventAlerts:                  false,
		delivery.EventTest:                    false,
		delivery.EventConsumerUntrustedRead:   false,
	}
	for event, want := range tests {
		if got := delivery.IsStateEvent(event); got != want {
			t.Errorf("IsStateEvent(%s) = %v, want %v", event, got, want)
		}
	}
}
