package graph

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/ide"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
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
