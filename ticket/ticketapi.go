package ticket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/webhook/delivery"
)

// Limits of a call to a ticket provider.
const (
	// ticketCallTimeout bounds one request to a provider.
	ticketCallTimeout = 15 * time.Second
	// maxTicketAnswer bounds what is read of a provider's answer.
	maxTicketAnswer = 1 << 20
)

// Stable codes of ticket-level failures (the ticket goes to the end of the polling
// queue, the write fails); the other codes (http_429, http_401, http_5xx, timeout,
// destination_refused…) are the integration's and delay it.
const (
	CodeTicketNotFound = "ticket_not_found"
	CodeBadAnswer      = "bad_answer"
	CodeNoTransition   = "no_transition"
	CodeProviderError  = "provider_error"
)

// Error is a failed call to a ticket provider. Code is stable and never holds a
// URL, a key, a token or a message of the provider. Integration is true when the
// failure is the whole integration's (429, refused credentials, the provider down or
// unreachable, an anti-SSRF refusal) rather than one ticket's.
type Error struct {
	Code        string
	Integration bool
}

func (e *Error) Error() string { return "ticket provider: " + e.Code }

// IntegrationFailure is a failure of the whole integration.
func IntegrationFailure(code string) *Error { return &Error{Code: code, Integration: true} }

// TicketFailure is a failure of one ticket.
func TicketFailure(code string) *Error { return &Error{Code: code} }

// API is what polling, write-back and the targets read ask of a provider.
type API interface {
	// Closed reports whether the ticket's status category is done.
	Closed(ctx context.Context, key string) (bool, error)
	// Comment posts a plain-text comment on the ticket.
	Comment(ctx context.Context, key, text string) error
	// Move closes (close true) or reopens the ticket; a ticket already there is left alone.
	Move(ctx context.Context, key string, close bool) error
	// Targets lists where tickets can be created, as the provider sent them (one page
	// of MaxTicketTargets asked for; Service.Targets keeps the first MaxTicketTargets),
	// and whether the provider says it has more.
	Targets(ctx context.Context) (targets []Target, truncated bool, err error)
}

// Credentials are an integration's sealed API credentials: Jira's account email and
// API token, Linear's API key or the generic provider's bearer token (Token).
type Credentials struct {
	Email string `json:"email,omitempty"`
	Token string `json:"token"`
}

// Caller sends JSON requests to a provider and classifies failures; adapters build one
// with their authentication.
type Caller struct {
	Client *http.Client
	Auth   func(*http.Request)
}

// Call sends a request and decodes a 2xx answer (or, with also, an answer of that
// status) into out. Errors are *ticketError or the context's.
func (c Caller) Call(ctx context.Context, method, u string, body, out any, also int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return TicketFailure(CodeBadAnswer)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, ticketCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return IntegrationFailure("url_invalid")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Vigia-Tickets/1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.Auth(req)
	res, err := c.Client.Do(req)
	if err != nil {
		if parent := context.Cause(ctx); parent != nil && !errors.Is(parent, context.DeadlineExceeded) {
			return parent // shutting down: not the provider's failure
		}
		return IntegrationFailure(strings.ReplaceAll(delivery.ErrorText(err), " ", "_"))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxTicketAnswer))
	if err != nil {
		return IntegrationFailure("connection_dropped")
	}
	switch code := res.StatusCode; {
	case code >= 200 && code <= 299, code == also:
	case code >= 300 && code <= 399:
		return IntegrationFailure("redirect")
	case code == http.StatusTooManyRequests, code == http.StatusUnauthorized, code == http.StatusForbidden, code >= 500:
		return IntegrationFailure("http_" + strconv.Itoa(code))
	case code == http.StatusNotFound:
		return TicketFailure(CodeTicketNotFound)
	default:
		return TicketFailure("http_" + strconv.Itoa(code))
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 && res.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return TicketFailure(CodeBadAnswer)
	}
	return nil
}
