package notify

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/webhook/delivery"
)

// IssueNotice is a notice about one issue (an escalation) for the channels that receive
// the issue's alerts, scope, severity and mutes respected. The issue's dataset name is
// added to Vars as "dataset".
type IssueNotice struct {
	WorkspaceID string
	Issue       AlertIssue
	// Event and Code are the delivery's event and stable code; Params its params.
	Event, Code string
	Params      map[string]any
	// MessageKey and Vars render the title and body in each channel's language.
	MessageKey string
	Vars       map[string]any
	// SourceKey makes the notice once per cause.
	SourceKey  string
	Escalation *delivery.Escalation
	At         time.Time
}

// SendIssueNotices records each notice and its deliveries in the transaction in ctx,
// loading each workspace's channels and mutes once. A notice whose dataset is gone is
// dropped (the issue goes with it); one sent before (same source key) is not sent again.
func (s *Service) SendIssueNotices(ctx context.Context, notices []IssueNotice) error {
	cache := map[string]*wsCtx{}
	for _, n := range notices {
		w, err := s.workspaceCtx(ctx, cache, n.WorkspaceID)
		if err != nil {
			return err
		}
		d, err := s.oneDataset(ctx, n.WorkspaceID, n.Issue.DatasetID)
		if err != nil {
			continue // the dataset is gone; the issue goes with it
		}
		is := n.Issue
		vars := map[string]any{"dataset": d.Name}
		for k, v := range n.Vars {
			vars[k] = v
		}
		msg := message{Key: n.MessageKey, Vars: vars, Lines: []line{issueLine(is)}}
		err = s.emit(ctx, w, fanout{
			notif: Notification{Event: n.Event, Code: n.Code, Params: n.Params, Payload: map[string]any{"message": msg},
				SourceKey: n.SourceKey, DatasetIDs: []string{d.ID}, IssueID: &is.ID, Severity: &is.Severity},
			hold: w.mutes.HoldingIssue(is.Type, d),
			build: func(ch Channel, lang string) (delivery.Body, bool) {
				if !ch.WantsAlert(is, d, w.grants) {
					return delivery.Body{}, false
				}
				b := s.body(lang, n.Event, n.Code, n.WorkspaceID, n.At, n.Params, msg)
				b.Escalation = n.Escalation
				return b, true
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Digest is one channel's digest: its code, message key and figures, for the slot.
type Digest struct {
	Channel    Channel
	Code       string
	MessageKey string
	Params     map[string]any
	Slot       time.Time
}

// SendDigest creates the digest's delivery to its channel, in the channel's language,
// with its job, in the transaction in ctx. It reports false when the channel already
// has the digest of the slot.
func (s *Service) SendDigest(ctx context.Context, dg Digest) (bool, error) {
	info, err := s.store.WorkspaceInfo(ctx, dg.Channel.WorkspaceID)
	if err != nil {
		return false, err
	}
	l := lang(&dg.Channel, info)
	b := s.body(l, delivery.EventDigest, dg.Code, dg.Channel.WorkspaceID, dg.Slot, dg.Params,
		message{Key: dg.MessageKey, Vars: dg.Params})
	_, created, err := s.createDelivery(ctx, dg.Channel, nil, b, "digest:"+dg.Slot.UTC().Format("2006-01-02"), false)
	return created, err
}
