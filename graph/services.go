package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/dashboard"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/trust"
)

// The resolvers depend on these per-area interfaces, one per feature, holding just the
// calls they make; app passes the real services, and resolver tests may pass fakes.

// CatalogService is what the resolvers need of the catalog.
type CatalogService interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
	DatasetDetails(ctx context.Context, ids []string, historyLimit int) (map[string]catalog.Dataset, error)
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
}

// ScanService is what the resolvers need of scans.
type ScanService interface {
	Scan(ctx context.Context, id string) (scan.Scan, error)
	Scans(ctx context.Context, page vigia.Page) (vigia.List[scan.Scan], error)
	Signals(ctx context.Context, f scan.SignalFilter) (vigia.List[scan.Signal], error)
	TriggerScan(ctx context.Context, connectionRef, trigger string) (scan.Scan, error)
}

// ScanReadService is what the resolvers need of the scan reads.
type ScanReadService interface {
	Verdict(ctx context.Context, datasetID string) (scan.VerdictOut, error)
	Freshness(ctx context.Context, datasetID string) (scan.Freshness, error)
	SchemaChanges(ctx context.Context, datasetID string) ([]scan.SchemaChangeSet, error)
	IncrementalProfiling(ctx context.Context, datasetID string) (scan.IncrementalProfiling, error)
	AutoMonitors(ctx context.Context, datasetID string) (scan.AutoMonitors, error)
	Parsing(ctx context.Context, datasetID string) (scan.Parsing, error)
	ExplainScore(ctx context.Context, datasetID string) (scan.ScoreExplanation, error)
	Tuning(ctx context.Context, datasetID string) ([]quality.Tuning, error)
}

// RuleService is what the resolvers need of rules.
type RuleService interface {
	CreateRule(ctx context.Context, in rule.CreateInput) (rule.Rule, error)
	DeleteRule(ctx context.Context, id string) error
	Rule(ctx context.Context, id string) (rule.Rule, error)
	Rules(ctx context.Context, f rule.Filter) (vigia.List[rule.Rule], error)
	UpdateRule(ctx context.Context, id string, u rule.Update) (rule.Rule, error)
}

// DashboardService answers the governance metrics and the dashboards.
type DashboardService interface {
	Governance(ctx context.Context, days *int) (dashboard.Governance, error)
	Executive(ctx context.Context, days *int) (dashboard.Executive, error)
}

// FinopsService answers the chargeback and the finops dashboard.
type FinopsService interface {
	Chargeback(ctx context.Context, f finops.ChargebackFilter) (vigia.List[finops.Row], error)
	FinopsDashboard(ctx context.Context) (finops.Dashboard, error)
}

// IssueService is what the resolvers need of issues.
type IssueService interface {
	Assign(ctx context.Context, id string, teamID *string) (issue.Issue, error)
	Histories(ctx context.Context, ids []string) (map[string][]issue.HistoryEntry, error)
	Issue(ctx context.Context, id string) (issue.Issue, error)
	Issues(ctx context.Context, f issue.Filter) (vigia.List[issue.Issue], error)
	Transition(ctx context.Context, id, action, note string) (issue.Issue, error)
}

// IncidentService is what the resolvers need of incidents.
type IncidentService interface {
	Incidents(ctx context.Context, f incident.Filter) (vigia.List[incident.View], error)
	Incident(ctx context.Context, id string) (incident.View, error)
}

// LineageService is what the resolvers need of lineage and the knowledge graph.
type LineageService interface {
	Impact(ctx context.Context, datasetID string, column *string) (lineage.ImpactResult, error)
	ImpactMany(ctx context.Context, ids []string, column *string) (map[string]lineage.ImpactResult, map[string]error, error)
	KnowledgeGraph(ctx context.Context, o lineage.KnowledgeOpts) (lineage.KGraph, error)
	Path(ctx context.Context, datasetID, targetID string) (lineage.PathResult, error)
	Traverse(ctx context.Context, datasetID string, o lineage.TraverseOpts) (lineage.TraverseResult, error)
	TraverseMany(ctx context.Context, ids []string, o lineage.TraverseOpts) (map[string]lineage.TraverseResult, error)
}

// TrustService is what the resolvers need of trust.
type TrustService interface {
	Consumers(ctx context.Context, page vigia.Page) (vigia.List[trust.Consumer], error)
	Decide(ctx context.Context, datasetID, purpose string) (trust.Decision, error)
	DatasetConsumers(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[trust.Consumer], error)
	PreviewRAGGate(ctx context.Context, in trust.GateInput) (trust.GateResult, error)
}

// ProductService is what the resolvers need of data products.
type ProductService interface {
	Domain(ctx context.Context, id string) (product.Domain, error)
	Domains(ctx context.Context, page vigia.Page) (vigia.List[product.Domain], error)
	Readiness(ctx context.Context, id string) (product.Readiness, error)
	SLO(ctx context.Context, id string, month *string) (product.SLOReport, error)
	VersionPage(ctx context.Context, id string, page vigia.Page) (vigia.List[product.VersionRow], error)
	ConsumerPage(ctx context.Context, id string, page vigia.Page) (vigia.List[product.DomainConsumer], error)
}

// ContractService is what the resolvers need of data contracts.
type ContractService interface {
	Summary(ctx context.Context, datasetID string) (contract.Summary, error)
	Versions(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[contract.VersionRecord], error)
}

// BIService is what the resolvers need of the BI refresh feed.
type BIService interface {
	Refreshes(ctx context.Context, f bi.RefreshFilter) (vigia.List[bi.Refresh], error)
}
