package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/ingest"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
)

// LineageNodeOut is a dataset of a lineage answer. A dataset the caller cannot see is
// restricted: no id, name or columns; ref is then an opaque key edges use.
type LineageNodeOut struct {
	Ref        string   `json:"ref" doc:"The dataset id, or restricted-N for a dataset the caller cannot see"`
	ID         *string  `json:"id,omitempty"`
	Name       *string  `json:"name,omitempty"`
	Restricted bool     `json:"restricted"`
	Hops       int      `json:"hops"`
	Direction  string   `json:"direction,omitempty" enum:"upstream,downstream"`
	Impact     string   `json:"impact,omitempty" enum:"column,table" doc:"column = certain (derives from the asked column), table = possible"`
	Columns    []string `json:"columns,omitempty" doc:"Columns derived from the asked column"`
}

// ColumnPairOut is one entry of an edge's column map.
type ColumnPairOut struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Direct bool   `json:"direct" doc:"A plain copy (possibly renamed)"`
}

// LineageEdgeOut is an edge between two node refs, with its origin and column map
// (absent when it touches a restricted dataset).
type LineageEdgeOut struct {
	Source        string          `json:"source"`
	Target        string          `json:"target"`
	Kind          string          `json:"kind" enum:"parsed,declared,dbt,openlineage,inferred"`
	Origin        *string         `json:"origin,omitempty"`
	ColumnMap     []ColumnPairOut `json:"column_map,omitempty"`
	ColumnLevel   bool            `json:"column_level" doc:"False when no column map could be built"`
	LinkingColumn *string         `json:"linking_column,omitempty"`
}

// ExposureOut is a dashboard, ML model, application or destination.
type ExposureOut struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	URL    *string  `json:"url,omitempty"`
	Owner  *string  `json:"owner,omitempty"`
	Origin string   `json:"origin"`
	Direct bool     `json:"direct" doc:"Reads the asked dataset itself"`
	Via    []string `json:"via" doc:"Refs of the datasets of the answer it reads"`
}

// ExposureNameOut is a downstream exposure by name only.
type ExposureNameOut struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// LineageNeighbourOut is a direct neighbour with every edge kind linking it.
type LineageNeighbourOut struct {
	Ref           string          `json:"ref"`
	ID            *string         `json:"id,omitempty"`
	Name          *string         `json:"name,omitempty"`
	Restricted    bool            `json:"restricted"`
	EdgeKinds     []string        `json:"edge_kinds"`
	ColumnMap     []ColumnPairOut `json:"column_map,omitempty"`
	ColumnLevel   bool            `json:"column_level" doc:"True when the link's column map is known (it may be empty: a table read only to filter or join); false when it is known at table level only, and for a restricted neighbour"`
	LinkingColumn *string         `json:"linking_column,omitempty"`
	InferredOnly  bool            `json:"inferred_only" doc:"Inference by name and key is the only evidence"`
}

// LineageOut is a dataset's direct lineage.
type LineageOut struct {
	DatasetID  string                `json:"dataset_id"`
	Unresolved []string              `json:"unresolved" doc:"Reason codes of the dataset's own parsed lineage: dynamic_sql (SQL inside a string: crosstab, dblink), unparsable, not_in_dependency_catalog, no_column_map, star_unknown_table, column_ambiguous ...; empty when nothing was left out"`
	Upstream   []LineageNeighbourOut `json:"upstream"`
	Downstream []LineageNeighbourOut `json:"downstream"`
	Exposures  []ExposureOut         `json:"exposures" doc:"Direct, or via downstream datasets (3 hops)"`
	ReachTotal int                   `json:"reach_total" doc:"Downstream datasets at any distance, restricted ones included"`
	Truncated  bool                  `json:"truncated"`
}

// LineageTraverseOut is a bounded traversal: at most 40 datasets and 60 edges.
type LineageTraverseOut struct {
	DatasetID string            `json:"dataset_id"`
	Direction string            `json:"direction" enum:"upstream,downstream,both"`
	Hops      int               `json:"hops"`
	Nodes     []LineageNodeOut  `json:"nodes"`
	Edges     []LineageEdgeOut  `json:"edges"`
	Exposures []ExposureNameOut `json:"exposures" doc:"Downstream exposures, names only"`
	Truncated bool              `json:"truncated"`
}

// LineageImpactOut is what is downstream of a dataset (3 hops, 40 datasets).
type LineageImpactOut struct {
	DatasetID    string            `json:"dataset_id"`
	Column       *string           `json:"column"`
	Datasets     []LineageNodeOut  `json:"datasets"`
	Columns      []ImpactColumnOut `json:"columns" doc:"With column: the derived downstream columns"`
	Exposures    []ExposureOut     `json:"exposures"`
	Destinations []ExposureOut     `json:"destinations" doc:"Destinations outside the warehouse"`
	ReachTotal   int               `json:"reach_total"`
	Truncated    bool              `json:"truncated"`
	ImpactNote   *string           `json:"impact_note" doc:"no_column_lineage, or null"`
}

// ImpactColumnOut is a downstream column derived from the asked one.
type ImpactColumnOut struct {
	DatasetID   string `json:"dataset_id"`
	DatasetName string `json:"dataset_name"`
	Column      string `json:"column"`
	Hops        int    `json:"hops"`
}

// LineagePathOut is the shortest path between two datasets.
type LineagePathOut struct {
	DatasetID string           `json:"dataset_id"`
	TargetID  string           `json:"target_id"`
	Found     bool             `json:"found" doc:"False when no path of at most 6 hops exists in either direction"`
	Direction *string          `json:"direction" doc:"downstream (in flow direction) or upstream (the target feeds the dataset); null when not found"`
	Hops      *int             `json:"hops"`
	Nodes     []LineageNodeOut `json:"nodes"`
	Edges     []LineageEdgeOut `json:"edges"`
}

// ImpactNodeOut is a node of an impact tree.
type ImpactNodeOut struct {
	Ref        string   `json:"ref"`
	ID         *string  `json:"id,omitempty"`
	Name       *string  `json:"name,omitempty"`
	Restricted bool     `json:"restricted"`
	Hops       int      `json:"hops"`
	Parent     *string  `json:"parent"`
	Impact     string   `json:"impact" enum:"column,table" doc:"column = certain, table = possible"`
	ViaColumns []string `json:"via_columns" doc:"Empty on a restricted dataset"`
}

// IncidentExposureOut is an exposure or a consumer reached by an incident.
type IncidentExposureOut struct {
	Node           string     `json:"node" enum:"exposure,consumer"`
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Type           string     `json:"type"`
	URL            *string    `json:"url,omitempty"`
	Framework      *string    `json:"framework,omitempty"`
	Consumptions7d *int       `json:"consumptions_7d,omitempty"`
	LastDecision   *string    `json:"last_decision,omitempty"`
	LastConsumedAt *time.Time `json:"last_consumed_at,omitempty"`
}

// BlastRadiusOut is the blast radius of an incident or an issue.
type BlastRadiusOut struct {
	ImpactScope           string                `json:"impact_scope" enum:"column,table,none"`
	ImpactColumns         []string              `json:"impact_columns"`
	ImpactNote            *string               `json:"impact_note" doc:"no_column_lineage, or null"`
	ImpactTree            []ImpactNodeOut       `json:"impact_tree"`
	DownstreamCount       int                   `json:"downstream_count"`
	DownstreamColumnCount int                   `json:"downstream_column_count"`
	ExposuresCount        int                   `json:"exposures_count"`
	Exposures             []IncidentExposureOut `json:"exposures"`
	ReachTotal            int                   `json:"reach_total"`
	Truncated             bool                  `json:"truncated"`
}

// IncidentOut is an incident with its blast radius.
type IncidentOut struct {
	ID              string                 `json:"id"`
	Status          string                 `json:"status" enum:"open,resolved"`
	Title           string                 `json:"title"`
	Severity        string                 `json:"severity" enum:"info,warning,critical"`
	RootDatasetID   *string                `json:"root_dataset_id"`
	RootDatasetName *string                `json:"root_dataset_name"`
	IssueIDs        []string               `json:"issue_ids"`
	DatasetIDs      []string               `json:"dataset_ids"`
	ScanID          *string                `json:"scan_id"`
	CreatedAt       time.Time              `json:"created_at"`
	UpdatedAt       time.Time              `json:"updated_at"`
	ResolvedAt      *time.Time             `json:"resolved_at"`
	ChangedBy       []IncidentChangeRunOut `json:"changed_by" doc:"The reported orchestrator runs that changed what the incident's scan saw: runs that wrote one of its datasets, that scan being the first to profile it after the run ended; newest first"`
	BlastRadiusOut
}

// IncidentChangeRunOut is an orchestrator run behind an incident's scan.
type IncidentChangeRunOut struct {
	ID           string     `json:"id" doc:"The run's id in Vigia (GET /orchestrator-runs)"`
	Orchestrator string     `json:"orchestrator"`
	Pipeline     string     `json:"pipeline"`
	RunID        string     `json:"run_id"`
	Status       string     `json:"status" enum:"running,success,failed,aborted"`
	StartedAt    time.Time  `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	DatasetID    string     `json:"dataset_id" doc:"The dataset it wrote that the scan profiled next"`
}

// KnowledgeNodeOut is a knowledge-graph node.
type KnowledgeNodeOut struct {
	ID         string         `json:"id" doc:"<kind>:<id>, or restricted-N"`
	Kind       string         `json:"kind" enum:"connection,dataset,rule,issue,signal,kb_entry,domain,exposure,metric,term"`
	Name       *string        `json:"name,omitempty"`
	Restricted bool           `json:"restricted"`
	Props      map[string]any `json:"props,omitempty"`
}

// KnowledgeEdgeOut is a knowledge-graph edge.
type KnowledgeEdgeOut struct {
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Kind        string  `json:"kind" enum:"feeds,member_of,consumed_by,measures,means,references"`
	LineageKind *string `json:"lineage_kind,omitempty" enum:"parsed,declared,dbt,openlineage,inferred"`
}

// KnowledgeStatsOut counts a graph.
type KnowledgeStatsOut struct {
	Nodes      int            `json:"nodes"`
	Edges      int            `json:"edges"`
	ByNodeKind map[string]int `json:"by_node_kind"`
	ByEdgeKind map[string]int `json:"by_edge_kind"`
}

// KnowledgeGraphOut is the knowledge graph (at most 1500 nodes, 400 with focus).
type KnowledgeGraphOut struct {
	Focus     *string            `json:"focus"`
	Hops      int                `json:"hops"`
	Nodes     []KnowledgeNodeOut `json:"nodes"`
	Edges     []KnowledgeEdgeOut `json:"edges"`
	Truncated bool               `json:"truncated"`
	Stats     KnowledgeStatsOut  `json:"stats"`
}

// SnapshotOut is a knowledge-graph snapshot.
type SnapshotOut struct {
	ID         string    `json:"id"`
	Trigger    string    `json:"trigger" enum:"scan,manual,decision" doc:"decision: taken for a knowledge decision made on a changed graph"`
	ScanID     *string   `json:"scan_id"`
	Digest     string    `json:"digest"`
	NodesCount int       `json:"nodes_count"`
	EdgesCount int       `json:"edges_count"`
	CreatedAt  time.Time `json:"created_at"`
}

// RenamedNodeOut is a node whose name changed.
type RenamedNodeOut struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	From string `json:"from"`
	To   string `json:"to"`
}

// DiffCountOut counts a diff for one kind.
type DiffCountOut struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Renamed int `json:"renamed"`
}

// GraphDiffOut is what changed between two snapshots (1000 items per list).
type GraphDiffOut struct {
	From         SnapshotOut             `json:"from"`
	To           SnapshotOut             `json:"to"`
	AddedNodes   []KnowledgeNodeOut      `json:"added_nodes"`
	RemovedNodes []KnowledgeNodeOut      `json:"removed_nodes"`
	RenamedNodes []RenamedNodeOut        `json:"renamed_nodes"`
	AddedEdges   []KnowledgeEdgeOut      `json:"added_edges"`
	RemovedEdges []KnowledgeEdgeOut      `json:"removed_edges"`
	ByKind       map[string]DiffCountOut `json:"by_kind"`
	Truncated    bool                    `json:"truncated"`
}

// DeclaredEdgeIn declares an edge between two datasets.
type DeclaredEdgeIn struct {
	SourceID  string          `json:"source_id" maxLength:"64"`
	TargetID  string          `json:"target_id" maxLength:"64"`
	ColumnMap []ColumnPairOut `json:"column_map,omitempty" maxItems:"500"`
}

// ExposureIn declares an exposure.
type ExposureIn struct {
	Name       string   `json:"name" maxLength:"200"`
	Type       string   `json:"type" enum:"dashboard,ml_model,application,notebook,analysis,report,destination"`
	URL        string   `json:"url,omitempty" maxLength:"2000"`
	Owner      string   `json:"owner,omitempty" maxLength:"200"`
	DatasetIDs []string `json:"dataset_ids" maxItems:"500"`
}

// ImportResultOut says what an import changed.
type ImportResultOut struct {
	Edges          int      `json:"edges"`
	Exposures      int      `json:"exposures"`
	Destinations   int      `json:"destinations"`
	Unmatched      int      `json:"unmatched" doc:"Names matching no dataset of the workspace, or several"`
	UnmatchedNames []string `json:"unmatched_names" doc:"Those names (dbt unique ids; at most 100)"`
	Replaced       bool     `json:"replaced" doc:"True when replace=true let the import replace a project's lineage it matched far less of"`
}

// OpenLineageEventIn is an OpenLineage event: a RunEvent (run and job), a JobEvent (job,
// no run: static lineage) or a DatasetEvent (dataset); other fields are accepted and
// ignored.
type OpenLineageEventIn struct {
	EventType string           `json:"eventType,omitempty" doc:"RunEvent: START, RUNNING, COMPLETE, ABORT, FAIL, OTHER"`
	EventTime string           `json:"eventTime" doc:"ISO 8601; the merge orders a job's events by it"`
	Run       map[string]any   `json:"run,omitempty"`
	Job       map[string]any   `json:"job,omitempty" doc:"namespace and name (RunEvent, JobEvent)"`
	Dataset   map[string]any   `json:"dataset,omitempty" doc:"namespace, name and facets (DatasetEvent: its columnLineage facet is its static lineage)"`
	Inputs    []map[string]any `json:"inputs,omitempty"`
	Outputs   []map[string]any `json:"outputs,omitempty"`
}

// OpenLineageBodyIn is the body of POST /lineage/openlineage: one event or a JSON array
// of events (NDJSON is read too, with its own content type).
type OpenLineageBodyIn struct{}

// Schema documents both JSON forms.
func (OpenLineageBodyIn) Schema(r huma.Registry) *huma.Schema {
	ev := r.Schema(reflect.TypeOf(OpenLineageEventIn{}), true, "OpenLineageEventIn")
	max := ingest.MaxOpenLineageBatch
	return &huma.Schema{OneOf: []*huma.Schema{ev, {Type: huma.TypeArray, Items: ev, MaxItems: &max}}}
}

// DBTRunResultsIn carries dbt's run_results.json and, for lineage, its manifest.json.
type DBTRunResultsIn struct {
	RunResults map[string]any `json:"run_results"`
	Manifest   map[string]any `json:"manifest,omitempty"`
}

// DBTRunOut summarises a dbt run.
type DBTRunOut struct {
	InvocationID string           `json:"invocation_id"`
	Results      int              `json:"results"`
	ByStatus     map[string]int   `json:"by_status"`
	Lineage      *ImportResultOut `json:"lineage" doc:"What the manifest added; null without one"`
	Tests        DBTTestsOut      `json:"tests" doc:"What the run's test results did as rule results (they need the manifest)"`
	Models       DBTModelsOut     `json:"models" doc:"What the run's model results did as orchestrator runs (they need the manifest)"`
}

// DBTModelsOut is what a dbt run's model results did: each became a run of orchestrator
// dbt, pipeline the model's unique_id, run id the invocation id, writing the model's
// dataset, so its pipeline health is known.
type DBTModelsOut struct {
	Recorded  int `json:"recorded" doc:"Model (seed, snapshot) results recorded as orchestrator runs"`
	Unmatched int `json:"unmatched" doc:"Model results whose relation is no dataset of the workspace, or without timings (all of them without a manifest)"`
}

// DBTTestsOut is what a dbt run's test results did.
type DBTTestsOut struct {
	Recorded       int `json:"recorded" doc:"Test results recorded as results of the tests' rules on the tested models' datasets"`
	Unmatched      int `json:"unmatched" doc:"Test results whose tested model is no dataset of the workspace (all of them without a manifest)"`
	IssuesOpened   int `json:"issues_opened"`
	IssuesResolved int `json:"issues_resolved" doc:"Issues resolved, or whose resolution was verified, by a passing test"`
}

// DomainVoteOut is a candidate domain with its votes.
type DomainVoteOut struct {
	DomainID   string `json:"domain_id"`
	DomainName string `json:"domain_name"`
	Votes      int    `json:"votes"`
}

// DomainSuggestionOut suggests a domain for a dataset without one.
type DomainSuggestionOut struct {
	DatasetID    string          `json:"dataset_id"`
	DatasetName  string          `json:"dataset_name"`
	DomainID     *string         `json:"domain_id"`
	DomainName   *string         `json:"domain_name"`
	Votes        int             `json:"votes"`
	TotalLinks   int             `json:"total_links"`
	ViaColumns   []string        `json:"via_columns" doc:"Up to 3"`
	EdgeKinds    []string        `json:"edge_kinds"`
	InferredOnly bool            `json:"inferred_only"`
	Signature    *string         `json:"signature"`
	Candidates   []DomainVoteOut `json:"candidates" doc:"Tied domains of an ambiguous entry"`
}

// DomainSuggestionsOut is the lineage part of the domain suggestions.
type DomainSuggestionsOut struct {
	HasLineage  bool                  `json:"has_lineage"`
	Suggestions []DomainSuggestionOut `json:"suggestions"`
	Ambiguous   []DomainSuggestionOut `json:"ambiguous"`
}

func (s *Server) lineageRoutes() {
	s.register(operation{ID: "getDatasetLineage", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/lineage", Tag: "lineage",
		Summary: "Direct upstream and downstream, exposures and reach_total", Params: []param{datasetIDParam}, Response: LineageOut{},
		Desc: "A neighbour the caller cannot see is restricted: true, without id, name, linking column or column map; it still counts in reach_total."},
		s.handleLineage)
	s.register(operation{ID: "traverseDatasetLineage", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/lineage/traverse", Tag: "lineage",
		Summary: "Bounded lineage traversal: up to 40 datasets and 60 edges", Response: LineageTraverseOut{},
		Desc: "truncated is true when a cap (40 datasets, 60 edges, or the hop limit) left datasets out.",
		Params: []param{datasetIDParam,
			{Name: "direction", In: "query", Type: "string", Enum: []string{"upstream", "downstream", "both"}, Default: "both", Desc: "upstream, downstream or both"},
			hopsParam(lineage.DefaultTraverseHops)}},
		s.handleTraverse)
	s.register(operation{ID: "getDatasetImpact", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/lineage/impact", Tag: "lineage",
		Summary: "Downstream impact (3 hops, 40 datasets), with the columns derived from a column", Response: LineageImpactOut{},
		Params: []param{datasetIDParam, {Name: "column", In: "query", Type: "string", MaxLen: 200, Desc: "A column of the dataset"}}},
		s.handleImpact)
	s.register(operation{ID: "getDatasetLineagePath", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/lineage/path", Tag: "lineage",
		Summary: "Shortest path up to 6 hops in flow direction, else reverse", Response: LineagePathOut{},
		Params: []param{datasetIDParam, {Name: "target_id", In: "query", Type: "string", Required: true, MaxLen: 64}},
		Desc:   "An invisible or unknown target gives 404; no path within 6 hops gives found: false."}, s.handlePath)
	s.register(operation{ID: "getIssueImpact", Method: http.MethodGet, Path: "/api/v1/issues/{issue_id}/impact", Tag: "issues",
		Summary: "Blast radius of an issue", Response: BlastRadiusOut{},
		Params: []param{{Name: "issue_id", In: "path", Type: "string", Required: true, MaxLen: 64}}}, s.handleIssueImpact)
	s.register(operation{ID: "listIncidents", Method: http.MethodGet, Path: "/api/v1/incidents", Tag: "incidents",
		Summary: "Incidents with their blast radius, newest first", List: true, ListDefault: incident.PageDefault, Response: []IncidentOut{},
		Params: []param{{Name: "status", In: "query", Type: "string", Enum: []string{incident.Open, incident.Resolved}},
			{Name: "severity", In: "query", Type: "string", Enum: incident.Severities,
				Desc: "Extension: only incidents of this severity (the highest of their issues')"}}},
		s.handleIncidentList)
	s.register(operation{ID: "getIncident", Method: http.MethodGet, Path: "/api/v1/incidents/{incident_id}", Tag: "incidents",
		Summary: "One incident with its blast radius", Response: IncidentOut{},
		Params: []param{{Name: "incident_id", In: "path", Type: "string", Required: true, MaxLen: 64}}}, s.handleIncidentGet)
	s.register(operation{ID: "getKnowledgeGraph", Method: http.MethodGet, Path: "/api/v1/knowledge/graph", Tag: "knowledge",
		Summary: "Knowledge graph (1500 nodes; 400 with focus)", Response: KnowledgeGraphOut{},
		Params: []param{{Name: "focus", In: "query", Type: "string", MaxLen: 80, Desc: "dataset:<id>"},
			hopsParam(lineage.DefaultKnowledgeHops),
			{Name: "kinds", In: "query", Type: "string", MaxLen: 200, Desc: "Comma list of node kinds"}},
		Errors: map[int]string{http.StatusNotFound: "focus names no dataset the caller can see"}}, s.handleKnowledgeGraph)
	s.register(operation{ID: "listGraphSnapshots", Method: http.MethodGet, Path: "/api/v1/knowledge/graph/history", Tag: "knowledge",
		Summary: "Knowledge-graph snapshots, newest first (up to 90)", List: true, ListDefault: lineage.SnapshotPageDefault, Response: []SnapshotOut{}}, s.handleSnapshotHistory)
	s.register(operation{ID: "diffGraphSnapshots", Method: http.MethodGet, Path: "/api/v1/knowledge/graph/diff", Tag: "knowledge",
		Summary: "What changed between two snapshots", Response: GraphDiffOut{},
		Params: []param{{Name: "from", In: "query", Type: "string", Required: true, MaxLen: 64, Desc: "Snapshot id, ISO 8601 UTC date or time, or latest"},
			{Name: "to", In: "query", Type: "string", MaxLen: 64, Desc: "Like from; latest by default"}},
		Errors: map[int]string{http.StatusNotFound: "from or to names no snapshot"}}, s.handleSnapshotDiff)
	s.register(operation{ID: "takeGraphSnapshot", Method: http.MethodPost, Path: "/api/v1/knowledge/graph/snapshot", Tag: "knowledge",
		Summary: "Snapshot the knowledge graph (admin)", Response: SnapshotOut{}, Status: http.StatusCreated,
		Also: map[int]alsoAnswer{http.StatusOK: {Desc: "The graph did not change: the last snapshot", Body: SnapshotOut{}}},
		Desc: "201 with a new snapshot, or 200 with the last one when the graph did not change."}, s.handleSnapshotTake)
	s.register(operation{ID: "declareLineageEdge", Method: http.MethodPost, Path: "/api/v1/lineage/edges", Tag: "lineage",
		Summary: "Declare an edge between two datasets (admin session)", Body: DeclaredEdgeIn{}, Status: http.StatusNoContent}, s.handleDeclareEdge)
	s.register(operation{ID: "deleteLineageEdge", Method: http.MethodDelete, Path: "/api/v1/lineage/edges", Tag: "lineage",
		Summary: "Delete a declared edge (admin session)", Status: http.StatusNoContent,
		Params: []param{{Name: "source_id", In: "query", Type: "string", Required: true, MaxLen: 64},
			{Name: "target_id", In: "query", Type: "string", Required: true, MaxLen: 64}},
		Errors: map[int]string{http.StatusNotFound: "No declared edge between the two datasets, or one is not visible"}}, s.handleDeleteEdge)
	s.register(operation{ID: "listExposures", Method: http.MethodGet, Path: "/api/v1/lineage/exposures", Tag: "lineage",
		Summary: "Exposures of the workspace", Response: []ExposureOut{}}, s.handleExposureList)
	s.register(operation{ID: "declareExposure", Method: http.MethodPost, Path: "/api/v1/lineage/exposures", Tag: "lineage",
		Summary: "Declare (or replace) an exposure by type and name (admin session)", Body: ExposureIn{}, Response: ExposureOut{},
		Status: http.StatusCreated}, s.handleDeclareExposure)
	s.register(operation{ID: "postOpenLineageEvent", Method: http.MethodPost, Path: "/api/v1/lineage/openlineage", Tag: "lineage",
		TokenWrite: true, Summary: "OpenLineage events, one or a batch (a marked write: API tokens may call it)", Body: OpenLineageBodyIn{},
		MaxBody:  maxOpenLineageBody,
		Response: OpenLineageOut{}, Desc: "The body is one event (RunEvent, JobEvent or DatasetEvent), a JSON array of up to 1000 events, " +
			"or NDJSON (Content-Type application/x-ndjson, one event a line), up to 16 MiB. Events may come in any order and repeat: " +
			"each job keeps the lineage of its latest COMPLETE run (or JobEvent) by eventTime, plus what newer START/RUNNING events add; " +
			"every input feeds every output through openlineage edges with the columnLineage facet's column map (direct for " +
			"DIRECT/IDENTITY transformations). A dataset is one of the workspace's only when its namespace names the connection's " +
			"server (postgres://host:port, mysql://host:port, or a declared alias) and its name the database, schema and table " +
			"(see docs/lineage.md); outputs that are no dataset are destinations outside the warehouse. Unknown fields are ignored. " +
			"A body that is no RunEvent, JobEvent or DatasetEvent is 422 openlineage_kind_unsupported."}, s.handleOpenLineage)
	s.register(operation{ID: "postDBTRunResults", Method: http.MethodPost, Path: "/api/v1/integrations/dbt/run-results", Tag: "orchestrators",
		TokenWrite: true, Summary: "dbt run results, with the manifest for lineage and test results (a marked write)", Body: DBTRunResultsIn{},
		Desc: "With the manifest, every test result (unique_id test.…) becomes the result of the test's rule on the tested model's dataset " +
			"(attached_node, else its first model, seed, snapshot or source dependency): not_null, unique, accepted_values and relationships " +
			"keep their rule type, other tests are dbt_test rules; a rule per test unique_id, never evaluated by scans. pass and warn pass, " +
			"fail and error fail, other statuses are not_evaluated. A failing test opens (or detects again) its rule's one issue; a passing " +
			"one resolves it, or verifies a resolved one, with history origin dbt:<invocation_id>. With the manifest, every model (seed, " +
			"snapshot) result with its timings becomes an orchestrator run (orchestrator dbt, pipeline the model's unique_id, run id " +
			"the invocation id; success, error failed, skipped aborted) writing the model's dataset: its pipeline health.",
		MaxBody: maxDBTRunResultsBody,
		Params: []param{{Name: "replace", In: "query", Type: "boolean", Default: false,
			Desc: "Replace the project's lineage even when the manifest matches nothing or fewer than half its current edges and exposures"}},
		Errors: map[int]string{http.StatusConflict: "dbt_import_would_erase: the manifest matches nothing, or fewer than half the project's current " +
			"edges and exposures; detail is {code, message, unmatched_names}; nothing changed (send replace=true to replace anyway)"},
		Response: DBTRunOut{}}, s.handleDBTRunResults)
	s.register(operation{ID: "getDomainSuggestions", Method: http.MethodGet, Path: "/api/v1/domains/suggestions", Tag: "catalog",
		Summary: "Suggested domains for datasets without one, by majority of lineage links", Response: DomainSuggestionsOut{},
		Desc: "Admins see all, domain managers their domains, others 403."}, s.handleDomainSuggestions)
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toNodeOut(n lineage.NodeView) LineageNodeOut {
	o := LineageNodeOut{Ref: n.Ref, ID: optStr(n.ID), Name: optStr(n.Name), Restricted: n.Restricted, Hops: n.Hops,
		Direction: string(n.Direction), Impact: n.Impact}
	if !n.Restricted && len(n.Columns) > 0 {
		o.Columns = n.Columns
	}
	return o
}

func toColumnPairs(cs []lineage.ColumnPair) []ColumnPairOut {
	if len(cs) == 0 {
		return nil
	}
	out := make([]ColumnPairOut, 0, len(cs))
	for _, c := range cs {
		out = append(out, ColumnPairOut{From: c.From, To: c.To, Direct: c.Direct})
	}
	return out
}

func toEdgeOut(e lineage.EdgeView) LineageEdgeOut {
	return LineageEdgeOut{Source: e.Source, Target: e.Target, Kind: string(e.Kind), Origin: optStr(e.Origin),
		ColumnMap: toColumnPairs(e.Columns), ColumnLevel: e.ColumnLevel, LinkingColumn: optStr(e.LinkingColumn)}
}

func toExposureOut(e lineage.ExposureView) ExposureOut {
	via := e.Via
	if via == nil {
		via = []string{}
	}
	return ExposureOut{ID: e.ID, Name: e.Name, Type: e.Type, URL: optStr(e.URL), Owner: optStr(e.Owner), Origin: e.Origin, Direct: e.Direct, Via: via}
}

func toNeighbours(ns []lineage.NeighbourView) []LineageNeighbourOut {
	out := make([]LineageNeighbourOut, 0, len(ns))
	for _, n := range ns {
		o := LineageNeighbourOut{Ref: n.Ref, ID: optStr(n.ID), Name: optStr(n.Name), Restricted: n.Restricted, EdgeKinds: []string{},
			ColumnMap: toColumnPairs(n.Columns), ColumnLevel: n.ColumnLevel && !n.Restricted, LinkingColumn: optStr(n.LinkingColumn),
			InferredOnly: n.InferredOnly}
		for _, k := range n.EdgeKinds {
			o.EdgeKinds = append(o.EdgeKinds, string(k))
		}
		out = append(out, o)
	}
	return out
}

func (s *Server) handleLineage(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Lineage.Lineage(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := LineageOut{DatasetID: res.DatasetID, Unresolved: res.Unresolved, Upstream: toNeighbours(res.Upstream), Downstream: toNeighbours(res.Downstream),
		Exposures: make([]ExposureOut, 0, len(res.Exposures)), ReachTotal: res.ReachTotal, Truncated: res.Truncated}
	for _, e := range res.Exposures {
		out.Exposures = append(out.Exposures, toExposureOut(e))
	}
	writeJSON(w, http.StatusOK, out)
}

// ToTraverseOut converts a traversal for the REST API (GraphQL returns the same shape).
func toTraverseOut(res lineage.TraverseResult) LineageTraverseOut {
	out := LineageTraverseOut{DatasetID: res.DatasetID, Direction: string(res.Direction), Hops: res.Hops, Truncated: res.Truncated,
		Nodes: make([]LineageNodeOut, 0, len(res.Nodes)), Edges: make([]LineageEdgeOut, 0, len(res.Edges)),
		Exposures: make([]ExposureNameOut, 0, len(res.Exposures))}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, toNodeOut(n))
	}
	for _, e := range res.Edges {
		out.Edges = append(out.Edges, toEdgeOut(e))
	}
	for _, e := range res.Exposures {
		out.Exposures = append(out.Exposures, ExposureNameOut{Name: e.Name, Type: e.Type})
	}
	return out
}

// hopsParam is the hops of a lineage read: bounds and default are the service's.
func hopsParam(def int) param {
	return param{Name: "hops", In: "query", Type: "integer", Min: intp(1), Max: intp(lineage.MaxHops), Default: int64(def), Desc: "1-3"}
}

func (s *Server) handleTraverse(w http.ResponseWriter, r *http.Request, in *input) {
	dir := lineage.Both
	if v := in.String("direction"); v != nil {
		dir = lineage.Direction(*v)
	}
	res, err := s.deps.Lineage.Traverse(r.Context(), in.Path("dataset_id"), lineage.TraverseOpts{Direction: dir, Hops: in.OptInt("hops")})
	s.reply(w, r, err, func() any { return toTraverseOut(res) })
}

func (s *Server) handleImpact(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Lineage.Impact(r.Context(), in.Path("dataset_id"), in.String("column"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := LineageImpactOut{DatasetID: res.DatasetID, Column: res.Column, ReachTotal: res.ReachTotal, Truncated: res.Truncated,
		ImpactNote: res.ImpactNote, Datasets: make([]LineageNodeOut, 0, len(res.Datasets)), Columns: []ImpactColumnOut{},
		Exposures: make([]ExposureOut, 0, len(res.Exposures)), Destinations: make([]ExposureOut, 0, len(res.Destinations))}
	for _, n := range res.Datasets {
		out.Datasets = append(out.Datasets, toNodeOut(n))
		if res.Column != nil && !n.Restricted {
			for _, c := range n.Columns {
				out.Columns = append(out.Columns, ImpactColumnOut{DatasetID: n.ID, DatasetName: n.Name, Column: c, Hops: n.Hops})
			}
		}
	}
	for _, e := range res.Exposures {
		out.Exposures = append(out.Exposures, toExposureOut(e))
	}
	for _, e := range res.Destinations {
		out.Destinations = append(out.Destinations, toExposureOut(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handlePath(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Lineage.Path(r.Context(), in.Path("dataset_id"), *in.String("target_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := LineagePathOut{DatasetID: res.DatasetID, TargetID: res.TargetID, Found: res.Found, Hops: res.Hops,
		Nodes: make([]LineageNodeOut, 0, len(res.Nodes)), Edges: make([]LineageEdgeOut, 0, len(res.Edges))}
	if res.Direction != nil {
		d := string(*res.Direction)
		out.Direction = &d
	}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, toNodeOut(n))
	}
	for _, e := range res.Edges {
		out.Edges = append(out.Edges, toEdgeOut(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func toBlastOut(v lineage.ImpactView) BlastRadiusOut {
	out := BlastRadiusOut{ImpactScope: v.ImpactScope, ImpactColumns: v.ImpactColumns, ImpactNote: v.ImpactNote,
		ImpactTree: make([]ImpactNodeOut, 0, len(v.ImpactTree)), DownstreamCount: v.DownstreamCount,
		DownstreamColumnCount: v.DownstreamColumnCount, ExposuresCount: v.ExposuresCount,
		Exposures: make([]IncidentExposureOut, 0, len(v.Exposures)), ReachTotal: v.ReachTotal, Truncated: v.Truncated}
	if out.ImpactColumns == nil {
		out.ImpactColumns = []string{}
	}
	for _, n := range v.ImpactTree {
		via := n.ViaColumns
		if via == nil {
			via = []string{}
		}
		out.ImpactTree = append(out.ImpactTree, ImpactNodeOut{Ref: n.Ref, ID: optStr(n.ID), Name: optStr(n.Name), Restricted: n.Restricted,
			Hops: n.Hops, Parent: optStr(n.Parent), Impact: n.Impact, ViaColumns: via})
	}
	for _, e := range v.Exposures {
		o := IncidentExposureOut{Node: e.Node, ID: e.ID, Name: e.Name, Type: e.Type, URL: optStr(e.URL)}
		if e.Node == "consumer" {
			n := e.Consumptions7d
			o.Framework, o.Consumptions7d, o.LastDecision, o.LastConsumedAt = optStr(e.Framework), &n, optStr(e.LastDecision), e.LastConsumedAt
		}
		out.Exposures = append(out.Exposures, o)
	}
	return out
}

func (s *Server) handleIssueImpact(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Incidents.IssueImpact(r.Context(), in.Path("issue_id"))
	s.reply(w, r, err, func() any { return toBlastOut(res) })
}

func toIncidentOut(v incident.View) IncidentOut {
	return IncidentOut{ID: v.ID, Status: v.Status, Title: v.Title, Severity: v.Severity, RootDatasetID: v.RootDatasetID,
		RootDatasetName: v.RootDatasetName, IssueIDs: v.IssueIDs, DatasetIDs: v.DatasetIDs, ScanID: v.ScanID, CreatedAt: v.CreatedAt,
		UpdatedAt: v.UpdatedAt, ResolvedAt: v.ResolvedAt, BlastRadiusOut: toBlastOut(v.Impact), ChangedBy: toChangeRuns(v.ChangedBy)}
}

func toChangeRuns(rs []incident.ChangeRun) []IncidentChangeRunOut {
	out := make([]IncidentChangeRunOut, 0, len(rs))
	for _, r := range rs {
		out = append(out, IncidentChangeRunOut{ID: r.ID, Orchestrator: r.Orchestrator, Pipeline: r.Pipeline, RunID: r.RunID, Status: r.Status,
			StartedAt: r.StartedAt, EndedAt: r.EndedAt, DatasetID: r.DatasetID})
	}
	return out
}

func (s *Server) handleIncidentList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Incidents.Incidents(r.Context(), incident.Filter{Status: in.String("status"), Severity: in.String("severity"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]IncidentOut, 0, len(res.Items))
	for _, v := range res.Items {
		out = append(out, toIncidentOut(v))
	}
	list(w, res.Total, out)
}

func (s *Server) handleIncidentGet(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Incidents.Incident(r.Context(), in.Path("incident_id"))
	s.reply(w, r, err, func() any { return toIncidentOut(res) })
}

func toKnowledgeNodes(ns []lineage.KNode) []KnowledgeNodeOut {
	out := make([]KnowledgeNodeOut, 0, len(ns))
	for _, n := range ns {
		o := KnowledgeNodeOut{ID: n.ID, Kind: string(n.Kind), Restricted: n.Restricted, Props: n.Props}
		if !n.Restricted {
			name := n.Name
			o.Name = &name
		}
		out = append(out, o)
	}
	return out
}

func toKnowledgeEdges(es []lineage.KEdge) []KnowledgeEdgeOut {
	out := make([]KnowledgeEdgeOut, 0, len(es))
	for _, e := range es {
		out = append(out, KnowledgeEdgeOut{Source: e.Source, Target: e.Target, Kind: e.Kind, LineageKind: optStr(string(e.LineageKind))})
	}
	return out
}

func (s *Server) handleKnowledgeGraph(w http.ResponseWriter, r *http.Request, in *input) {
	o := lineage.KnowledgeOpts{Focus: in.String("focus"), Hops: in.OptInt("hops")}
	if k := in.String("kinds"); k != nil {
		o.Kinds = strings.Split(*k, ",")
	}
	g, err := s.deps.Lineage.KnowledgeGraph(r.Context(), o)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, KnowledgeGraphOut{Focus: g.Focus, Hops: g.Hops, Nodes: toKnowledgeNodes(g.Nodes), Edges: toKnowledgeEdges(g.Edges),
		Truncated: g.Truncated, Stats: KnowledgeStatsOut{Nodes: g.Stats.Nodes, Edges: g.Stats.Edges, ByNodeKind: g.Stats.ByNodeKind, ByEdgeKind: g.Stats.ByEdgeKind}})
}

func toSnapshotOut(sn lineage.Snapshot) SnapshotOut {
	return SnapshotOut{ID: sn.ID, Trigger: sn.Trigger, ScanID: sn.ScanID, Digest: sn.Digest, NodesCount: sn.NodesCount,
		EdgesCount: sn.EdgesCount, CreatedAt: sn.CreatedAt}
}

func (s *Server) handleSnapshotHistory(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Lineage.SnapshotHistory(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]SnapshotOut, 0, len(res.Items))
	for _, sn := range res.Items {
		out = append(out, toSnapshotOut(sn))
	}
	list(w, res.Total, out)
}

func (s *Server) handleSnapshotDiff(w http.ResponseWriter, r *http.Request, in *input) {
	d, err := s.deps.Lineage.Diff(r.Context(), *in.String("from"), in.String("to"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := GraphDiffOut{From: toSnapshotOut(d.From), To: toSnapshotOut(d.To), AddedNodes: toKnowledgeNodes(d.AddedNodes),
		RemovedNodes: toKnowledgeNodes(d.RemovedNodes), RenamedNodes: make([]RenamedNodeOut, 0, len(d.RenamedNodes)),
		AddedEdges: toKnowledgeEdges(d.AddedEdges), RemovedEdges: toKnowledgeEdges(d.RemovedEdges),
		ByKind: map[string]DiffCountOut{}, Truncated: d.Truncated}
	for _, n := range d.RenamedNodes {
		out.RenamedNodes = append(out.RenamedNodes, RenamedNodeOut{ID: n.ID, Kind: string(n.Kind), From: n.From, To: n.To})
	}
	for k, c := range d.ByKind {
		out.ByKind[k] = DiffCountOut{Added: c.Added, Removed: c.Removed, Renamed: c.Renamed}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleSnapshotTake(w http.ResponseWriter, r *http.Request, _ *input) {
	sn, created, err := s.deps.Lineage.TakeSnapshot(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toSnapshotOut(sn))
}

func (s *Server) handleDeclareEdge(w http.ResponseWriter, r *http.Request, in *input) {
	var body DeclaredEdgeIn
	err := in.Decode(&body, 0)
	if err == nil {
		err = required(present("source_id", body.SourceID != ""), present("target_id", body.TargetID != ""))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(body.ColumnMap) > 500 {
		s.writeError(w, r, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": 500}, "column_map")))
		return
	}
	e := lineage.DeclaredEdge{SourceID: body.SourceID, TargetID: body.TargetID}
	for _, c := range body.ColumnMap {
		e.Columns = append(e.Columns, lineage.ColumnPair{From: c.From, To: c.To, Direct: c.Direct})
	}
	if err := s.deps.Lineage.DeclareEdge(r.Context(), e); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleDeleteEdge(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Lineage.DeleteDeclaredEdge(r.Context(), *in.String("source_id"), *in.String("target_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func toExposureRecordOut(e lineage.Exposure) ExposureOut {
	via := e.DatasetIDs
	if via == nil {
		via = []string{}
	}
	return ExposureOut{ID: e.ID, Name: e.Name, Type: e.Type, URL: optStr(e.URL), Owner: optStr(e.Owner), Origin: e.Origin, Via: via}
}

func (s *Server) handleExposureList(w http.ResponseWriter, r *http.Request, _ *input) {
	res, err := s.deps.Lineage.Exposures(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ExposureOut, 0, len(res))
	for _, e := range res {
		out = append(out, toExposureRecordOut(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDeclareExposure(w http.ResponseWriter, r *http.Request, in *input) {
	var body ExposureIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.deps.Lineage.DeclareExposure(r.Context(), lineage.ExposureInput{Name: body.Name, Type: body.Type, URL: body.URL,
		Owner: body.Owner, DatasetIDs: body.DatasetIDs})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toExposureRecordOut(e))
}

// readRaw reads a JSON body without decoding it; the edge (checkBody) has bounded it
// by the operation's MaxBody and refused bad text in it already.
func readRaw(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
		}
		return nil, vigia.Invalid(vigia.Field("json_invalid", nil))
	}
	if len(b) == 0 {
		return nil, vigia.Invalid(vigia.Field("missing", nil))
	}
	if !json.Valid(b) {
		return nil, vigia.Invalid(vigia.Field("json_invalid", nil))
	}
	return b, nil
}

func (s *Server) toOpenLineageOut(r *http.Request, res lineage.OpenLineageResult) OpenLineageOut {
	out := OpenLineageOut{Events: res.Events, Accepted: res.Accepted, Refused: make([]RefusedEventOut, 0, len(res.Refused)),
		Edges: res.Edges, Destinations: res.Destinations, Unmatched: res.Unmatched, UnmatchedNames: res.UnmatchedNames}
	for _, rf := range res.Refused {
		out.Refused = append(out.Refused, RefusedEventOut{Index: rf.Index, Detail: s.validationItems(r, rf.Fields)})
	}
	return out
}

func toImportOut(res lineage.ImportResult) ImportResultOut {
	names := res.UnmatchedNames
	if names == nil {
		names = []string{}
	}
	return ImportResultOut{Edges: res.Edges, Exposures: res.Exposures, Destinations: res.Destinations, Unmatched: res.Unmatched,
		UnmatchedNames: names, Replaced: res.Replaced}
}

// maxDBTRunResultsBody bounds the body of POST /integrations/dbt/run-results.
const maxDBTRunResultsBody = 32 << 20

// maxOpenLineageBody bounds the body of POST /lineage/openlineage (one event or a batch).
const maxOpenLineageBody = 16 << 20

func (s *Server) handleOpenLineage(w http.ResponseWriter, r *http.Request, _ *input) {
	events, single, err := readOpenLineage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	batch, err := ingest.DecodeOpenLineage(events, single)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.deps.Lineage.OpenLineageEvents(r.Context(), batch)
	s.reply(w, r, err, func() any { return s.toOpenLineageOut(r, res) })
}

// readOpenLineage reads one event (a JSON object), a batch (a JSON array of events), or
// NDJSON (one event a line, with Content-Type application/x-ndjson or application/jsonl).
func readOpenLineage(r *http.Request) ([]json.RawMessage, bool, error) {
	b, err := io.ReadAll(r.Body) // bounded by the operation's MaxBody at the edge
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, false, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
		}
		return nil, false, vigia.Invalid(vigia.Field("json_invalid", nil))
	}
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	if ct == "application/x-ndjson" || ct == "application/jsonl" || ct == "application/json-lines" {
		var events []json.RawMessage
		for i, line := range bytes.Split(b, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if len(events) == ingest.MaxOpenLineageBatch {
				return nil, false, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": ingest.MaxOpenLineageBatch}))
			}
			if !json.Valid(line) {
				return nil, false, vigia.Invalid(vigia.Field("json_invalid", nil, strconv.Itoa(i)))
			}
			events = append(events, line)
		}
		if len(events) == 0 {
			return nil, false, vigia.Invalid(vigia.Field("missing", nil))
		}
		return events, false, nil
	}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return nil, false, vigia.Invalid(vigia.Field("missing", nil))
	case !json.Valid(b):
		return nil, false, vigia.Invalid(vigia.Field("json_invalid", nil))
	case b[0] == '[':
		var events []json.RawMessage
		if err := json.Unmarshal(b, &events); err != nil {
			return nil, false, vigia.Invalid(vigia.Field("json_invalid", nil))
		}
		if len(events) > ingest.MaxOpenLineageBatch {
			return nil, false, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": ingest.MaxOpenLineageBatch}))
		}
		return events, false, nil
	}
	return []json.RawMessage{b}, true, nil
}

// OpenLineageOut says what one event or a batch changed.
type OpenLineageOut struct {
	Events         int               `json:"events" doc:"Events in the body"`
	Accepted       int               `json:"accepted" doc:"Events read (a failed or aborted run, or a dataset event without columnLineage, is read and changes nothing)"`
	Refused        []RefusedEventOut `json:"refused" doc:"Events of a batch that were not read, by index, with why; a single refused event answers 422 instead"`
	Edges          int               `json:"edges" doc:"openlineage edges the jobs of the accepted events now give"`
	Exposures      int               `json:"exposures" doc:"Always 0 (kept for clients of the single-event answer)"`
	Destinations   int               `json:"destinations" doc:"Outputs that are no dataset of the workspace: destinations outside the warehouse"`
	Unmatched      int               `json:"unmatched" doc:"Inputs that are no dataset of the workspace: another server (namespace), another database, or a table Vigia does not watch"`
	UnmatchedNames []string          `json:"unmatched_names" doc:"namespace/name of those inputs (at most 100)"`
}

// RefusedEventOut is a refused event of a batch: its index and the 422 items.
type RefusedEventOut struct {
	Index  int              `json:"index"`
	Detail []ValidationItem `json:"detail"`
}

func (s *Server) handleDBTRunResults(w http.ResponseWriter, r *http.Request, in *input) {
	b, err := readRaw(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var body struct {
		RunResults json.RawMessage `json:"run_results"`
		Manifest   json.RawMessage `json:"manifest"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		s.writeError(w, r, vigia.Invalid(vigia.Field("json_invalid", nil)))
		return
	}
	run, err := ingest.DecodeDBTRunResults(body.RunResults)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var manifest *ingest.DBTManifest
	if len(body.Manifest) > 0 {
		// The permission first: a manifest the caller may not import is not parsed.
		if err := s.deps.Lineage.MayImportDBT(r.Context()); err != nil {
			s.writeError(w, r, err)
			return
		}
		m, err := ingest.DecodeDBTManifest(body.Manifest)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		manifest = &m
	}
	replace := in.Bool("replace")
	res, err := s.deps.Lineage.DBTRunResults(r.Context(), run, manifest, lineage.ImportOptions{Replace: replace != nil && *replace})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := DBTRunOut{InvocationID: res.InvocationID, Results: res.Results, ByStatus: res.ByStatus,
		Tests: DBTTestsOut{Unmatched: res.UnmatchedTests}}
	if len(res.Tests) > 0 {
		tests := make([]rule.DBTTest, 0, len(res.Tests))
		for _, t := range res.Tests {
			tests = append(tests, rule.DBTTest{UniqueID: t.UniqueID, DatasetID: t.DatasetID, TestName: t.TestName, Column: t.Column,
				Kwargs: t.Kwargs, RefDatasetID: t.RefDatasetID, Status: t.Status, Failures: t.Failures})
		}
		sum, err := s.deps.Workflow.Rules.RecordDBTTests(r.Context(), run.InvocationID, tests)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Tests.Recorded, out.Tests.IssuesOpened, out.Tests.IssuesResolved = sum.Recorded, sum.IssuesOpened, sum.IssuesResolved
	}
	out.Models.Unmatched = res.UnmatchedModels
	if len(res.Models) > 0 {
		models := make([]orchestrator.DBTModelRun, 0, len(res.Models))
		for _, m := range res.Models {
			models = append(models, orchestrator.DBTModelRun{UniqueID: m.UniqueID, DatasetID: m.DatasetID, Status: m.Status,
				StartedAt: m.StartedAt, EndedAt: m.EndedAt})
		}
		n, err := s.deps.Orchestrators.RecordDBTModels(r.Context(), run.InvocationID, models)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Models.Recorded = n
		out.Models.Unmatched += len(models) - n
	}
	if res.Lineage != nil {
		l := toImportOut(*res.Lineage)
		out.Lineage = &l
	}
	writeJSON(w, http.StatusOK, out)
}

func toSuggestionOut(sg product.DomainSuggestion) DomainSuggestionOut {
	o := DomainSuggestionOut{DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, DomainID: optStr(sg.DomainID),
		DomainName: optStr(sg.DomainName), Votes: sg.Votes, TotalLinks: sg.TotalLinks, ViaColumns: sg.ViaColumns,
		EdgeKinds: []string{}, InferredOnly: sg.InferredOnly, Signature: optStr(sg.Signature), Candidates: []DomainVoteOut{}}
	if o.ViaColumns == nil {
		o.ViaColumns = []string{}
	}
	for _, k := range sg.EdgeKinds {
		o.EdgeKinds = append(o.EdgeKinds, string(k))
	}
	for _, c := range sg.Candidates {
		o.Candidates = append(o.Candidates, DomainVoteOut{DomainID: c.DomainID, DomainName: c.DomainName, Votes: c.Votes})
	}
	return o
}

func (s *Server) handleDomainSuggestions(w http.ResponseWriter, r *http.Request, _ *input) {
	res, err := s.deps.Products.SuggestDomains(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := DomainSuggestionsOut{HasLineage: res.HasLineage, Suggestions: make([]DomainSuggestionOut, 0, len(res.Suggestions)),
		Ambiguous: make([]DomainSuggestionOut, 0, len(res.Ambiguous))}
	for _, sg := range res.Suggestions {
		out.Suggestions = append(out.Suggestions, toSuggestionOut(sg))
	}
	for _, sg := range res.Ambiguous {
		out.Ambiguous = append(out.Ambiguous, toSuggestionOut(sg))
	}
	writeJSON(w, http.StatusOK, out)
}
