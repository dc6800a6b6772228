package notify

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// JobOutcome tells the job queue what to do with a delivery's job after one run: run it
// again after Retry (the contract's wait; the attempt counts) or after Snooze (the
// workspace or channel is at its bound; no attempt was made), or finish it (both zero).
// Code is a stable short reason for the queue's last_error.
type JobOutcome struct {
	Retry  time.Duration
	Snooze time.Duration
	Code   string
}

// errTextExpired is the last_delivery_error of a delivery that could not start in time.
const errTextExpired = "expired"

// Deliver makes the next attempt of a delivery: it signs the stored body with the
// channel's current secret and a fresh timestamp, sends it through the guarded client,
// records the attempt, and says when to try again (1 s, 5 s, 25 s after attempts 1-3 on
// a 5xx, a timeout or a dropped connection). A 2xx delivers; a 4xx, a 3xx, an invalid
// certificate or a refused destination fail at once. lastRun is true on the job's last
// run: the delivery is then finished whatever happens. A delivery that is finished,
// gone with its channel, or not due yet is left alone. When ctx ends during the send
// (shutdown), nothing is recorded and ctx's error is returned, so the queue runs the
// same attempt again after a restart.
func (s *Service) Deliver(ctx context.Context, deliveryID string, lastRun bool) (JobOutcome, error) {
	if !vigia.ValidID(deliveryID) {
		return JobOutcome{}, nil
	}
	item, err := s.store.DeliveryForSend(ctx, deliveryID)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return JobOutcome{}, nil // the channel was deleted with its deliveries
	}
	if err != nil {
		return JobOutcome{}, err
	}
	if item.Status != StatusPending {
		return JobOutcome{}, nil
	}
	now := s.clock.Now()
	if item.Attempts == 0 && now.Sub(item.CreatedAt) > s.cfg.Expire {
		return JobOutcome{}, s.store.FinishDelivery(ctx, item.ID, StatusSkipped, nil, errTextExpired, now)
	}
	if item.NextAttemptAt != nil && item.NextAttemptAt.Sub(now) > 50*time.Millisecond {
		// Woken early (a duplicate job, a clock step): wait for the schedule.
		return JobOutcome{Snooze: item.NextAttemptAt.Sub(now), Code: "not_due"}, nil
	}
	release, took, ok := s.limits.acquire(item.WorkspaceID, item.ChannelID, time.Now())
	if !ok && took <= s.cfg.BusyWait {
		// A healthy receiver's slot frees within about one of its sends: wait for it here,
		// up to BusyWait, rather than requeue the delivery. A receiver whose sends (or
		// whose oldest send in flight) took longer gets no waiters.
		release, took, ok = s.limits.acquireWithin(ctx, item.WorkspaceID, item.ChannelID, s.cfg.BusyWait)
	}
	if !ok {
		return JobOutcome{Snooze: s.busySnooze(took), Code: "receiver_busy"}, nil
	}
	n := item.Attempts + 1
	a := s.attempt(ctx, item, n)
	release(a.Duration)
	if ctx.Err() != nil {
		return JobOutcome{}, ctx.Err()
	}
	rec := attemptRecord(a, s.clock.Now().Add(-a.Duration))
	wait, again := delivery.Backoff(n)
	if a.Outcome == delivery.OutcomeRetry && again && !lastRun {
		next := s.clock.Now().Add(wait)
		if err := s.store.RecordAttempt(ctx, item.ID, rec, StatusPending, &next, nil); err != nil {
			return JobOutcome{}, err
		}
		// The wait counts from the send, not from when the record was written.
		return JobOutcome{Retry: max(next.Sub(s.clock.Now()), 0), Code: retryCode(a)}, nil
	}
	status := StatusFailed
	if a.Outcome == delivery.OutcomeDelivered {
		status = StatusDelivered
	}
	finished := s.clock.Now()
	return JobOutcome{}, s.store.RecordAttempt(ctx, item.ID, rec, status, nil, &finished)
}

// busySnooze is how long a delivery whose workspace or channel is still at its bound
// after the in-process wait waits before trying again: as long as the channel's sends
// have been taking (their recent average, or the age of its oldest send in flight), within
// SnoozeMin and SnoozeMax, jittered. Deliveries queued behind a receiver that times out
// wait about one timeout instead of churning the queue, and wait longer the longer its
// oldest send hangs; a backlog of a healthy receiver is not held back for its age.
func (s *Service) busySnooze(took time.Duration) time.Duration {
	base := min(max(took, s.cfg.SnoozeMin), s.cfg.SnoozeMax)
	return snoozeFor(base, base+base/4)
}

// attempt sends attempt n of a delivery. A URL or secret that cannot be opened (the key
// changed) fails the attempt without sending.
func (s *Service) attempt(ctx context.Context, item SendItem, n int) delivery.Attempt {
	rawURL, err := s.box.Open(item.SealedURL, urlAAD(item.ChannelID))
	if err != nil {
		s.log.ErrorContext(ctx, "webhook: channel URL cannot be decrypted", "channel_id", item.ChannelID)
		return delivery.Attempt{N: n, Err: delivery.ErrTextInvalidURL, Outcome: delivery.OutcomeFailed}
	}
	var signing string
	if item.SealedSecret != nil {
		sec, err := s.box.Open(item.SealedSecret, secretAAD(item.ChannelID))
		if err != nil {
			s.log.ErrorContext(ctx, "webhook: channel secret cannot be decrypted", "channel_id", item.ChannelID)
			return delivery.Attempt{N: n, Err: "secret unavailable", Outcome: delivery.OutcomeFailed}
		}
		signing = string(sec)
	}
	var key string
	if item.IdempotencyKey != nil {
		key = *item.IdempotencyKey
	}
	d := delivery.Delivery{URL: string(rawURL), Secret: signing, Event: item.Event, ID: item.ID, IdempotencyKey: key,
		Body: item.Body, LegacyPrefix: s.cfg.LegacyPrefix, LegacyUntil: s.cfg.LegacyUntil}
	return d.Attempt(ctx, s.client, n, time.Now())
}

func attemptRecord(a delivery.Attempt, at time.Time) AttemptRecord {
	return AttemptRecord{N: a.N, At: at.UTC(), StatusCode: a.StatusCode, Error: a.Err, Outcome: string(a.Outcome),
		DurationMS: a.Duration.Milliseconds()}
}

func retryCode(a delivery.Attempt) string {
	switch {
	case a.StatusCode >= 500:
		return "http_5xx"
	case a.Err == delivery.ErrTextTimeout:
		return "timeout"
	}
	return "network"
}

// TestResult is the answer of a channel test (one attempt, no retry).
type TestResult struct {
	OK         bool
	Result     string // accepted_signed, accepted_unsigned, signature_refused, http_error, timeout, destination_refused, failed
	Message    string // in the caller's language
	StatusCode *int
	DeliveryID string
	Signed     bool
}

// Test results.
const (
	TestAcceptedSigned     = "accepted_signed"
	TestAcceptedUnsigned   = "accepted_unsigned"
	TestSignatureRefused   = "signature_refused"
	TestHTTPError          = "http_error"
	TestTimeout            = "timeout"
	TestDestinationRefused = "destination_refused"
	TestFailed             = "failed"
)

// TestChannel sends one service.test delivery to a channel now, with no retry, records it
// in the delivery log and the channel's last delivery, and reports how the receiver
// answered. The message never holds the URL. Permission rules are checked on the channel
// as it is: KindForbidden, KindNotFound.
func (s *Service) TestChannel(ctx context.Context, id string) (TestResult, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return TestResult{}, err
	}
	ch, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return TestResult{}, err
	}
	if err := s.canManage(ctx, p, ch); err != nil {
		return TestResult{}, err
	}
	info, err := s.store.WorkspaceInfo(ctx, p.WorkspaceID)
	if err != nil {
		return TestResult{}, err
	}
	l := lang(&ch, info)
	b := s.body(l, delivery.EventTest, delivery.CodeChannelTest, p.WorkspaceID, s.clock.Now(), nil,
		message{Key: "webhook.channel_test", Vars: map[string]any{"channel": ch.Name}})
	var d Delivery
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		d, _, err = s.createDelivery(ctx, ch, nil, b, "test:"+vigia.NewID(), true)
		return err
	})
	if err != nil {
		return TestResult{}, err
	}
	item := SendItem{Delivery: d, SealedURL: ch.SealedURL, SealedSecret: ch.SealedSecret}
	a := s.attempt(ctx, item, 1)
	status := StatusFailed
	if a.Outcome == delivery.OutcomeDelivered {
		status = StatusDelivered
	}
	finished := s.clock.Now()
	if err := s.store.RecordAttempt(context.WithoutCancel(ctx), d.ID, attemptRecord(a, finished.Add(-a.Duration)), status, nil, &finished); err != nil {
		return TestResult{}, err
	}
	res := TestResult{OK: a.Outcome == delivery.OutcomeDelivered, DeliveryID: d.ID, Signed: ch.Signed}
	if a.StatusCode != 0 {
		code := a.StatusCode
		res.StatusCode = &code
	}
	switch {
	case res.OK && ch.Signed:
		res.Result = TestAcceptedSigned
	case res.OK:
		res.Result = TestAcceptedUnsigned
	case a.StatusCode == http.StatusUnauthorized || a.StatusCode == http.StatusForbidden:
		res.Result = TestSignatureRefused
	case a.StatusCode != 0:
		res.Result = TestHTTPError
	case a.Err == delivery.ErrTextTimeout:
		res.Result = TestTimeout
	case a.Outcome == delivery.OutcomeRefused:
		res.Result = TestDestinationRefused
	default:
		res.Result = TestFailed
	}
	res.Message = s.msgs.Message(vigia.Lang(ctx), "webhook.test."+res.Result, map[string]any{"status": a.StatusCode, "error": a.Err})
	return res, nil
}

// Deliveries lists a channel's delivery log, newest first, with every attempt (admin
// sessions only): KindForbidden otherwise, KindNotFound for an unknown channel.
func (s *Service) Deliveries(ctx context.Context, channelID string, page vigia.Page) (vigia.List[Delivery], error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return vigia.List[Delivery]{}, err
	}
	if _, err := s.channel(ctx, p.WorkspaceID, channelID); err != nil {
		return vigia.List[Delivery]{}, err
	}
	return s.store.Deliveries(ctx, p.WorkspaceID, channelID, page)
}
