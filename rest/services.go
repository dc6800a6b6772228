package rest

import (
	"context"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/dashboard"
	"github.com/vigia-data/vigia/datapolicy"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/ide"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/ingest"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/readme"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/sensitivity"
	"github.com/vigia-data/vigia/team"
	"github.com/vigia-data/vigia/ticket"
	"github.com/vigia-data/vigia/trust"
)

// The transport depends on these per-area interfaces, one per feature, holding just
// the calls its handlers make; app passes the real services, and handler tests may pass
// fakes.

// IdentityService is what the transport needs of identity: who a bearer secret is.
type IdentityService interface {
	Authenticate(ctx context.Context, secret string) (vigia.Principal, error)
}

// AccountService is what the transport needs of workspace and account settings.
type AccountService interface {
	CurrentWorkspace(ctx context.Context) (identity.Workspace, error)
	SetWorkspaceLocale(ctx context.Context, locale *string, timezone string) (identity.Workspace, error)
	SetWorkspaceCurrency(ctx context.Context, currency *string) (identity.Workspace, error)
	Me(ctx context.Context) (identity.Account, error)
	UpdateMe(ctx context.Context, in identity.AccountUpdate) (identity.Account, error)
}

// DataPolicyService is what the transport needs of data policies.
type DataPolicyService interface {
	Policy(ctx context.Context, domainID string) (datapolicy.Policy, error)
	SetPolicy(ctx context.Context, domainID string, rules []datapolicy.Rule) (datapolicy.Policy, error)
}

// ComplianceService is what the transport needs of the compliance dossiers.
type ComplianceService interface {
	Art10(ctx context.Context) (compliance.Art10, error)
	AISystems(ctx context.Context, page vigia.Page) (vigia.List[compliance.AISystem], error)
	AISystem(ctx context.Context, id string) (compliance.AISystem, error)
	RegisterAISystem(ctx context.Context, in compliance.AISystemInput) (compliance.AISystem, error)
	DeleteAISystem(ctx context.Context, id string) error
	Verticals(ctx context.Context) ([]compliance.Vertical, error)
	VerticalReport(ctx context.Context, key string) (compliance.VerticalReport, error)
}

// FinopsService is what the transport needs of chargeback and currency amounts.
type FinopsService interface {
	Chargeback(ctx context.Context, f finops.ChargebackFilter) (vigia.List[finops.Row], error)
	FinopsDashboard(ctx context.Context) (finops.Dashboard, error)
}

// DashboardService is what the transport needs of the dashboards and governance metrics.
type DashboardService interface {
	Governance(ctx context.Context, days *int) (dashboard.Governance, error)
	Executive(ctx context.Context, days *int) (dashboard.Executive, error)
}

// CatalogService is what the transport needs of the catalog.
type CatalogService interface {
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
}

// ConnectionService is what the transport needs of connections.
type ConnectionService interface {
	Add(ctx context.Context, in connection.AddInput) (connection.Connection, error)
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Connections(ctx context.Context) ([]connection.Connection, error)
	DemoPacks() []connection.DemoPack
	Engineering(ctx context.Context, id string) (connection.Engineering, error)
	Presets() []connection.Preset
	QueryLog(ctx context.Context, id string, f connection.QueryLogFilter) (vigia.List[connection.QueryLogEntry], error)
	Types() []connection.ConnectorType
	Update(ctx context.Context, id string, u connection.Update) (connection.Connection, error)
	UpdateSchedule(ctx context.Context, id string, u connection.ScheduleUpdate) (connection.Connection, error)
}

// ScanService is what the transport needs of scans.
type ScanService interface {
	Scan(ctx context.Context, id string) (scan.Scan, error)
	Scans(ctx context.Context, page vigia.Page) (vigia.List[scan.Scan], error)
	Signals(ctx context.Context, f scan.SignalFilter) (vigia.List[scan.Signal], error)
	TriggerScan(ctx context.Context, connectionRef, trigger string) (scan.Scan, error)
}

// ScanReadService is what the transport needs of the scan reads.
type ScanReadService interface {
	AutoMonitors(ctx context.Context, datasetID string) (scan.AutoMonitors, error)
	DataCountry(ctx context.Context, datasetID string) (scan.DataCountry, error)
	ExplainScore(ctx context.Context, datasetID string) (scan.ScoreExplanation, error)
	Freshness(ctx context.Context, datasetID string) (scan.Freshness, error)
	IncrementalProfiling(ctx context.Context, datasetID string) (scan.IncrementalProfiling, error)
	Parsing(ctx context.Context, datasetID string) (scan.Parsing, error)
	SchemaChanges(ctx context.Context, datasetID string) ([]scan.SchemaChangeSet, error)
	Tuning(ctx context.Context, datasetID string) ([]quality.Tuning, error)
	Verdict(ctx context.Context, datasetID string) (scan.VerdictOut, error)
}

// RuleService is what the transport needs of rules.
type RuleService interface {
	CreateRule(ctx context.Context, in rule.CreateInput) (rule.Rule, error)
	DeleteRule(ctx context.Context, id string) error
	FailingRowsSQL(ctx context.Context, id string, dialect *string, limit int) (rule.FailingRows, error)
	Rule(ctx context.Context, id string) (rule.Rule, error)
	Rules(ctx context.Context, f rule.Filter) (vigia.List[rule.Rule], error)
	UpdateRule(ctx context.Context, id string, u rule.Update) (rule.Rule, error)
	ExportRules(ctx context.Context, datasetID *string, format string) (rule.Export, error)
	ImportRules(ctx context.Context, in rule.ImportInput) (rule.ImportResult, error)
	RulePacks(ctx context.Context) ([]rule.Pack, error)
	RulePack(ctx context.Context, name string) (rule.Pack, error)
	PreviewRulePack(ctx context.Context, name string, scope rule.PackScope) (rule.PackPlan, error)
	ApplyRulePack(ctx context.Context, name string, scope rule.PackScope) (rule.PackPlan, error)
	RecordDBTTests(ctx context.Context, invocationID string, tests []rule.DBTTest) (rule.DBTSummary, error)
}

// IssueService is what the transport needs of issues.
type IssueService interface {
	Assign(ctx context.Context, id string, teamID *string) (issue.Issue, error)
	Board(ctx context.Context, assigneeTeam *string) (issue.Board, error)
	DecideRetune(ctx context.Context, datasetID, retuneID string, approve bool) (issue.Retune, error)
	Explain(ctx context.Context, id string) (issue.Explanation, error)
	Issue(ctx context.Context, id string) (issue.Issue, error)
	Issues(ctx context.Context, f issue.Filter) (vigia.List[issue.Issue], error)
	SLAReport(ctx context.Context, period, groupBy string) (issue.SLAReport, error)
	SLATargets(ctx context.Context) (issue.Targets, error)
	SetSLATargets(ctx context.Context, t issue.Targets) (issue.Targets, error)
	Transition(ctx context.Context, id, action, note string) (issue.Issue, error)
}

// TeamService is what the transport needs of teams.
type TeamService interface {
	AddMember(ctx context.Context, teamID, userRef string) (team.Team, error)
	CreateTeam(ctx context.Context, name string) (team.Team, error)
	DeleteTeam(ctx context.Context, id string) error
	RemoveMember(ctx context.Context, teamID, userID string) error
	RenameTeam(ctx context.Context, id, name string) (team.Team, error)
	Team(ctx context.Context, id string) (team.Team, error)
	Teams(ctx context.Context) ([]team.Team, error)
}

// IncidentService is what the transport needs of incidents and issues' impact.
type IncidentService interface {
	Incident(ctx context.Context, id string) (incident.View, error)
	Incidents(ctx context.Context, f incident.Filter) (vigia.List[incident.View], error)
	IssueImpact(ctx context.Context, issueID string) (lineage.ImpactView, error)
}

// LineageService is what the transport needs of lineage and the knowledge graph.
type LineageService interface {
	DBTRunResults(ctx context.Context, run ingest.DBTRun, manifest *ingest.DBTManifest, opts lineage.ImportOptions) (lineage.RunSummary, error)
	DeclareEdge(ctx context.Context, in lineage.DeclaredEdge) error
	DeclareExposure(ctx context.Context, in lineage.ExposureInput) (lineage.Exposure, error)
	DeleteDeclaredEdge(ctx context.Context, sourceID, targetID string) error
	Diff(ctx context.Context, from string, to *string) (lineage.GraphDiff, error)
	Exposures(ctx context.Context) ([]lineage.Exposure, error)
	Impact(ctx context.Context, datasetID string, column *string) (lineage.ImpactResult, error)
	KnowledgeGraph(ctx context.Context, o lineage.KnowledgeOpts) (lineage.KGraph, error)
	Lineage(ctx context.Context, datasetID string) (lineage.LineageResult, error)
	MayImportDBT(ctx context.Context) error
	OpenLineageEvents(ctx context.Context, batch ingest.OLBatch) (lineage.OpenLineageResult, error)
	Path(ctx context.Context, datasetID, targetID string) (lineage.PathResult, error)
	SnapshotHistory(ctx context.Context, page vigia.Page) (vigia.List[lineage.Snapshot], error)
	TakeSnapshot(ctx context.Context) (lineage.Snapshot, bool, error)
	Traverse(ctx context.Context, datasetID string, o lineage.TraverseOpts) (lineage.TraverseResult, error)
}

// TrustService is what the transport needs of trust.
type TrustService interface {
	AIReadiness(ctx context.Context, datasetID string) (trust.Readiness, error)
	Consumers(ctx context.Context, page vigia.Page) (vigia.List[trust.Consumer], error)
	DatasetConsumers(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[trust.Consumer], error)
	DatasetContext(ctx context.Context, datasetID string) (trust.Context, error)
	DatasetDetail(ctx context.Context, id string) (catalog.Dataset, error)
	Decide(ctx context.Context, datasetID, purpose string) (trust.Decision, error)
	DecideBatch(ctx context.Context, ids []string, purpose string) (trust.Batch, error)
	Find(ctx context.Context, f trust.FindFilter) (trust.FindResult, error)
	FindDatasetsWithTrust(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], map[string]trust.Score, error)
	RAGGate(ctx context.Context, in trust.GateInput) (trust.GateResult, error)
	RecordConsumption(ctx context.Context, in trust.ConsumptionInput) (trust.ConsumptionResult, error)
	TrustFacts(ctx context.Context, datasetID string) (trust.DatasetFacts, error)
	TrustScore(ctx context.Context, datasetID string) (trust.Score, error)
}

// ProductService is what the transport needs of data products.
type ProductService interface {
	SuggestDomains(ctx context.Context) (product.DomainSuggestions, error)
	AddConsumer(ctx context.Context, id string, in product.ConsumerInput) (product.DomainConsumer, error)
	CatalogMetadataQuality(ctx context.Context) (product.MetadataQuality, error)
	ConsumerPage(ctx context.Context, id string, page vigia.Page) (vigia.List[product.DomainConsumer], error)
	CreateDomain(ctx context.Context, in product.DomainInput) (product.Domain, error)
	DeleteConsumer(ctx context.Context, id, consumerID string) error
	Deprecate(ctx context.Context, id string) (product.Domain, error)
	DiffVersions(ctx context.Context, id, from, to string) (product.DiffResult, error)
	Domain(ctx context.Context, id string) (product.Domain, error)
	Domains(ctx context.Context, page vigia.Page) (vigia.List[product.Domain], error)
	EnableShare(ctx context.Context, id string) (product.ShareInfo, bool, error)
	MetadataQuality(ctx context.Context, id string) (product.MetadataQuality, error)
	PublicBadge(ctx context.Context, token string) ([]byte, error)
	PublicPage(ctx context.Context, token string) (product.PublicPage, error)
	PublicShare(ctx context.Context, id string) (product.ShareInfo, error)
	Publish(ctx context.Context, id string) (product.Domain, product.VersionRow, error)
	Readiness(ctx context.Context, id string) (product.Readiness, error)
	RevokeShare(ctx context.Context, id string) error
	RotateShare(ctx context.Context, id string) (product.ShareInfo, error)
	SLO(ctx context.Context, id string, month *string) (product.SLOReport, error)
	TrustFacts(ctx context.Context, id string) (product.DomainFacts, error)
	UpdateDomain(ctx context.Context, id string, patch product.DomainPatch) (product.Domain, error)
	Verdict(ctx context.Context, id string) (product.DomainVerdict, error)
	VersionPage(ctx context.Context, id string, page vigia.Page) (vigia.List[product.VersionRow], error)
}

// NotifyService is what the transport needs of notifications: channels, deliveries,
// mutes and the notification list.
type NotifyService interface {
	Channel(ctx context.Context, id string) (notify.Channel, error)
	CreateChannel(ctx context.Context, in notify.ChannelInput) (notify.Channel, string, error)
	CreateMute(ctx context.Context, in notify.MuteInput) (notify.Mute, error)
	DeleteChannel(ctx context.Context, id string) error
	DeleteMute(ctx context.Context, id string) error
	Deliveries(ctx context.Context, channelID string, page vigia.Page) (vigia.List[notify.Delivery], error)
	ListChannels(ctx context.Context, page vigia.Page) (vigia.List[notify.Channel], error)
	Mutes(ctx context.Context, page vigia.Page) (vigia.List[notify.Mute], error)
	Notifications(ctx context.Context, f notify.NotificationFilter) (vigia.List[notify.Notification], error)
	PreviewChannel(ctx context.Context, id string, days int) (notify.Preview, error)
	RotateSecret(ctx context.Context, id string) (string, error)
	TestChannel(ctx context.Context, id string) (notify.TestResult, error)
	UpdateChannel(ctx context.Context, id string, up notify.ChannelUpdate) (notify.Channel, error)
}

// OnCallService is what the transport needs of the on-call rota.
type OnCallService interface {
	DeleteOnCallRota(ctx context.Context) error
	OnCallRota(ctx context.Context) (oncall.Rota, error)
	SetOnCallRota(ctx context.Context, in oncall.RotaInput) (oncall.Rota, error)
}

// TicketService is what the transport needs of ticket integrations.
type TicketService interface {
	CreateIntegration(ctx context.Context, in ticket.IntegrationInput) (ticket.Integration, error)
	Integration(ctx context.Context, id string) (ticket.Integration, error)
	Integrations(ctx context.Context) ([]ticket.Integration, error)
	LinkTicket(ctx context.Context, in ticket.LinkInput) (ticket.Link, error)
	ReceiveTicketEvent(ctx context.Context, in ticket.InboundRequest) (string, error)
	SetCredentials(ctx context.Context, id string, in ticket.CredentialsInput) (ticket.Integration, error)
	Targets(ctx context.Context, id string) (ticket.Targets, error)
	UpdateSync(ctx context.Context, id string, in ticket.SyncInput) (ticket.Integration, error)
}

// IDEService is what the transport needs of the editor metadata.
type IDEService interface {
	Columns(ctx context.Context, datasetID string) ([]ide.Column, error)
	Resolve(ctx context.Context, name string, connection *string) (ide.Resolution, error)
}

// OrchestratorService is what the transport needs of orchestrator runs.
type OrchestratorService interface {
	PipelineHealth(ctx context.Context, datasetID string) (orchestrator.Health, error)
	RecordRun(ctx context.Context, in orchestrator.RunInput) (orchestrator.Run, bool, error)
	Runs(ctx context.Context, f orchestrator.RunFilter) (vigia.List[orchestrator.Run], error)
	RecordDBTModels(ctx context.Context, invocationID string, models []orchestrator.DBTModelRun) (int, error)
}

// ContractService is what the transport needs of data contracts.
type ContractService interface {
	Comment(ctx context.Context, datasetID, proposalID, body string) (contract.Comment, error)
	Contract(ctx context.Context, datasetID, source string) (contract.Document, error)
	DBT(ctx context.Context, datasetID, source string) ([]byte, error)
	Decide(ctx context.Context, datasetID, proposalID, action string, note *string) (contract.Proposal, error)
	Diff(ctx context.Context, datasetID string, from, to *string) (contract.DiffResult, error)
	DomainContract(ctx context.Context, domainID string) (contract.DomainContract, error)
	Proposal(ctx context.Context, datasetID, id string) (contract.Proposal, error)
	Proposals(ctx context.Context, datasetID string, f contract.ProposalFilter) (vigia.List[contract.Proposal], error)
	Propose(ctx context.Context, datasetID string, in contract.ProposalInput) (contract.Proposal, error)
	VersionByNumber(ctx context.Context, datasetID, number string) (contract.VersionRecord, error)
	Versions(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[contract.VersionRecord], error)
}

// BIService is what the transport needs of the BI refresh feed.
type BIService interface {
	RecordRefresh(ctx context.Context, in bi.RefreshInput) (bi.Refresh, bool, error)
	Refreshes(ctx context.Context, f bi.RefreshFilter) (vigia.List[bi.Refresh], error)
}

// KnowledgeService is what the transport needs of knowledge entries.
type KnowledgeService interface {
	Create(ctx context.Context, in knowledge.EntryInput) (knowledge.Entry, error)
	Get(ctx context.Context, id string) (knowledge.Entry, error)
	Search(ctx context.Context, q knowledge.Query) (vigia.List[knowledge.Entry], error)
	Update(ctx context.Context, id string, in knowledge.EntryPatch) (knowledge.Entry, error)
}

// SensitivityService is what the transport needs of column sensitivity.
type SensitivityService interface {
	Dataset(ctx context.Context, datasetID string) (sensitivity.Report, error)
	Set(ctx context.Context, datasetID, column, level string) (sensitivity.Report, error)
}

// ReadmeService is what the transport needs of dataset READMEs.
type ReadmeService interface {
	Edit(ctx context.Context, datasetID, md string) (readme.Readme, error)
	Get(ctx context.Context, datasetID string) (readme.Readme, error)
	Markdown(ctx context.Context, datasetID string) (string, error)
	Publish(ctx context.Context, datasetID string) (readme.Readme, error)
}
