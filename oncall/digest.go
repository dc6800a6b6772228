package oncall

import (
	"context"
	"time"

	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// digestHour is when, on Monday in the workspace's time zone, the weekly digest goes.
const digestHour = 8

// WeeklySlot returns the latest Monday 08:00 in loc at or before now: the instant a
// weekly digest is due.
func WeeklySlot(now time.Time, loc *time.Location) time.Time {
	local := now.In(loc)
	back := (int(local.Weekday()) + 6) % 7 // days since Monday
	slot := time.Date(local.Year(), local.Month(), local.Day()-back, digestHour, 0, 0, 0, loc)
	if slot.After(now) {
		slot = slot.AddDate(0, 0, -7)
	}
	return slot
}

// DigestChannel is a channel with the weekly digest on, with its workspace's time zone.
type DigestChannel struct {
	notify.Channel
	Timezone string
}

// DigestCounts are the figures of a workspace's weekly digest. ExpiringTokens counts the
// live API tokens whose validity ends in the coming week (after the digest's slot, within
// 7 days); StewardProposals the steward's open proposals, always 0: this build has no
// steward.
type DigestCounts struct {
	Healthy, Warning, Critical int // datasets by last verdict: pass, warn, fail
	NewSignals                 int // anomalous signals of the week
	ExpiringTokens             int
	StewardProposals           int
}

// TeamDigestCounts are the figures of a team channel's weekly digest: the team's issues.
type TeamDigestCounts struct {
	Open, Critical, Warning, Acknowledged, Overdue, Resolved int
}

// SendDigests sends the weekly digest to every channel with digest on whose slot
// (Monday 08:00 in the workspace's zone) has come and that has not had it yet; a channel
// created after the slot waits for the next one. Each digest is claimed and its
// delivery created in one transaction, so it goes once even with several workers. It
// returns how many digests it queued.
func (s *Service) SendDigests(ctx context.Context) (int, error) {
	chans, err := s.store.DigestChannels(ctx)
	if err != nil {
		return 0, err
	}
	now := s.clock.Now()
	sent := 0
	for _, ch := range chans {
		loc, err := time.LoadLocation(ch.Timezone)
		if err != nil {
			loc = time.UTC
		}
		slot := WeeklySlot(now, loc)
		if ch.CreatedAt.After(slot) || ch.LastDigestAt != nil && !ch.LastDigestAt.Before(slot) {
			continue
		}
		err = s.tx.InTx(ctx, func(ctx context.Context) error {
			claimed, err := s.store.ClaimDigest(ctx, ch.ID, slot)
			if err != nil || !claimed {
				return err
			}
			since := slot.AddDate(0, 0, -7)
			dg := notify.Digest{Channel: ch.Channel, Slot: slot}
			if ch.TeamID != nil {
				c, err := s.store.TeamDigestCounts(ctx, ch.WorkspaceID, *ch.TeamID, since, slot)
				if err != nil {
					return err
				}
				params := map[string]any{"team_id": *ch.TeamID, "open": c.Open, "critical": c.Critical, "warning": c.Warning,
					"acknowledged": c.Acknowledged, "overdue": c.Overdue, "resolved": c.Resolved}
				dg.Code, dg.MessageKey, dg.Params = delivery.CodeDigestTeamWeekly, "webhook.digest_team_weekly", params
			} else {
				c, err := s.store.DigestCounts(ctx, ch.WorkspaceID, since, slot)
				if err != nil {
					return err
				}
				params := map[string]any{"healthy": c.Healthy, "warning": c.Warning, "critical": c.Critical,
					"new_signals": c.NewSignals, "expiring_tokens": c.ExpiringTokens, "steward_proposals": c.StewardProposals}
				dg.Code, dg.MessageKey, dg.Params = delivery.CodeDigestWeekly, "webhook.digest_weekly", params
			}
			created, err := s.notices.SendDigest(ctx, dg)
			if created {
				sent++
			}
			return err
		})
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}
