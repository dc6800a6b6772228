package scan

import (
	"context"
	"errors"

	"github.com/vigia-data/vigia"
)

// AfterJobKind is the job that runs the consumers of a succeeded scan's event.
const AfterJobKind = "scan.after"

// Consumer processes the scan.succeeded event of a succeeded scan of a connection
// (lineage re-derives the connection's edges, incidents group open issues, products
// write domain verdict events). It runs at least once per event and must be
// idempotent: a retry after a failure or a crash runs it again.
type Consumer interface {
	AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error
}

// NamedConsumer is a consumer with the stable name its progress is recorded under.
type NamedConsumer struct {
	Name string
	Consumer
}

// Succeeded is a scan.succeeded event of the outbox and the consumers that processed
// it.
type Succeeded struct {
	EventID      string
	WorkspaceID  string
	ConnectionID string
	ScanID       string
	Consumed     []string
	Handled      bool
}

// AfterScan runs the consumers of a succeeded scan's event: the job of AfterJobKind.
// Holding the connection's lock, it takes the connection's events not yet handled up
// to this scan's, oldest first, and runs each consumer that has not processed an
// event yet, recording it when it succeeds. A consumer that fails on an event is not
// run on the connection's later events (order per connection); the others go on.
// The failures are returned joined, so the job is retried; an event is handled when
// every consumer processed it. With giveUp (the job's last attempt) an event whose
// consumers still fail is marked handled anyway, logged, so that it holds back
// neither the connection's later events nor the scan's notifications.
func (s *Service) AfterScan(ctx context.Context, scanID string, giveUp bool) error {
	ev, err := s.store.SucceededEvent(ctx, scanID)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return nil // deleted with its connection
	}
	if err != nil || ev.Handled {
		return err
	}
	return s.store.WithConnectionLock(ctx, ev.ConnectionID, func(ctx context.Context) error {
		pending, err := s.store.PendingSucceeded(ctx, ev)
		if err != nil {
			return err
		}
		blocked := map[string]bool{}
		var errs []error
		for _, p := range pending {
			done := map[string]bool{}
			for _, c := range p.Consumed {
				done[c] = true
			}
			all := true
			for _, c := range s.consumers {
				if done[c.Name] {
					continue
				}
				if blocked[c.Name] {
					all = false
					continue
				}
				// The consumers act for the workspace as the system, as the scan did.
				pctx := vigia.WithPrincipal(ctx, vigia.Principal{WorkspaceID: p.WorkspaceID, UserID: "system:scan", Role: vigia.RoleAdmin})
				end := func() {}
				if s.observeStep != nil {
					end = s.observeStep(c.Name)
				}
				err := c.AfterScan(pctx, p.WorkspaceID, p.ConnectionID, p.ScanID)
				end()
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					s.log.WarnContext(ctx, "after-scan step failed", "scan_id", p.ScanID, "step", c.Name, "cause", err.Error())
					blocked[c.Name] = true
					all = false
					errs = append(errs, err)
					continue
				}
				if err := s.store.MarkConsumed(ctx, p.EventID, c.Name, s.clock.Now()); err != nil {
					return err
				}
			}
			if !all && giveUp {
				s.log.ErrorContext(ctx, "after-scan steps failed repeatedly; given up", "scan_id", p.ScanID)
				all = true
			}
			if all {
				if err := s.store.MarkHandled(ctx, p.EventID, s.clock.Now()); err != nil {
					return err
				}
			}
		}
		if giveUp {
			return nil
		}
		return errors.Join(errs...)
	})
}

// AfterScanDone reports whether a finished scan's after-scan steps are done: a failed
// scan has none; a succeeded one is done when its event is handled.
func (s *Service) AfterScanDone(ctx context.Context, scanID string) (bool, error) {
	ev, err := s.store.SucceededEvent(ctx, scanID)
	if vigia.IsKind(err, vigia.KindNotFound) {
		return true, nil
	}
	return err == nil && ev.Handled, err
}
