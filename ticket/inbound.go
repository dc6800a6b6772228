package ticket

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// Inbound limits of the contract.
const (
	// MaxInboundBody is the largest inbound ticket event (1 MB); larger answers 413.
	MaxInboundBody = 1 << 20
	// inboundTolerance is how old (or how far ahead) a provider timestamp may be.
	inboundTolerance = 5 * time.Minute
)

// Answers of an inbound ticket event.
const (
	InboundApplied           = "applied"
	InboundUnchanged         = "unchanged"
	InboundIgnored           = "ignored"
	InboundUnknownTicket     = "unknown_ticket"
	InboundWorkspaceDisabled = "workspace_disabled"
)

// Stable codes of inbound refusals.
const (
	CodeSignatureInvalid = "signature_invalid"
	CodeTimestampInvalid = "timestamp_invalid"
)

// InboundRequest is an inbound tracker event as received.
type InboundRequest struct {
	IntegrationID string
	ClientIP      string
	Header        http.Header
	Body          io.Reader
}

// ReceiveTicketEvent handles a tracker's event about a linked ticket, checking in the
// contract's order: the rate limit (120 per minute per integration and IP:
// KindRateLimited), the size (1 MB, read bounded: KindTooLarge), the signature (an
// unknown integration, one without secret and a bad signature get the same
// KindUnauthenticated signature_invalid and change nothing), the provider timestamp
// (missing or more than 5 minutes away: KindBadRequest timestamp_invalid), and then
// applies it: a closed ticket resolves its linked issues with history origin
// ticket:<provider>:<key> (applied; unchanged when they already were), other states are
// ignored, a ticket linked to nothing is unknown_ticket and a suspended workspace answers
// workspace_disabled. Results for linked tickets and suspended workspaces are audited,
// never with the body.
func (s *Service) ReceiveTicketEvent(ctx context.Context, in InboundRequest) (string, error) {
	now := s.clock.Now()
	if ok, retry := s.inbound.take(in.IntegrationID+"|"+in.ClientIP, now); !ok {
		return "", vigia.RateLimited(vigia.CodeRateLimited, retry)
	}
	body, err := io.ReadAll(io.LimitReader(in.Body, MaxInboundBody+1))
	if err != nil {
		return "", vigia.BadRequest(vigia.CodeBadRequest, "error.bad_request")
	}
	if len(body) > MaxInboundBody {
		return "", &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
	}
	if err := vigia.CheckJSONText(body); err != nil {
		return "", err
	}
	t, secret, err := s.inboundIntegration(ctx, in.IntegrationID)
	if err != nil {
		return "", err
	}
	spec, found := s.providers[t.Provider]
	if secret == nil || !found || !capabilities[t.Provider].inbound || !validTicketSignature(secret, spec, in.Header, body) {
		return "", unauthorizedInbound()
	}
	st, ok := spec.Parse(body)
	if !ok {
		return "", vigia.BadRequest(vigia.CodeBadRequest, "error.bad_request")
	}
	if st.Timestamp.IsZero() || now.Sub(st.Timestamp) > inboundTolerance || st.Timestamp.Sub(now) > inboundTolerance {
		return "", vigia.BadRequest(CodeTimestampInvalid, "error.timestamp_invalid")
	}
	info, err := s.store.WorkspaceInfo(ctx, t.WorkspaceID)
	if err != nil {
		return "", err
	}
	audit := func(result string, issues []string) error {
		details := map[string]any{"result": result, "provider": t.Provider, "key": st.Key, "issues": issues}
		return s.audit(ctx, t.WorkspaceID, "ticket:"+t.Provider, "ticket_webhook."+result, "ticket_integration", t.ID, details, now)
	}
	if info.Suspended {
		return InboundWorkspaceDisabled, audit(InboundWorkspaceDisabled, nil)
	}
	if !st.Known {
		return InboundIgnored, nil
	}
	issues, err := s.store.LinkedIssues(ctx, t.ID, st.Key)
	if err != nil {
		return "", err
	}
	if len(issues) == 0 {
		return InboundUnknownTicket, nil
	}
	if !st.Closed {
		return InboundIgnored, audit(InboundIgnored, issues)
	}
	return s.resolveFromTicket(ctx, t, st.Key, issues, func(ctx context.Context, result string) error {
		details := map[string]any{"result": result, "provider": t.Provider, "key": st.Key, "issues": issues}
		return s.audit(ctx, t.WorkspaceID, "ticket:"+t.Provider, "ticket_webhook."+result, "ticket_integration", t.ID, details, now)
	})
}

// resolveFromTicket resolves the open or acknowledged issues linked to a closed ticket,
// with history origin ticket:<provider>:<key>, and audits the result (applied when an
// issue changed, else unchanged) in the same transaction. Inbound events and polling
// both come here.
func (s *Service) resolveFromTicket(ctx context.Context, t Integration, key string, issues []string,
	audit func(ctx context.Context, result string) error) (string, error) {
	result := InboundUnchanged
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		origin := "ticket:" + t.Provider + ":" + key
		for _, id := range issues {
			changed, err := s.issues.ResolveFromTicket(ctx, t.WorkspaceID, id, origin)
			if vigia.IsKind(err, vigia.KindNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if changed {
				result = InboundApplied
			}
		}
		return audit(ctx, result)
	})
	if err != nil {
		return "", err
	}
	return result, nil
}

// inboundIntegration loads an integration and opens its secret; an unknown
// integration comes back with a nil secret, so that it fails the same check as a bad
// signature.
func (s *Service) inboundIntegration(ctx context.Context, id string) (Integration, []byte, error) {
	if !vigia.ValidID(id) {
		return Integration{Provider: ProviderGeneric}, nil, nil
	}
	t, err := s.store.IntegrationForInbound(ctx, id)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return Integration{Provider: ProviderGeneric}, nil, nil
	}
	if err != nil {
		return t, nil, err
	}
	if t.SealedSecret == nil {
		return t, nil, nil
	}
	sec, err := s.box.Open(t.SealedSecret, integrationAAD(t.ID))
	if err != nil {
		s.log.ErrorContext(ctx, "webhook: ticket integration secret cannot be decrypted", "integration_id", t.ID)
		return t, nil, nil
	}
	return t, sec, nil
}

// dummyKey keeps the work of a refused request close to that of a real check.
var dummyKey = []byte("vigia-inbound-no-secret")

// validTicketSignature checks the provider's header: the hex HMAC-SHA256 of the raw
// body keyed with the webhook secret, compared in constant time.
func validTicketSignature(secret []byte, spec Provider, h http.Header, body []byte) bool {
	key := secret
	if key == nil {
		key = dummyKey
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	want := m.Sum(nil)
	value := strings.TrimSpace(h.Get(spec.Header))
	switch spec.Prefix {
	case "":
	case "*":
		value = strings.TrimPrefix(value, "sha256=")
	default:
		var ok bool
		if value, ok = strings.CutPrefix(value, spec.Prefix); !ok {
			return false
		}
	}
	got, err := hex.DecodeString(value)
	return err == nil && hmac.Equal(got, want) && secret != nil
}

func unauthorizedInbound() error {
	return &vigia.Error{Kind: vigia.KindUnauthenticated, Code: CodeSignatureInvalid, Key: "error.signature_invalid"}
}

// SignTicketEvent returns the hex HMAC-SHA256 of body keyed with secret: what a tracker
// sends (Jira with a sha256= prefix). Tests and the generic provider's documentation
// use it.
func SignTicketEvent(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
