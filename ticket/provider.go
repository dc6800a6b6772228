package ticket

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Event is what a provider's inbound event says about one ticket.
type Event struct {
	Key       string
	Closed    bool // the provider's status category is done
	Known     bool // the event carries a ticket state at all
	Timestamp time.Time
}

// Provider is the adapter of one ticket provider: how it signs and shapes its inbound
// events and how its API is called. Packages ticket/jira, ticket/linear and
// ticket/generic implement one each; app gives them to NewService.
type Provider struct {
	// Name is the provider's name (ProviderJira, ProviderLinear, ProviderGeneric).
	Name string
	// Header carries the hex HMAC-SHA256 of an event's raw body, with Prefix (e.g.
	// "sha256=") when the provider uses one; a Prefix of "*" accepts both forms.
	Header, Prefix string
	// Parse reads an event; false when the body is not one.
	Parse func(body []byte) (Event, bool)
	// Base is the base URL the integration's calls go to (an *Error when there is none).
	Base func(t Integration) (string, error)
	// Open returns the API over the guarded client, at base, with the credentials.
	Open func(client *http.Client, base string, c Credentials) API
}

// capability is what the contract says a provider supports: inbound webhooks, and
// outbound comments and transitions.
type capability struct{ inbound, outbound bool }

// capabilities: the two issue trackers support inbound webhooks, comments and
// transitions; the generic provider is Vigia's own inbound contract, with no writes.
var capabilities = map[string]capability{
	ProviderJira:    {inbound: true, outbound: true},
	ProviderLinear:  {inbound: true, outbound: true},
	ProviderGeneric: {inbound: true, outbound: false},
}

// HTTPSBase is the integration's base URL without its trailing slash: https only.
func HTTPSBase(t Integration) (string, error) {
	if t.BaseURL == nil {
		return "", IntegrationFailure("base_url_missing")
	}
	u, err := url.Parse(*t.BaseURL)
	if err != nil || u.Host == "" {
		return "", IntegrationFailure("url_invalid")
	}
	if u.Scheme != "https" {
		return "", IntegrationFailure("url_scheme")
	}
	return strings.TrimRight(*t.BaseURL, "/"), nil
}

// base is where t's calls go, by its provider's adapter.
func (s *Service) base(t Integration) (string, error) {
	p, ok := s.providers[t.Provider]
	if !ok || p.Base == nil {
		return HTTPSBase(t)
	}
	return p.Base(t)
}
