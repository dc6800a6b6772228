// Package app wires Vigia's services and transports over one database. cmd/vigia
// uses it to serve and run workers, and the end-to-end tests use it to run the real
// handler stack.
package app

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/blackout"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/compliance"
	"github.com/vigia-data/vigia/confcode"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/dashboard"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/datapolicy"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/duplicates"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/graph"
	"github.com/vigia-data/vigia/graph/explorer"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/ide"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/jobs"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/labelquality"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/lineage/neo4jgraph"
	"github.com/vigia-data/vigia/lineage/pggraph"
	"github.com/vigia-data/vigia/modeling"
	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/readme"
	"github.com/vigia-data/vigia/report"
	"github.com/vigia-data/vigia/rest"
	"github.com/vigia-data/vigia/routine"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/secret"
	"github.com/vigia-data/vigia/sensitivity"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/synthetic"
	"github.com/vigia-data/vigia/synthetic/sqlitepack"
	"github.com/vigia-data/vigia/team"
	"github.com/vigia-data/vigia/ticket"
	"github.com/vigia-data/vigia/ticket/generic"
	"github.com/vigia-data/vigia/ticket/jira"
	"github.com/vigia-data/vigia/ticket/linear"
	"github.com/vigia-data/vigia/trust"
	"github.com/vigia-data/vigia/ui"
	"github.com/vigia-data/vigia/validate"
)

// Config holds what the wiring needs beyond the database.
type Config struct {
	Version        string
	BuildSHA       string
	RateLimitToken int
	RateLimitIP    int
	RateWindow     time.Duration
	NATSURL        string
	// SecretKey encrypts stored credentials (VIGIA_SECRET_KEY); empty uses a
	// development key file (see secret.LoadKey).
	SecretKey string
	// DevelopmentKeyNotice, when set, is called instead of logging the warning that the
	// development key is in use: the command line says it once, in words, on stderr.
	DevelopmentKeyNotice func()
	// SourcesDenyPrivate refuses private and loopback addresses for sources (they are
	// allowed by default: Vigia is self-hosted next to its users' databases).
	SourcesDenyPrivate bool
	// SQLiteRoot is the directory SQLite sources must live in.
	SQLiteRoot string
	// FilesRoot is the directory duckdb sources (DuckDB database files, directories of
	// Parquet, CSV and JSON files) must live in; FilesLimits bound their DuckDB sessions.
	FilesRoot   string
	FilesLimits source.FilesLimits
	// StatementTimeout bounds every statement sent to a source.
	StatementTimeout time.Duration
	// MaxActiveScans bounds a workspace's queued and running scans.
	MaxActiveScans int
	// Workers is how many scans run at once in this process.
	Workers int
	// JobHeartbeat and JobStaleAfter tune crash recovery of jobs.
	JobHeartbeat  time.Duration
	JobStaleAfter time.Duration
	// Neo4j chooses the neo4jgraph lineage backend when Neo4j.URI is set; else pggraph.
	Neo4j neo4jgraph.Config
	// RateLimitPublic is the per-IP limit of the public data-product page and badge.
	RateLimitPublic int
	// RateLimitProbe is the per-IP limit of liveness, readiness and version (exempt
	// from RateLimitIP).
	RateLimitProbe int
	// RateLimitValidate is each credential's record validations per window (30 by default).
	RateLimitValidate int
	// TrustedProxies and ForwardedHeader: see rest.Config (VIGIA_TRUSTED_PROXIES,
	// VIGIA_FORWARDED_HEADER).
	TrustedProxies  []netip.Prefix
	ForwardedHeader string
	// ConsumptionsPerMinute is a workspace's limit of recorded reads per minute.
	ConsumptionsPerMinute int

	// Webhooks: see notify.Config. WebhookAllowHosts (VIGIA_WEBHOOK_ALLOW_HOSTS) admits
	// named loopback or private receivers for development and tests only; WebhookResolver
	// and WebhookRootCAs are injected by tests (nil: the system's, SSL_CERT_FILE honoured).
	WebhookAllowHosts    []string
	WebhookResolver      netguard.Resolver
	WebhookRootCAs       *x509.CertPool
	WebhookLegacyPrefix  string
	WebhookWorkers       int
	WebhookPerWorkspace  int
	WebhookPerChannel    int
	WebhookDispatchEvery time.Duration
	// TicketPollBatch bounds the tickets a ticket integration's poll reads per run
	// (default 50).
	TicketPollBatch int
	// PublicURL is the service's address in links sent out (trust_url).
	PublicURL string
	// EgressIPs are the addresses outbound connections come from (VIGIA_EGRESS_IPS),
	// published by GET /public/egress-ips.
	EgressIPs []netip.Prefix
	// Clock is the services' clock (default the system clock); tests inject one.
	Clock vigia.Clock
	// Synthetic tunes synthetic data: its budget (30 s by default) and, in tests only,
	// values the generator is forced to reuse. RateLimitSynthetic and SyntheticWindow are
	// each workspace's packs per window (20 per 10 minutes by default).
	Synthetic          synthetic.Options
	RateLimitSynthetic int
	SyntheticWindow    time.Duration
}

// App is the wired service graph.
type App struct {
	Config   Config
	Log      *slog.Logger
	DB       *store.DB
	Messages *i18n.Catalog
	Identity *identity.Service
	// Plans answers what the workspace's plan includes (402).
	Plans *plan.Service
	// Compliance builds the compliance dossiers (business plan).
	Compliance *compliance.Service
	// Finops computes chargeback and converts money to the workspace currency.
	Finops *finops.Service
	// Dashboards answers the dashboards and governance metrics.
	Dashboards *dashboard.Service
	// DataPolicies keeps and evaluates data policies (the after-scan consumer "policies").
	DataPolicies *datapolicy.Service
	Catalog      *catalog.Service
	Connections  *connection.Service
	Scans        *scan.Service
	ScanReads    *scan.ReadService
	Trust        *trust.Service
	Products     *product.Service
	Jobs         *jobs.Queue
	Rules        *rule.Service
	Validation   *validate.Service
	Diff         *datadiff.Service
	Issues       *issue.Service
	Teams        *team.Service
	Lineage      *lineage.Service
	Incidents    *incident.Service
	Contracts    *contract.Service
	// closeGraph closes the Neo4j driver when that backend is used.
	closeGraph func(ctx context.Context) error
	Notify     *notify.Service
	OnCall     *oncall.Service
	Tickets    *ticket.Service
	// Orchestrators records pipeline runs (datasets matched through lineage).
	Orchestrators *orchestrator.Service
	// Knowledge keeps knowledge entries and their PII gate.
	Knowledge *knowledge.Service
	// Sensitivity classifies columns.
	Sensitivity *sensitivity.Service
	// Readmes keeps dataset READMEs.
	Readmes *readme.Service
	// IDE answers editor extensions.
	IDE         *ide.Service
	WebhookJobs *jobs.Queue
	// ConfigAsCode applies and exports configuration files (vigia apply, export-config).
	ConfigAsCode *confcode.Service
	// Modeling raises modeling and slo_breach issues after each scan.
	Modeling *modeling.Service
	// Synthetic generates synthetic data from profiles.
	Synthetic *synthetic.Service
	// BI records BI tools' refreshes (datasets matched and dashboards kept by lineage).
	BI *bi.Service
	// Suggestions proposes rules and standardizations after each scan, and rehearses them.
	Suggestions *suggest.Service
	// Duplicates clusters duplicate records of the connection's tables after each scan.
	Duplicates *duplicates.Service
	// Blackouts keeps the connections' blackout windows (no rehearsal runs in one).
	Blackouts *blackout.Service
	// LabelQuality checks the labels of training datasets (a Business-plan extra).
	LabelQuality *labelquality.Service
	// Reports writes reports from the store's facts.
	Reports *report.Service
	// Routines runs the scheduled routines on the job queue.
	Routines *routine.Service
}

// New wires the services over db (already migrated).
func New(cfg Config, db *store.DB, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.Default()
	}
	msgs, err := i18n.New()
	if err != nil {
		return nil, err
	}
	key, generated, err := secret.LoadKey(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	if generated && cfg.DevelopmentKeyNotice != nil {
		cfg.DevelopmentKeyNotice()
	} else if generated {
		log.Warn("VIGIA_SECRET_KEY is not set: using a development key file; set it in production")
	}
	box, err := secret.New(key)
	if err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	var clock vigia.Clock = vigia.SystemClock{}
	if cfg.Clock != nil {
		clock = cfg.Clock
	}
	queue := jobs.New(db.Pool(), jobs.Options{Logger: log, Concurrency: map[string]int{jobs.DefaultQueue: cfg.Workers},
		PerWorkspace: cfg.Workers, Heartbeat: cfg.JobHeartbeat, StaleAfter: cfg.JobStaleAfter})
	graph, closeGraph, err := lineageGraph(context.Background(), cfg, db)
	if err != nil {
		return nil, err
	}
	// Every service in one pass, in dependency order: each gets the others it calls as
	// constructor parameters.
	a := &App{Config: cfg, Log: log, DB: db, Messages: msgs, Jobs: queue, closeGraph: closeGraph}
	a.Identity = identity.NewService(db.Identity(), db.Settings(), db, clock)
	a.Plans = plan.NewService(db.Settings(), clock)
	a.Compliance = compliance.NewService(db.Compliance(), db.Compliance(), a.Plans, clock)
	a.Finops = finops.NewService(db.Finops(), clock)
	a.Dashboards = dashboard.NewService(db.Dashboard(), a.Finops, clock)
	a.Catalog = catalog.NewService(db.Catalog(), a.Messages)
	a.Connections = connection.NewService(db.Connections(), box, newSources(cfg), clock, demoPacks())
	if cfg.FilesRoot != "" {
		a.Connections.OfferParquetDemos(ParquetDemoDir(cfg.FilesRoot))
	}
	scanCfg := scan.Config{MaxActivePerWorkspace: cfg.MaxActiveScans, Quota: a.Plans.AllowScan}
	a.Rules = rule.NewService(db.Rules(), a.Catalog, a.Connections, msgs, clock)
	a.Validation = validate.NewService(a.Catalog, db.Rules(), a.Connections, clock)
	a.Issues = issue.NewService(db.Issues(), db, a.Messages, clock)
	a.Teams = team.NewService(db.Teams(), clock)
	a.Trust = trust.NewService(db.Trust(), db, a.Catalog, msgs, clock, trust.ServiceConfig{ConsumptionsPerMinute: cfg.ConsumptionsPerMinute,
		Pipelines: orchestrator.TrustPipelines{Store: db.Orchestrators()}})
	// Incidents list the consumers that read a dataset recently.
	a.Lineage = lineage.NewService(lineage.Deps{Store: db.Lineage(), Graph: graph, Views: sqlParsers{}, Tx: db,
		Jobs: lineageJobs{queue}, Consumers: recentConsumers{a.Trust}, Providers: db.KnowledgeProviders(a.Messages), Clock: clock, Log: log})
	// Incidents group issues through lineage's impact API.
	a.Incidents = incident.NewService(db.Incidents(), a.Lineage, clock).WithChanges(db.Orchestrators())
	// Products order by lineage reach.
	a.Products = product.NewService(db.Products(), db, a.Trust, a.Lineage, box, clock, product.Config{})
	a.DataPolicies = datapolicy.NewService(db.DataPolicies(), domainNames{a.Products}, clock)
	// Contracts render rules and domains; trust and domain versions read their state from the store.
	a.Contracts = contract.NewService(db.Contracts(), db, a.Catalog, a.Rules, a.Products, clock)
	// Modeling's fixes are checked by the dialects' parsers.
	a.Modeling = modeling.NewService(db.Modeling(), sqlParsers{}, clock, log)
	// Blackout windows defer scheduled scans and refuse or skip what else reads the
	// sources: manual scans, diffs and reconciliations, duplicate clustering, label
	// quality, rehearsals.
	a.Blackouts = blackout.NewService(db.Blackouts(), a.Connections, clock)
	a.Diff = datadiff.NewService(a.Catalog, a.Connections, db.Rules(), clock).WithChecks(db.Reconciles()).WithBlackouts(a.Blackouts)
	a.Sensitivity = sensitivity.NewService(db.Sensitivity(), a.Catalog, clock)
	a.LabelQuality = labelquality.NewService(db.LabelQuality(), a.Catalog, a.Sensitivity, a.Plans, a.Connections, clock).
		WithBlackouts(a.Blackouts, log)
	// Tuning suggestions are applied through the issues' anomaly tuning and the rules' update.
	a.Suggestions = suggest.NewService(db.Suggestions(), a.Catalog, a.Connections, a.Rules, sqlParsers{}, a.Products, a.Blackouts, clock, 0).
		WithTuning(db.Suggestions(), a.Issues, a.Rules)
	a.Duplicates = duplicates.NewService(db.Duplicates(), a.Catalog, a.Connections, clock, log).WithBlackouts(a.Blackouts)
	a.ScanReads = scan.NewReadService(db.Scans(), a.Catalog, a.Connections, contractEffects{a.Contracts}, scanCfg)
	// A succeeded scan's event is consumed by lineage, then the active contracts' checks
	// (a violation opens an issue), then the declared reconciliation checks touching the
	// connection (a failing one opens an issue), then incidents, then the domains' verdicts (one event
	// per domain whose aggregated verdict the scan's verdicts changed), then modeling (schema
	// design checks and domain SLO targets), then suggestions, then duplicate clusters,
	// then label quality: scan.Service.AfterScan, the job of scan.AfterJobKind.
	a.Scans = scan.NewService(db.Scans(), db, scanJobs{queue}, a.Connections, scan.Ports{Rules: rule.NewEvaluator(db.Rules()),
		Weights: db.Products(), Consumers: []scan.NamedConsumer{{Name: "lineage", Consumer: a.Lineage},
			{Name: "contracts", Consumer: a.Contracts}, {Name: "reconcile", Consumer: a.Diff}, {Name: "incidents", Consumer: a.Incidents}, {Name: "products", Consumer: a.Products},
			{Name: "modeling", Consumer: a.Modeling}, {Name: "policies", Consumer: a.DataPolicies},
			{Name: "suggestions", Consumer: a.Suggestions}, {Name: "duplicates", Consumer: a.Duplicates},
			{Name: "labels", Consumer: a.LabelQuality}}, Blackouts: a.Blackouts},
		clock, log, scanCfg)
	// Notifications, then on-call (which sends through them) and ticket integrations
	// (which resolve issues through the issue workflow); deliveries and ticket syncs run
	// on the webhook queue.
	a.WebhookJobs = newWebhookQueue(cfg, db, log)
	a.Notify = notify.NewService(db.Webhooks(), db, deliveryJobs{a.WebhookJobs}, box, msgs, clock, log,
		db.WebhookIncidents(), notify.Config{AllowHosts: cfg.WebhookAllowHosts, Resolver: cfg.WebhookResolver,
			RootCAs: cfg.WebhookRootCAs, LegacyPrefix: cfg.WebhookLegacyPrefix, PublicURL: cfg.PublicURL,
			PerWorkspace: cfg.WebhookPerWorkspace, PerChannel: cfg.WebhookPerChannel, Workers: cfg.WebhookWorkers})
	a.OnCall = oncall.NewService(db.Webhooks(), db, a.Notify, clock, log)
	a.Tickets = ticket.NewService(db.Webhooks(), db, ticketJobs{a.WebhookJobs}, box, msgs, clock, log,
		ticketTransitions{a.Issues}, []ticket.Provider{jira.Provider(), linear.Provider(), generic.Provider()}, ticket.Config{AllowHosts: cfg.WebhookAllowHosts, Resolver: cfg.WebhookResolver,
			RootCAs: cfg.WebhookRootCAs, PollBatch: cfg.TicketPollBatch})
	a.Orchestrators = orchestrator.NewService(db.Orchestrators(), a.Lineage, a.Catalog, clock).WithIssues(db.Orchestrators())
	a.IDE = ide.NewService(db.IDE(), a.Trust, a.Catalog)
	a.ConfigAsCode = confcode.NewService(confcode.Deps{Connections: a.Connections, Teams: a.Teams, Domains: a.Products,
		Channels: a.Notify, Rules: a.Rules, Datasets: a.Catalog, Store: db.Config(), Tx: db, Clock: clock})

	a.BI = bi.NewService(db.BI(), a.Lineage, a.Lineage, clock)
	a.Knowledge = knowledge.NewService(db.Knowledge(), a.Lineage, clock)
	a.Synthetic = synthetic.NewService(a.Catalog, a.Products, a.Connections, a.SyntheticKnowledge(), sqlitepack.Writer{}, cfg.Synthetic)
	a.Readmes = readme.NewService(db.Readmes(), readmeFacts{a.Catalog, a.Lineage, a.Sensitivity}, clock)
	a.Reports = report.NewService(db.Reports(), clock)
	a.Routines = routine.NewService(db.Routines(), routineJobs{queue}, a.Reports, a.Finops, db, clock)
	a.handleJobs()
	a.handleFeedJobs()
	return a, nil
}

// handleJobs registers the job handlers of the scan queue and the webhook queue.
func (a *App) handleJobs() {
	a.Jobs.Handle(scan.JobKind, func(ctx context.Context, j jobs.Job) error {
		var args scanJobArgs
		if err := json.Unmarshal(j.Args, &args); err != nil {
			return jobs.Permanent(err)
		}
		return a.Scans.Run(ctx, args.ScanID)
	})
	a.Jobs.Handle(scan.AfterJobKind, func(ctx context.Context, j jobs.Job) error {
		var args scanJobArgs
		if err := json.Unmarshal(j.Args, &args); err != nil {
			return jobs.Permanent(err)
		}
		return a.Scans.AfterScan(ctx, args.ScanID, j.Attempt >= j.MaxAttempts)
	})
	a.Jobs.Handle(lineage.ProjectionJobKind, func(ctx context.Context, j jobs.Job) error {
		var args projectionArgs
		if err := json.Unmarshal(j.Args, &args); err != nil {
			return jobs.Permanent(err)
		}
		return a.Lineage.Project(ctx, args.WorkspaceID)
	})
	a.Jobs.Handle(issue.SLAJobKind, func(ctx context.Context, _ jobs.Job) error {
		n, err := a.Issues.MarkSLABreaches(ctx)
		if n > 0 {
			a.Log.Info("issues past their resolution target", "count", n)
		}
		return err
	})
	a.Jobs.Handle(routine.JobKind, func(ctx context.Context, j jobs.Job) error {
		var args routineArgs
		if err := json.Unmarshal(j.Args, &args); err != nil {
			return jobs.Permanent(err)
		}
		return a.Routines.Run(ctx, args.WorkspaceID, args.Key)
	})
	a.WebhookJobs.Handle(notify.JobKind, a.runDelivery)
	a.WebhookJobs.Handle(ticket.JobKind, a.runTicketSync)
}

// contractEffects gives scan reads the contract feature's effect of schema changes.
type contractEffects struct{ c *contract.Service }

func (e contractEffects) ContractEffects(ctx context.Context, datasetID string, sets []scan.SchemaChangeSet) ([]*string, error) {
	in := make([][]contract.ColumnChange, len(sets))
	for i, st := range sets {
		for _, c := range st.Added {
			in[i] = append(in[i], contract.ColumnChange{Change: "add", Column: c.Column, ToType: c.ToType})
		}
		for _, c := range st.Dropped {
			in[i] = append(in[i], contract.ColumnChange{Change: "drop", Column: c.Column})
		}
		for _, c := range st.TypeChanged {
			in[i] = append(in[i], contract.ColumnChange{Change: "type_change", Column: c.Column, ToType: c.ToType})
		}
	}
	return e.c.SchemaChangeEffects(ctx, datasetID, in)
}

// recentConsumers gives lineage the trust feature's recent consumers of datasets.
type recentConsumers struct{ trust *trust.Service }

func (r recentConsumers) RecentConsumers(ctx context.Context, datasetIDs []string, since time.Time) (map[string][]lineage.RecentConsumer, error) {
	byDataset, err := r.trust.RecentConsumers(ctx, datasetIDs, since)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]lineage.RecentConsumer, len(byDataset))
	for id, exps := range byDataset {
		for _, e := range exps {
			out[id] = append(out[id], lineage.RecentConsumer{ConsumerID: e.ConsumerID, Name: e.Name, Kind: e.Kind,
				Framework: e.Framework, Consumptions7d: e.Consumptions7d, LastDecision: e.LastDecision, LastConsumedAt: e.LastConsumedAt})
		}
	}
	return out, nil
}

// lineageGraph opens the chosen graph backend: Neo4j (one driver per process, closed
// by the returned func) when NEO4J_URI is set, else the Postgres tables.
func lineageGraph(ctx context.Context, cfg Config, db *store.DB) (lineage.Graph, func(context.Context) error, error) {
	if cfg.Neo4j.URI == "" {
		return pggraph.New(db.Pool()), nil, nil
	}
	ng, err := neo4jgraph.New(ctx, cfg.Neo4j)
	if err != nil {
		return nil, nil, err
	}
	return ng, ng.Close, nil
}

// RunTokenCache caches authenticated API tokens in this process while it listens to the
// database's announcements of revocations (LISTEN/NOTIFY), until ctx ends: a token's
// lookup is then skipped for up to identity.TokenCacheTTL, and revocation stays
// immediate in every process.
func (a *App) RunTokenCache(ctx context.Context) { a.Identity.RunTokenCache(ctx, a.DB.Identity()) }

// Close releases what the app holds besides the database (the Neo4j driver).
func (a *App) Close(ctx context.Context) error {
	if a.closeGraph != nil {
		return a.closeGraph(ctx)
	}
	return nil
}

// projectionArgs is the payload of a projector job.
type projectionArgs struct {
	WorkspaceID string `json:"workspace_id"`
}

// lineageJobs queues the projector, one pending job per workspace.
type lineageJobs struct{ q *jobs.Queue }

func (l lineageJobs) EnqueueProjection(ctx context.Context, workspaceID string) error {
	_, err := l.q.Enqueue(ctx, lineage.ProjectionJobKind, projectionArgs{WorkspaceID: workspaceID}, jobs.EnqueueOpts{
		WorkspaceID: workspaceID, UniqueKey: "lineage.project:" + workspaceID, MaxAttempts: 5})
	if errors.Is(err, jobs.ErrDuplicate) {
		return nil
	}
	return err
}

// Server builds the HTTP transport: /api/v1, /graphql and its explorer, /metrics.
func (a *App) Server() *rest.Server {
	gql := graph.NewHandler(&graph.Resolver{ConnectionReads: a.Connections, TrustReads: a.Trust, ProductReads: a.Products,
		LineageReads: a.Lineage, ContractReads: a.Contracts, Dashboards: a.Dashboards, Finops: a.Finops,
		Readmes: a.Readmes, SensitivityReads: a.Sensitivity, RuleExports: a.Rules,
		PipelineReads: a.Orchestrators, SyntheticGen: a.Synthetic, Catalog: a.Catalog, ScanService: a.Scans, ScanReads: a.ScanReads,
		RuleService: a.Rules, IssueService: a.Issues, LineageService: a.Lineage, IncidentService: a.Incidents, Trust: a.Trust, Products: a.Products, Contracts: a.Contracts,
		Synthetic: a.Synthetic, Duplicates: a.Duplicates, LabelQuality: a.LabelQuality, Messages: a.Messages, Ops: a.graphOps(), BI: a.BI}, a.Messages, a.Log)
	return rest.New(rest.Config{Version: a.Config.Version, BuildSHA: a.Config.BuildSHA,
		RateLimitToken: a.Config.RateLimitToken, RateLimitIP: a.Config.RateLimitIP, RateWindow: a.Config.RateWindow,
		RateLimitPublic: a.Config.RateLimitPublic, RateLimitProbe: a.Config.RateLimitProbe,
		RateLimitValidate:  a.Config.RateLimitValidate,
		RateLimitSynthetic: a.Config.RateLimitSynthetic, SyntheticWindow: a.Config.SyntheticWindow,
		TrustedProxies: a.Config.TrustedProxies, ForwardedHeader: a.Config.ForwardedHeader, EgressIPs: a.Config.EgressIPs},
		rest.Deps{Identity: a.Identity, Catalog: a.Catalog, Connections: a.Connections, Scans: a.Scans, ScanReads: a.ScanReads,
			Workflow: rest.WorkflowDeps{Rules: a.Rules, Issues: a.Issues, Teams: a.Teams}, Lineage: a.Lineage, Incidents: a.Incidents,
			Trust: a.Trust, DatasetDetail: a,
			Products: a.Products, Notify: a.Notify, OnCall: a.OnCall, Tickets: a.Tickets, Contracts: a.Contracts,
			Orchestrators: a.Orchestrators, IDE: a.IDE, Validation: a.Validation, Diff: a.Diff, Reconcile: a.Diff, ReconcileChecks: a.Diff,
			Synthetic: a.Synthetic, Suggestions: a.Suggestions, Duplicates: a.Duplicates, Blackouts: a.Blackouts, Reports: a.Reports, Routines: a.Routines,
			Messages: a.Messages, Database: a.DB.Ping, Broker: BrokerCheck(a.Config.NATSURL), GraphQL: gql,
			Explorer: explorer.Handler("/graphql"), WebApp: ui.Handler(a.Messages), Account: a.Identity, BI: a.BI,
			DataPolicies: a.DataPolicies, Compliance: a.Compliance, Finops: a.Finops, Dashboards: a.Dashboards, Knowledge: a.Knowledge, Sensitivity: a.Sensitivity, LabelQuality: a.LabelQuality, Readmes: a.Readmes}, a.Log)
}

// RunWorkers works jobs (scans, webhook deliveries) and fires due schedules until ctx ends.
func (a *App) RunWorkers(ctx context.Context) error {
	go a.scheduleLoop(ctx)
	go a.slaLoop(ctx)
	go a.feedLoop(ctx)
	webhooks := make(chan error, 1)
	go func() { webhooks <- a.RunWebhookWorkers(ctx) }()
	err := a.Jobs.Run(ctx)
	if werr := <-webhooks; err == nil {
		err = werr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (a *App) scheduleLoop(ctx context.Context) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		if n, err := a.Scans.EnqueueDue(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("scheduled scans failed", "cause", err.Error())
		} else if n > 0 {
			a.Log.Info("scheduled scans queued", "count", n)
		}
		if n, err := a.Routines.EnqueueDue(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("scheduled routines failed", "cause", err.Error())
		} else if n > 0 {
			a.Log.Info("scheduled routines queued", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scanJobArgs is the payload of a scan job.
type scanJobArgs struct {
	ScanID string `json:"scan_id"`
}

// scanJobs puts scan jobs on the queue; a scan must survive a dead worker, so it gets
// several attempts.
type scanJobs struct{ q *jobs.Queue }

func (s scanJobs) EnqueueScan(ctx context.Context, scanID, workspaceID, _ string) (string, error) {
	return s.q.Enqueue(ctx, scan.JobKind, scanJobArgs{ScanID: scanID}, jobs.EnqueueOpts{
		WorkspaceID: workspaceID, UniqueKey: "scan:" + scanID, MaxAttempts: 5})
}

func (s scanJobs) EnqueueAfterScan(ctx context.Context, scanID, workspaceID string) error {
	_, err := s.q.Enqueue(ctx, scan.AfterJobKind, scanJobArgs{ScanID: scanID}, jobs.EnqueueOpts{
		WorkspaceID: workspaceID, UniqueKey: "scan.after:" + scanID, MaxAttempts: 5})
	if errors.Is(err, jobs.ErrDuplicate) {
		return nil
	}
	return err
}

// sources opens customers' databases through the guarded dialer.
type sources struct {
	dialer *netguard.Dialer
	opts   source.Options
}

func newSources(cfg Config) sources {
	policy := netguard.Policy{AllowPrivate: !cfg.SourcesDenyPrivate}
	if !cfg.SourcesDenyPrivate {
		// Self-hosted: a database on this very host is a normal source.
		policy.AllowHosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	return sources{dialer: netguard.NewDialer(policy, nil),
		opts: source.Options{StatementTimeout: cfg.StatementTimeout, SQLiteRoot: cfg.SQLiteRoot, FilesRoot: cfg.FilesRoot, Files: cfg.FilesLimits}}
}

func (s sources) Open(ctx context.Context, kind source.Kind, dsn string, o source.Options) (source.Source, error) {
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = s.opts.StatementTimeout
	}
	o.Dial, o.SQLiteRoot, o.FilesRoot, o.Files = s.dialer.DialContext, s.opts.SQLiteRoot, s.opts.FilesRoot, s.opts.Files
	return connect.Open(ctx, kind, dsn, o)
}

func (s sources) ValidateDSN(kind source.Kind, dsn string) error {
	return connect.ValidateDSN(kind, dsn)
}

// Drivers are the optional connectors linked into this binary (app/duckdb.go, built with
// the duckdb tag, links source/connect/duckdb).
func (s sources) Drivers() map[source.Kind]string { return connect.Registered() }

func (s sources) ServerIdentity(kind source.Kind, dsn string) (string, string, bool) {
	return connect.ServerIdentity(kind, dsn)
}

func demoPacks() []connection.DemoPack {
	var out []connection.DemoPack
	for _, p := range demo.Packs() {
		dp := connection.DemoPack{Key: p.Key, Name: p.Name, Description: p.Description, Industry: p.Industry, Tables: p.Tables}
		for _, d := range p.Defects {
			dp.Defects = append(dp.Defects, d.Kind+": "+d.Table+"."+d.Column)
		}
		out = append(out, dp)
	}
	return out
}

// BrokerCheck reports the message broker's reachability; readiness only reports it.
func BrokerCheck(natsURL string) func(ctx context.Context) string {
	if natsURL == "" {
		return func(context.Context) string { return "not_configured" }
	}
	return func(ctx context.Context) string {
		u, err := url.Parse(natsURL)
		if err != nil || u.Host == "" {
			return "unavailable"
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return "unavailable"
		}
		_ = c.Close()
		return "ok"
	}
}

// domainNames checks a domain against the caller's visibility for data policies.
type domainNames struct{ p *product.Service }

func (d domainNames) DomainName(ctx context.Context, id string) (string, error) {
	dom, err := d.p.Domain(ctx, id)
	return dom.Name, err
}

// SyntheticKnowledge is what synthetic data reads beside the catalog: the foreign keys
// of referential rules and the columns' sensitivity, each as the caller sees them.
func (a *App) SyntheticKnowledge() synthetic.Knowledge {
	return syntheticKnowledge{rules: a.Rules, sensitivity: a.Sensitivity}
}

type syntheticKnowledge struct {
	rules       *rule.Service
	sensitivity *sensitivity.Service
}

// References lists the dataset's active referential rules whose reference dataset the
// caller can see.
func (k syntheticKnowledge) References(ctx context.Context, datasetID string) ([]synthetic.Reference, error) {
	typ := rule.TypeReferential
	var out []synthetic.Reference
	for offset := 0; ; offset += vigia.MaxLimit {
		list, err := k.rules.Rules(ctx, rule.Filter{DatasetID: &datasetID, RuleType: &typ, Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
		if err != nil {
			return nil, err
		}
		for _, r := range list.Items {
			if r.Active && !r.RefRestricted && r.Params.RefDatasetID != "" && r.Params.Column != "" && r.Params.RefColumn != "" {
				out = append(out, synthetic.Reference{Column: r.Params.Column, RefDatasetID: r.Params.RefDatasetID, RefColumn: r.Params.RefColumn})
			}
		}
		if len(list.Items) < vigia.MaxLimit {
			return out, nil
		}
	}
}

// Sensitivity is each column's level, and whether a person set it.
func (k syntheticKnowledge) Sensitivity(ctx context.Context, datasetID string) (map[string]synthetic.Sensitivity, error) {
	rep, err := k.sensitivity.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]synthetic.Sensitivity, len(rep.Columns))
	for _, c := range rep.Columns {
		out[c.Name] = synthetic.Sensitivity{Level: c.Level, Manual: c.Origin == sensitivity.OriginManual}
	}
	return out, nil
}

// readmeFacts gives README drafts their facts: the dataset, its lineage and its column
// sensitivity, each as the caller sees it.
type readmeFacts struct {
	catalog     *catalog.Service
	lineage     *lineage.Service
	sensitivity *sensitivity.Service
}

func (f readmeFacts) Dataset(ctx context.Context, id string) (catalog.Dataset, error) {
	return f.catalog.Dataset(ctx, id)
}
func (f readmeFacts) Lineage(ctx context.Context, id string) (lineage.LineageResult, error) {
	return f.lineage.Lineage(ctx, id)
}
func (f readmeFacts) Sensitivity(ctx context.Context, id string) (sensitivity.Report, error) {
	return f.sensitivity.Dataset(ctx, id)
}

// routineArgs is the payload of a routine run.
type routineArgs struct {
	WorkspaceID string `json:"workspace_id"`
	Key         string `json:"key"`
}

// routineJobs queues routine runs, one pending run per workspace and routine.
type routineJobs struct{ q *jobs.Queue }

func (r routineJobs) EnqueueRoutine(ctx context.Context, workspaceID, key string) error {
	_, err := r.q.Enqueue(ctx, routine.JobKind, routineArgs{WorkspaceID: workspaceID, Key: key}, jobs.EnqueueOpts{
		WorkspaceID: workspaceID, UniqueKey: "routine:" + workspaceID + ":" + key, MaxAttempts: 3})
	if errors.Is(err, jobs.ErrDuplicate) {
		return nil
	}
	return err
}
