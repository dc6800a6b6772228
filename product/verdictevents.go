package product

import (
	"context"
	"sort"

	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/quality"
)

// EventDomainVerdictChanged is the outbox event of a domain whose aggregated verdict a
// scan changed.
const EventDomainVerdictChanged = "domain.verdict_changed"

// MemberVerdict is a member dataset of a domain that holds a dataset whose verdict a scan
// changed: its verdict now and, when the scan changed it, before.
type MemberVerdict struct {
	DomainID, DomainName   string
	DatasetID, DatasetName string
	Verdict                string  // the latest verdict ("" when the dataset has none)
	Before                 *string // the verdict before the scan, when the scan changed it
}

// DomainVerdictChange is a domain whose aggregated verdict changed, and the member
// datasets whose changes changed it.
type DomainVerdictChange struct {
	DomainID, DomainName string
	From, To             string
	Changed              []DatasetVerdict // DatasetID and DatasetName
}

// DomainVerdictChanges compares each domain's aggregated verdict (the worst of its
// members', see quality.AggregateVerdict) before and after a scan: before, the members the
// scan changed count with their previous verdict, the others with their current one. A
// domain whose verdict stays the same gives nothing, whatever its members did. Domains
// come back sorted by id, changed datasets by name.
func DomainVerdictChanges(members []MemberVerdict) []DomainVerdictChange {
	type agg struct {
		name          string
		before, after []quality.Verdict
		changed       []DatasetVerdict
	}
	byDomain := map[string]*agg{}
	for _, m := range members {
		a := byDomain[m.DomainID]
		if a == nil {
			a = &agg{name: m.DomainName}
			byDomain[m.DomainID] = a
		}
		now := verdictOrUnknown(m.Verdict)
		before := now
		if m.Before != nil {
			before = verdictOrUnknown(*m.Before)
			if before != now {
				a.changed = append(a.changed, DatasetVerdict{DatasetID: m.DatasetID, DatasetName: m.DatasetName})
			}
		}
		a.before, a.after = append(a.before, before), append(a.after, now)
	}
	var out []DomainVerdictChange
	for id, a := range byDomain {
		from, to := quality.AggregateVerdict(a.before), quality.AggregateVerdict(a.after)
		if from == to || len(a.changed) == 0 {
			continue
		}
		sort.Slice(a.changed, func(i, j int) bool { return a.changed[i].DatasetName < a.changed[j].DatasetName })
		out = append(out, DomainVerdictChange{DomainID: id, DomainName: a.name, From: string(from), To: string(to), Changed: a.changed})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DomainID < out[j].DomainID })
	return out
}

func verdictOrUnknown(v string) quality.Verdict {
	if v == "" {
		return quality.VerdictUnknown
	}
	return quality.Verdict(v)
}

// DomainVerdictEvent is the outbox row of a domain verdict change: its idempotency key is
// the sha256 of domain, scan and type, the same on a repeated scan.
type DomainVerdictEvent struct {
	WorkspaceID, ScanID, DomainID string
	IdempotencyKey                string
	Payload                       map[string]any
}

// AfterScan runs at the end of every successful scan: every domain whose aggregated
// verdict the scan's dataset verdict changes changed gets a domain.verdict_changed event
// in the outbox (delivered by the webhooks to the channels that ask for it). A repeated
// scan writes nothing new.
func (s *Service) AfterScan(ctx context.Context, workspaceID, _, scanID string) error {
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		members, err := s.store.ScanMemberVerdicts(ctx, workspaceID, scanID)
		if err != nil || len(members) == 0 {
			return err
		}
		for _, c := range DomainVerdictChanges(members) {
			changed := make([]map[string]any, 0, len(c.Changed))
			for _, d := range c.Changed {
				changed = append(changed, map[string]any{"dataset_id": d.DatasetID, "dataset_name": d.DatasetName})
			}
			ev := DomainVerdictEvent{WorkspaceID: workspaceID, ScanID: scanID, DomainID: c.DomainID,
				IdempotencyKey: event.IdempotencyKey(c.DomainID, scanID, EventDomainVerdictChanged, ""),
				Payload: map[string]any{"domain_id": c.DomainID, "domain_name": c.DomainName, "from": c.From, "to": c.To,
					"scan_id": scanID, "datasets_changed": changed}}
			if err := s.store.InsertDomainVerdictEvent(ctx, ev, s.clock.Now()); err != nil {
				return err
			}
		}
		return nil
	})
}
