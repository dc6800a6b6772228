// Package rest serves the versioned REST API /api/v1 and mounts GraphQL behind the
// same middleware. Handlers are thin: parse, one service call, convert.
package rest

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
)

// APIVersion is the contract version this server implements.
const APIVersion = "1.88.0"

// Config holds the transport settings.
type Config struct {
	Version  string // release version
	BuildSHA string // 7 hex characters
	// RateLimitToken and RateLimitIP are requests per RateWindow.
	RateLimitToken int
	RateLimitIP    int
	RateWindow     time.Duration
	// RateLimitPublic is the public data-product page and badge's own per-IP limit, per
	// RateWindow (60 by default).
	RateLimitPublic int
	// RateLimitProbe is liveness, readiness and version's own per-IP limit, per
	// RateWindow (6000 by default): they stay reachable for orchestrators once a client
	// address has spent RateLimitIP.
	RateLimitProbe int
	// RateLimitValidate is each credential's record validations per RateWindow (30 by
	// default), on top of RateLimitToken.
	RateLimitValidate int
	// RateLimitSynthetic is each workspace's synthetic packs per SyntheticWindow (20 per
	// 10 minutes by default).
	RateLimitSynthetic int
	SyntheticWindow    time.Duration
	// TrustedProxies are the addresses (CIDRs) of the load balancers in front of the
	// service. Only a request whose connection comes from one of them has its client
	// address read from ForwardedHeader; none by default.
	TrustedProxies []netip.Prefix
	// ForwardedHeader is the header trusted proxies set: X-Forwarded-For (default) or
	// Forwarded (RFC 7239).
	ForwardedHeader string
	// RequestTimeout bounds each request's work.
	RequestTimeout time.Duration
	// EgressIPs are the addresses Vigia's outbound connections come from
	// (VIGIA_EGRESS_IPS), answered by GET /public/egress-ips.
	EgressIPs []netip.Prefix
}

// Deps are the services the transport calls.
type Deps struct {
	Identity    IdentityService
	Catalog     CatalogService
	Connections ConnectionService
	Scans       ScanService
	ScanReads   ScanReadService
	Workflow    WorkflowDeps
	Lineage     LineageService
	Incidents   IncidentService
	Trust       TrustService
	// DatasetDetail, when set, reads GET /datasets/{id} (the dataset, its trust brief and
	// open suggestions) at once; otherwise Trust.DatasetDetail and Suggestions.Open do.
	DatasetDetail DatasetDetailService
	Products      ProductService
	Notify        NotifyService
	OnCall        OnCallService
	Tickets       TicketService
	// Orchestrators records pipeline runs and judges pipeline health.
	Orchestrators OrchestratorService
	// IDE answers editor extensions (metadata only).
	IDE        IDEService
	Validation ValidationService
	Diff       DiffService
	Reconcile  ReconcileService
	// ReconcileChecks keeps declared reconciliation checks.
	ReconcileChecks ReconcileChecksService
	Contracts       ContractService
	// Synthetic generates and evaluates synthetic data.
	Synthetic SyntheticService
	// Suggestions lists, decides and rehearses suggestions.
	Suggestions SuggestionService
	// Duplicates lists the clusters of duplicate records.
	Duplicates DuplicateService
	// Blackouts keeps the connections' blackout windows.
	Blackouts BlackoutService
	// Reports writes and exports reports.
	Reports ReportService
	// Routines keeps the scheduled routines.
	Routines RoutineService
	Messages *i18n.Catalog
	// Database reports whether the system of record answers (required for readiness).
	Database func(ctx context.Context) error
	// Broker reports the message broker's state, only reported by readiness.
	Broker func(ctx context.Context) string
	// GraphQL serves POST /graphql; Explorer serves GET /graphql and its assets.
	GraphQL  http.Handler
	Explorer http.Handler
	// WebApp serves the web app at /ui/ (GET /ui and everything under /ui/).
	WebApp http.Handler
	// Account keeps workspace and account settings.
	Account AccountService
	// BI records BI tools' dataset refreshes.
	BI BIService
	// DataPolicies keeps the workspace's and domains' data policies.
	DataPolicies DataPolicyService
	// Compliance builds the compliance dossiers.
	Compliance ComplianceService
	// Finops computes chargeback and currency amounts.
	Finops FinopsService
	// Dashboards answers the dashboards and governance metrics.
	Dashboards DashboardService
	// Knowledge keeps knowledge entries (notes, decisions, terms, metrics).
	Knowledge KnowledgeService
	// Sensitivity classifies columns (auto, manual, lineage-inherited suggestions).
	Sensitivity SensitivityService
	// LabelQuality checks the labels of training datasets.
	LabelQuality LabelQualityService
	// Readmes keeps dataset READMEs.
	Readmes ReadmeService
}

// Server is the HTTP transport.
type Server struct {
	cfg          Config
	deps         Deps
	msgs         *i18n.Catalog
	log          *slog.Logger
	root         *chi.Mux
	ops          []*operation
	opByRoute    map[string]*operation
	ipLimiter    *limiter
	tokenLimiter *limiter
	// probeLimiter bounds each IP on liveness, readiness and version.
	probeLimiter *limiter
	clientAddr   clientAddr
	// publicLimiter bounds each IP on the public data-product page and badge.
	publicLimiter *limiter
	// validateLimiter bounds each credential's record validations.
	validateLimiter *limiter
	// syntheticLimiter bounds each workspace's synthetic packs.
	syntheticLimiter *limiter
	metrics          *metrics
	draining         atomic.Bool
	now              func() time.Time
}

// New builds the router with every operation registered.
func New(cfg Config, deps Deps, log *slog.Logger) *Server {
	if cfg.RateWindow == 0 {
		cfg.RateWindow = time.Minute
	}
	if cfg.RateLimitToken == 0 {
		cfg.RateLimitToken = 600
	}
	if cfg.RateLimitIP == 0 {
		cfg.RateLimitIP = 1200
	}
	if cfg.RateLimitPublic == 0 {
		cfg.RateLimitPublic = 60
	}
	if cfg.RateLimitProbe == 0 {
		cfg.RateLimitProbe = 6000
	}
	if cfg.RateLimitValidate == 0 {
		cfg.RateLimitValidate = validationLimitDefault
	}
	if cfg.RateLimitSynthetic == 0 {
		cfg.RateLimitSynthetic = syntheticLimitDefault
	}
	if cfg.SyntheticWindow == 0 {
		cfg.SyntheticWindow = syntheticWindowDefault
	}
	if cfg.ForwardedHeader == "" {
		cfg.ForwardedHeader = HeaderXForwardedFor
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	if cfg.BuildSHA == "" {
		cfg.BuildSHA = "0000000"
	}
	if deps.Messages == nil {
		msgs, err := i18n.New()
		if err != nil {
			// The catalogues are embedded; failing to load them is a build defect.
			panic(err)
		}
		deps.Messages = msgs
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, deps: deps, msgs: deps.Messages, log: log, root: chi.NewRouter(),
		opByRoute: map[string]*operation{}, metrics: newMetrics(), now: time.Now}
	s.ipLimiter = newLimiter(cfg.RateLimitIP, cfg.RateWindow, s.now)
	s.tokenLimiter = newLimiter(cfg.RateLimitToken, cfg.RateWindow, s.now)
	s.probeLimiter = newLimiter(cfg.RateLimitProbe, cfg.RateWindow, s.now)
	s.clientAddr = clientAddr{trusted: cfg.TrustedProxies, header: cfg.ForwardedHeader}

	s.root.Use(s.closeWhenDraining, withRequestID, s.accessLog, withTimeout(cfg.RequestTimeout), s.guard, middleware.GetHead)
	s.root.NotFound(func(w http.ResponseWriter, r *http.Request) { s.writeError(w, r, vigia.NotFound()) })
	s.root.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &vigia.Error{Kind: vigia.KindMethodNotAllowed, Code: vigia.CodeMethodNotAllowed, Key: "error.method_not_allowed"})
	})
	s.routes()
	return s
}

// Handler returns the root HTTP handler.
func (s *Server) Handler() http.Handler { return s.root }

// Drain makes readiness fail so load balancers stop sending traffic before shutdown,
// and ends keep-alive: every response from now on carries Connection: close, so a
// client's connection closes after its last answer instead of being cut while idle.
func (s *Server) Drain() { s.draining.Store(true) }

func (s *Server) closeWhenDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// Register adds collectors to the /metrics registry.
func (s *Server) Register(c ...prometheus.Collector) { s.metrics.registry.MustRegister(c...) }

func (s *Server) routes() {
	s.healthRoutes()
	s.datasetRoutes()
	s.datasetReadRoutes()
	s.connectionRoutes()
	s.scanRoutes()
	s.workflowRoutes()
	s.lineageRoutes()
	s.trustRoutes()
	s.productRoutes()
	s.webhookRoutes()
	s.orchestratorRoutes()
	s.ideRoutes()
	s.checkRoutes()
	s.ragGateRoutes()
	s.diffRoutes()
	s.reconcileRoutes()
	s.reconcileCheckRoutes()
	s.contractRoutes()
	s.workspaceRoutes()
	s.syntheticRoutes()
	s.biRoutes()
	s.dataPolicyRoutes()
	s.complianceRoutes()
	s.finopsRoutes()
	s.dashboardRoutes()
	s.suggestionRoutes()
	s.duplicateRoutes()
	s.blackoutRoutes()
	s.knowledgeRoutes()
	s.sensitivityRoutes()
	s.labelQualityRoutes()
	s.readmeRoutes()
	s.reportRoutes()
	s.routineRoutes()
	s.root.Handle("/metrics", s.metrics.handler())
	if s.deps.GraphQL != nil {
		s.root.Post("/graphql", s.deps.GraphQL.ServeHTTP)
	}
	if s.deps.Explorer != nil {
		s.root.Get("/graphql", s.deps.Explorer.ServeHTTP)
		s.root.Get("/graphql/assets/*", s.deps.Explorer.ServeHTTP)
	}
	if s.deps.WebApp != nil {
		s.root.Get("/ui", s.deps.WebApp.ServeHTTP)
		s.root.Get("/ui/*", s.deps.WebApp.ServeHTTP)
	}
}

// Operation names a declared endpoint.
type Operation struct {
	ID, Method, Path string
	Public           bool
	TokenWrite       bool
}

// Operations lists every declared endpoint, in registration order.
func (s *Server) Operations() []Operation {
	out := make([]Operation, 0, len(s.ops))
	for _, o := range s.ops {
		out = append(out, Operation{ID: o.ID, Method: o.Method, Path: o.Path, Public: o.Public, TokenWrite: o.TokenWrite})
	}
	return out
}
