// Package plan is the workspace plans (free, team, business) and what each entitles:
// the features a plan includes and its quotas. It answers the contract's 402:
// plan_limit when a feature is not in the plan, org_quota when a quota is used up,
// both with the workspace's plan and the limit in the body.
package plan

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
)

// Plan is a workspace's plan.
type Plan string

// The plans, smallest first. A self-hosted installation is Business unless the operator
// chooses another plan (`vigia workspace set --plan`).
const (
	Free     Plan = "free"
	Team     Plan = "team"
	Business Plan = "business"
	Default       = Business
)

var rank = map[Plan]int{Free: 1, Team: 2, Business: 3}

// Valid reports whether p is one of the plans.
func (p Plan) Valid() bool { return rank[p] > 0 }

// AtLeast reports whether p includes everything min includes.
func (p Plan) AtLeast(min Plan) bool { return rank[p] >= rank[min] }

// Feature is something a plan may or may not include.
type Feature string

// The gated features and the smallest plan that has each.
const (
	// APITokens: creating API tokens (contract part 5: Team plan and above).
	APITokens Feature = "api_tokens"
	// ComplianceDossiers: the AI Act dossiers (/compliance/ai-systems, /ai-systems/{id},
	// /art10), Business plan.
	ComplianceDossiers Feature = "compliance_dossiers"
	// LabelQuality: the label-quality extra (/datasets/{id}/label-quality configuration
	// and runs), Business plan.
	LabelQuality Feature = "label_quality"
)

var needs = map[Feature]Plan{APITokens: Team, ComplianceDossiers: Business, LabelQuality: Business}

// Quota is a counted allowance of a plan.
type Quota string

// The quotas.
const (
	// Datasets is the number of datasets a workspace may hold; checked when a scan is
	// requested (a workspace at or over it cannot request more scans).
	Datasets Quota = "datasets"
	// ScansPerDay is the number of scans a workspace may request per UTC day.
	ScansPerDay Quota = "scans_per_day"
)

// Unlimited is a quota without bound.
const Unlimited = -1

var quotas = map[Plan]map[Quota]int{
	Free:     {Datasets: 25, ScansPerDay: 20},
	Team:     {Datasets: 500, ScansPerDay: 500},
	Business: {Datasets: Unlimited, ScansPerDay: Unlimited},
}

// Limit returns p's allowance of q (Unlimited when unbounded).
func (p Plan) Limit(q Quota) int {
	if m, ok := quotas[p]; ok {
		return m[q]
	}
	return 0
}

// Needs returns the smallest plan that includes f.
func Needs(f Feature) Plan { return needs[f] }

// Allows reports whether p includes f.
func (p Plan) Allows(f Feature) bool { return p.AtLeast(needs[f]) }

// Error codes of the 402 answers.
const (
	CodePlanLimit = "plan_limit"
	CodeOrgQuota  = "org_quota"
)

// Require answers nil when p includes f, else a 402 plan_limit whose limit is 0 (the
// plan allows none of the feature) and which names the plan the feature needs.
func Require(p Plan, f Feature) error {
	if p.Allows(f) {
		return nil
	}
	return &vigia.Error{Kind: vigia.KindPaymentRequired, Code: CodePlanLimit, Key: "error.plan_limit",
		Params: map[string]any{"plan": string(p), "required": string(needs[f])},
		Plan:   &vigia.PlanLimit{Plan: string(p), Limit: 0, Required: string(needs[f])}}
}

// Within answers nil when used is below p's allowance of q, else a 402 org_quota with
// the allowance as limit.
func Within(p Plan, q Quota, used int) error {
	limit := p.Limit(q)
	if limit == Unlimited || used < limit {
		return nil
	}
	return quotaError(p, q, limit)
}

func quotaError(p Plan, q Quota, limit int) error {
	return &vigia.Error{Kind: vigia.KindPaymentRequired, Code: CodeOrgQuota, Key: "error.org_quota." + string(q),
		Params: map[string]any{"plan": string(p), "limit": limit},
		Plan:   &vigia.PlanLimit{Plan: string(p), Limit: limit, Quota: string(q)}}
}

// Store reads what the quotas count.
type Store interface {
	// WorkspacePlan returns the workspace's plan.
	WorkspacePlan(ctx context.Context, workspaceID string) (Plan, error)
	// CountDatasets counts the workspace's datasets.
	CountDatasets(ctx context.Context, workspaceID string) (int, error)
	// CountScansSince counts the scans the workspace requested since t.
	CountScansSince(ctx context.Context, workspaceID string, t time.Time) (int, error)
}

// Service answers entitlement questions about the caller's workspace.
type Service struct {
	store Store
	clock vigia.Clock
}

// NewService returns the plan service.
func NewService(store Store, clock vigia.Clock) *Service {
	return &Service{store: store, clock: clock}
}

// Require answers nil when the caller's workspace plan includes f, else 402 plan_limit.
func (s *Service) Require(ctx context.Context, f Feature) error {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return err
	}
	pl, err := s.store.WorkspacePlan(ctx, p.WorkspaceID)
	if err != nil {
		return err
	}
	return Require(pl, f)
}

// AllowScan answers nil when the caller's workspace may request one more scan: it holds
// no more datasets than its plan's quota and requested fewer scans today (UTC) than its
// daily quota; else 402 org_quota.
func (s *Service) AllowScan(ctx context.Context) error {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return err
	}
	pl, err := s.store.WorkspacePlan(ctx, p.WorkspaceID)
	if err != nil {
		return err
	}
	if pl.Limit(Datasets) != Unlimited {
		n, err := s.store.CountDatasets(ctx, p.WorkspaceID)
		if err != nil {
			return err
		}
		if limit := pl.Limit(Datasets); n > limit {
			return quotaError(pl, Datasets, limit)
		}
	}
	if pl.Limit(ScansPerDay) != Unlimited {
		now := s.clock.Now().UTC()
		day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		n, err := s.store.CountScansSince(ctx, p.WorkspaceID, day)
		if err != nil {
			return err
		}
		return Within(pl, ScansPerDay, n)
	}
	return nil
}
