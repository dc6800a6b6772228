package lineage

import (
	"context"
	"log/slog"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Caps of the contract (part 8 and the lineage rows of part 4).
const (
	MaxHops = 3
	// DefaultTraverseHops and DefaultKnowledgeHops are what a traversal and a focused
	// knowledge graph walk when hops is not given; the transports document these.
	DefaultTraverseHops  = 1
	DefaultKnowledgeHops = 2
	// SnapshotPageDefault is the page size of the snapshot list when limit is not given.
	SnapshotPageDefault = MaxSnapshots
	MaxTraverseNodes    = 40 // datasets of a traversal, the starting one included
	MaxTraverseEdges    = 60
	MaxImpactNodes      = 40
	MaxPathHops         = 6
	MaxGraphNodes       = 1500
	MaxFocusNodes       = 400
	MaxDiffItems        = 1000
	MaxSnapshots        = 90
	pathVisitCap        = 50000 // nodes a path search may visit before giving up
	maxColumnParam      = 200
	maxTargetIDLength   = 64
)

// DatasetInfo is what traversals need to know of a dataset: its name, whether the
// caller can see it, and (when asked) its columns in order.
type DatasetInfo struct {
	ID           string
	Name         string
	ConnectionID string
	Kind         string
	Visible      bool
	Columns      []string
	// Notes are the reason codes of the dataset's own parsed lineage (a view's SQL):
	// what could not be attributed, dynamic_sql, unparsable.
	Notes []string
}

// Exposure is a dashboard, ML model, application or destination reading datasets.
type Exposure struct {
	ID         string
	Name       string
	Type       string
	URL        string
	Owner      string
	Origin     string
	DatasetIDs []string
	CreatedAt  time.Time
}

// RecordEdge is an edge of the record with its bookkeeping.
type RecordEdge struct {
	Edge
	Notes []string
}

// Store is the record the lineage service needs (implemented by store.LineageStore).
// Every method is scoped to one workspace.
type Store interface {
	// DatasetInfos returns the workspace's live datasets among ids, with Visible set by
	// the one visibility rule for v; ids of other workspaces or dropped datasets are absent.
	DatasetInfos(ctx context.Context, v catalog.Viewer, ids []string, withColumns bool) (map[string]DatasetInfo, error)
	// Exposures returns the workspace's exposures among ids (exposure ids, not node ids).
	Exposures(ctx context.Context, workspaceID string, ids []string) (map[string]Exposure, error)
	// ListExposures lists the workspace's exposures by name.
	ListExposures(ctx context.Context, workspaceID string) ([]Exposure, error)
	// UpsertExposure creates or updates an exposure by (type, name) and returns its id.
	UpsertExposure(ctx context.Context, workspaceID string, e Exposure) (string, error)
	// DeleteExposures deletes exposures of an origin not in keep (ids) and returns the deleted ids.
	DeleteExposures(ctx context.Context, workspaceID, origin string, keep []string) ([]string, error)
	// Reach returns the stored downstream reach of datasets (0 when unknown).
	Reach(ctx context.Context, workspaceID string, ids []string) (map[string]int, error)
	// SetReach stores downstream reach counts.
	SetReach(ctx context.Context, workspaceID string, reach map[string]int) error
	// Edges returns the record's edges of a kind and origin ("" = any origin).
	Edges(ctx context.Context, workspaceID string, kind EdgeKind, origin string) ([]RecordEdge, error)
	// EdgesBetween returns the record's edges touching any of ids (either end).
	EdgesTouching(ctx context.Context, workspaceID string, ids []string) ([]RecordEdge, error)
	// UpsertEdges writes edges (by source, target, kind).
	UpsertEdges(ctx context.Context, workspaceID string, edges []RecordEdge) error
	// DeleteEdges deletes edges by key.
	DeleteEdges(ctx context.Context, workspaceID string, keys []EdgeKey) error
	// AddOutbox appends a change to the outbox.
	AddOutbox(ctx context.Context, workspaceID string, c Change) error
	// TakeOutbox returns up to limit outbox rows of the workspace in order, with the last id.
	TakeOutbox(ctx context.Context, workspaceID string, limit int) ([]Change, int64, error)
	// DropOutbox deletes the workspace's outbox rows up to and including id.
	DropOutbox(ctx context.Context, workspaceID string, upTo int64) error
	// WorkspacesWithLineage lists workspaces that have datasets or edges.
	Workspaces(ctx context.Context) ([]string, error)
	// ConnectionDatasets returns the live datasets of a connection with their columns,
	// kind and view definition, and the connection's dialect.
	ConnectionDatasets(ctx context.Context, connectionID string) (ConnectionCatalog, error)
	// DroppedDatasets returns the dataset ids of a connection marked dropped.
	DroppedDatasets(ctx context.Context, connectionID string) ([]string, error)
	// LockOpenLineageJobs returns the stored merge state of OpenLineage jobs by key
	// (absent for a new job), locking them until the transaction in ctx ends.
	LockOpenLineageJobs(ctx context.Context, workspaceID string, jobs []string) (map[string][]byte, error)
	// PutOpenLineageJob stores a job's merge state.
	PutOpenLineageJob(ctx context.Context, workspaceID, job string, state []byte) error
	// SetLineageNotes replaces the lineage notes of a connection's datasets: those in
	// notes get theirs, the others none.
	SetLineageNotes(ctx context.Context, connectionID string, notes map[string][]string) error
	// ResolveDatasets finds live datasets of the workspace by schema and table name
	// (case-insensitive), optionally within a connection by name.
	FindByName(ctx context.Context, workspaceID string) ([]NamedDataset, error)

	KnowledgeStore
	RebuildStore
}

// NamedDataset is a dataset with the parts of its name, for matching external names.
type NamedDataset struct {
	ID             string
	ConnectionID   string
	ConnectionName string
	// ConnectionKind is postgres, mysql or sqlite.
	ConnectionKind string
	// Namespaces are the OpenLineage namespaces of the connection's server (the one its
	// DSN names and the declared aliases), canonical (vigia.CanonicalNamespace), and
	// Database the database its DSN names ("" when none).
	Namespaces []string
	Database   string
	Schema     string
	Table      string
}

// ConnectionCatalog is a connection's datasets as the parsed and inferred sources
// need them.
type ConnectionCatalog struct {
	WorkspaceID  string
	ConnectionID string
	Dialect      string // postgres, mysql, sqlite
	Datasets     []CatalogDataset
}

// CatalogDataset is one dataset of a connection with its columns and SQL.
type CatalogDataset struct {
	ID             string
	Schema         string
	Table          string
	Kind           string
	ViewDefinition string
	Columns        []CatalogColumn
	// DependsOn is what the source's dependency catalog says a view reads;
	// DependsOnKnown is false where the source keeps no such catalog.
	DependsOn      []TableName
	DependsOnKnown bool
}

// TableName is a schema-qualified table or view name as a source spells it.
type TableName struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
}

// CatalogColumn is a declared column.
type CatalogColumn struct {
	Name       string
	PrimaryKey bool
}

// Tx runs fn in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Enqueuer puts the projector's job on the job queue inside the transaction in ctx.
type Enqueuer interface {
	EnqueueProjection(ctx context.Context, workspaceID string) error
}

// ConsumerSource is the port for consumers as exposures (registered through the trust
// feature): per dataset among datasetIDs the caller can see, the consumers that read it
// since since, with their reads of it in the last 7 days and their last decision.
type ConsumerSource interface {
	RecentConsumers(ctx context.Context, datasetIDs []string, since time.Time) (map[string][]RecentConsumer, error)
}

// RecentConsumer is a consumer that read a dataset recently.
type RecentConsumer struct {
	ConsumerID     string
	Name           string
	Kind           string // agent, application, pipeline, notebook
	Framework      *string
	Consumptions7d int
	LastDecision   *string
	LastConsumedAt *time.Time
}

// ConsumerWindow is how recently a consumer must have read a dataset to appear among an
// incident's exposures (contract: consumers that consumed in the last 30 days).
const ConsumerWindow = 30 * 24 * time.Hour

// ConsumerExposure is a consumer as an incident's exposure (contract: Incident).
type ConsumerExposure struct {
	ID             string
	Name           string
	Type           string // agent, application, pipeline, notebook
	Framework      string
	Consumptions7d int
	LastDecision   string
	LastConsumedAt *time.Time
	DatasetIDs     []string
}

// Service answers lineage reads and records lineage writes for the principal in ctx.
type Service struct {
	store     Store
	graph     Graph
	views     ViewParser
	tx        Tx
	jobs      Enqueuer
	clock     vigia.Clock
	log       *slog.Logger
	providers []NodeProvider
	consumers ConsumerSource
}

// Deps are what the lineage service is built over.
type Deps struct {
	// Store is the record, Graph the graph backend it projects to and reads.
	Store Store
	Graph Graph
	// Views reads view definitions (the lineage/sqllineage adapter).
	Views ViewParser
	Tx    Tx
	// Jobs queues the projector.
	Jobs Enqueuer
	// Consumers lists consumers as incidents' exposures (the trust feature); nil: none.
	Consumers ConsumerSource
	// Providers add knowledge-graph nodes (connections, domains, issues, signals, rules ...).
	Providers []NodeProvider
	Clock     vigia.Clock
	Log       *slog.Logger
}

// NewService returns the lineage service.
func NewService(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Service{store: d.Store, graph: d.Graph, views: d.Views, tx: d.Tx, jobs: d.Jobs, consumers: d.Consumers,
		providers: d.Providers, clock: d.Clock, log: d.Log}
}

// Graph returns the backend the service reads (for the bench and rebuild commands).
func (s *Service) Graph() Graph { return s.graph }

// principal returns the caller and their visibility.
func principal(ctx context.Context) (vigia.Principal, catalog.Viewer, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return p, catalog.Viewer{}, err
	}
	return p, catalog.ViewerOf(p), nil
}

// visibleRoot checks that a dataset exists in the caller's workspace and is visible.
// Returns KindNotFound otherwise.
func (s *Service) visibleRoot(ctx context.Context, v catalog.Viewer, id string) (DatasetInfo, error) {
	if !vigia.ValidID(id) {
		return DatasetInfo{}, vigia.NotFound()
	}
	m, err := s.store.DatasetInfos(ctx, v, []string{id}, true)
	if err != nil {
		return DatasetInfo{}, err
	}
	d, ok := m[id]
	if !ok || !d.Visible {
		return DatasetInfo{}, vigia.NotFound()
	}
	return d, nil
}
