package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/blackout"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/datapolicy"
	"github.com/vigia-data/vigia/ide"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/report"
	"github.com/vigia-data/vigia/routine"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/team"
	"github.com/vigia-data/vigia/ticket"
)

// OpsServices are the services of the reads issue 23 brought to GraphQL at parity with
// REST (teams, notifications, the rota, tickets, ...): each resolver makes the REST
// handler's service call.
type OpsServices struct {
	Teams   TeamService
	Notify  NotifyService
	OnCall  OnCallService
	Tickets TicketService
	// Issues answers the issue workflow's reads (board, SLA, explanations).
	Issues IssueReadService
	// Incidents answers an issue's blast radius.
	Incidents IssueImpactService
	// RulePacks answers the rule packs and their previews.
	RulePacks RulePackService
	// ReconcileChecks answers declared reconciliation checks.
	ReconcileChecks ReconcileCheckService
	// Orchestrators answers reported pipeline runs.
	Orchestrators OrchestratorService
	// IDE answers the editor reads.
	IDE IDEService
	// Shares answers data products' public shares.
	Shares ShareService
	// Account answers the calling account and the workspace's settings.
	Account AccountService
	// DataPolicies answers the workspace's and domains' data policies.
	DataPolicies DataPolicyService
	// Compliance answers the Article 10 dossier.
	Compliance ComplianceService
	// Knowledge answers knowledge entries.
	Knowledge KnowledgeService
	// Reports answers written reports.
	Reports ReportService
	// Routines answers the scheduled routines.
	Routines RoutineService
	// Suggestions answers suggestions.
	Suggestions SuggestionService
	// Blackouts answers connections' blackout windows.
	Blackouts BlackoutReader
}

// AccountService is what the resolvers need of the calling account.
type AccountService interface {
	Me(ctx context.Context) (identity.Account, error)
	CurrentWorkspace(ctx context.Context) (identity.Workspace, error)
}

// DataPolicyService is what the resolvers need of data policies ("" is the workspace's).
type DataPolicyService interface {
	Policy(ctx context.Context, domainID string) (datapolicy.Policy, error)
}

// ComplianceService is what the resolvers need of compliance dossiers, the AI-system
// register and the verticals.
type ComplianceService interface {
	Art10(ctx context.Context) (compliance.Art10, error)
	AISystems(ctx context.Context, page vigia.Page) (vigia.List[compliance.AISystem], error)
	AISystem(ctx context.Context, id string) (compliance.AISystem, error)
	Verticals(ctx context.Context) ([]compliance.Vertical, error)
}

// BlackoutReader is what the resolvers need of connections' blackout windows.
type BlackoutReader interface {
	List(ctx context.Context, connectionID string) ([]blackout.Window, error)
}

// KnowledgeService is what the resolvers need of knowledge entries.
type KnowledgeService interface {
	Get(ctx context.Context, id string) (knowledge.Entry, error)
	Search(ctx context.Context, q knowledge.Query) (vigia.List[knowledge.Entry], error)
}

// ReportService is what the resolvers need of reports.
type ReportService interface {
	Reports(ctx context.Context, page vigia.Page) (vigia.List[report.Report], error)
	Report(ctx context.Context, id string) (report.Report, error)
}

// RoutineService is what the resolvers need of routines.
type RoutineService interface {
	Routines(ctx context.Context) ([]routine.Routine, error)
}

// SuggestionService is what the resolvers need of suggestions.
type SuggestionService interface {
	List(ctx context.Context, category, datasetID *string, page vigia.Page) (vigia.List[suggest.Suggestion], error)
	Get(ctx context.Context, id string) (suggest.Suggestion, error)
}

// RulePackService is what the resolvers need of rule packs.
type RulePackService interface {
	RulePacks(ctx context.Context) ([]rule.Pack, error)
	RulePack(ctx context.Context, name string) (rule.Pack, error)
	PreviewRulePack(ctx context.Context, name string, scope rule.PackScope) (rule.PackPlan, error)
}

// ReconcileCheckService is what the resolvers need of reconciliation checks.
type ReconcileCheckService interface {
	Checks(ctx context.Context, page vigia.Page) (vigia.List[datadiff.Check], error)
	Check(ctx context.Context, id string) (datadiff.Check, error)
}

// OrchestratorService is what the resolvers need of orchestrator runs.
type OrchestratorService interface {
	Runs(ctx context.Context, f orchestrator.RunFilter) (vigia.List[orchestrator.Run], error)
}

// IDEService is what the resolvers need of the editor reads.
type IDEService interface {
	Columns(ctx context.Context, datasetID string) ([]ide.Column, error)
	Resolve(ctx context.Context, name string, connection *string) (ide.Resolution, error)
}

// ShareService is what the resolvers need of public shares.
type ShareService interface {
	PublicShare(ctx context.Context, id string) (product.ShareInfo, error)
}

// IssueReadService is what the resolvers need of the issue workflow's reads.
type IssueReadService interface {
	Board(ctx context.Context, assigneeTeam *string) (issue.Board, error)
	Explain(ctx context.Context, id string) (issue.Explanation, error)
	SLAReport(ctx context.Context, period, groupBy string) (issue.SLAReport, error)
	SLATargets(ctx context.Context) (issue.Targets, error)
}

// IssueImpactService is what the resolvers need of an issue's blast radius.
type IssueImpactService interface {
	IssueImpact(ctx context.Context, issueID string) (lineage.ImpactView, error)
}

// TeamService is what the resolvers need of teams.
type TeamService interface {
	Team(ctx context.Context, id string) (team.Team, error)
	Teams(ctx context.Context) ([]team.Team, error)
}

// NotifyService is what the resolvers need of notifications: channels, their preview and
// delivery log, in-app notifications and mutes.
type NotifyService interface {
	Channel(ctx context.Context, id string) (notify.Channel, error)
	Deliveries(ctx context.Context, channelID string, page vigia.Page) (vigia.List[notify.Delivery], error)
	ListChannels(ctx context.Context, page vigia.Page) (vigia.List[notify.Channel], error)
	Mutes(ctx context.Context, page vigia.Page) (vigia.List[notify.Mute], error)
	Notifications(ctx context.Context, f notify.NotificationFilter) (vigia.List[notify.Notification], error)
	PreviewChannel(ctx context.Context, id string, days int) (notify.Preview, error)
}

// OnCallService is what the resolvers need of the on-call rota.
type OnCallService interface {
	OnCallRota(ctx context.Context) (oncall.Rota, error)
}

// TicketService is what the resolvers need of ticket integrations.
type TicketService interface {
	Integration(ctx context.Context, id string) (ticket.Integration, error)
	Integrations(ctx context.Context) ([]ticket.Integration, error)
	Targets(ctx context.Context, id string) (ticket.Targets, error)
}
