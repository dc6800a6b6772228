// Package lineage is Vigia's lineage and knowledge graph: the graph model, the small
// port every graph backend implements (batched neighbour expansion, node and edge
// upsert and delete, snapshot export), and everything written once above it —
// traversal, impact, shortest path and knowledge-graph focus with their caps, the
// masking of neighbours the caller cannot see, incidents and their blast radius,
// snapshots and diffs.
//
// Postgres holds the record (lineage_edges, lineage_exposures); every change adds a
// row to an outbox in the same transaction, and the projector applies the outbox to
// the backend (pggraph by default, neo4jgraph with NEO4J_URI).
package lineage

import (
	"context"
	"strings"
)

// EdgeKind is where a lineage edge comes from.
type EdgeKind string

// Edge kinds (contract: Lineage node).
const (
	KindParsed      EdgeKind = "parsed"
	KindDeclared    EdgeKind = "declared"
	KindDBT         EdgeKind = "dbt"
	KindOpenLineage EdgeKind = "openlineage"
	KindInferred    EdgeKind = "inferred"
)

// EdgeKinds lists the edge kinds.
func EdgeKinds() []EdgeKind {
	return []EdgeKind{KindParsed, KindDeclared, KindDBT, KindOpenLineage, KindInferred}
}

// NodeKind is the kind of a graph node.
type NodeKind string

// Node kinds of the knowledge graph; the lineage backend holds datasets and exposures.
const (
	NodeConnection NodeKind = "connection"
	NodeDataset    NodeKind = "dataset"
	NodeRule       NodeKind = "rule"
	NodeIssue      NodeKind = "issue"
	NodeSignal     NodeKind = "signal"
	NodeKBEntry    NodeKind = "kb_entry"
	NodeDomain     NodeKind = "domain"
	NodeExposure   NodeKind = "exposure"
	NodeMetric     NodeKind = "metric"
	NodeTerm       NodeKind = "term"
)

// NodeKinds lists every knowledge-graph node kind, valid in the kinds filter.
func NodeKinds() []NodeKind {
	return []NodeKind{NodeConnection, NodeDataset, NodeRule, NodeIssue, NodeSignal, NodeKBEntry, NodeDomain, NodeExposure, NodeMetric, NodeTerm}
}

// Knowledge-graph edge kinds.
const (
	RelFeeds      = "feeds"
	RelMemberOf   = "member_of"
	RelConsumedBy = "consumed_by"
	RelMeasures   = "measures"
	RelMeans      = "means"
	// RelReferences goes from a dataset to the dataset one of its declared foreign keys
	// references: a join path, not data flow (lineage is feeds).
	RelReferences = "references"
)

// ExposurePrefix starts the graph id of an exposure node.
const ExposurePrefix = "exposure:"

// ExposureNodeID is the graph id of an exposure.
func ExposureNodeID(id string) string { return ExposurePrefix + id }

// IsExposure reports whether a graph id names an exposure.
func IsExposure(nodeID string) bool { return strings.HasPrefix(nodeID, ExposurePrefix) }

// ExposureTypeDestination marks an exposure that is a destination outside the warehouse
// (a file, a bucket, another system an OpenLineage job writes to).
const ExposureTypeDestination = "destination"

// ExposureTypes are the declared exposure types.
var ExposureTypes = []string{"dashboard", "ml_model", "application", "notebook", "analysis", "report", ExposureTypeDestination}

// ColumnPair is one entry of an edge's column map: column From of the source flows into
// column To of the target (Direct: a plain copy).
type ColumnPair struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Direct bool   `json:"direct"`
}

// Node is a node of the lineage backend: a dataset or an exposure.
type Node struct {
	ID   string   `json:"id"`
	Kind NodeKind `json:"kind"`
	Name string   `json:"name"`
	// Type is an exposure's type (dashboard, ml_model, application, destination ...).
	Type string `json:"type,omitempty"`
}

// Edge is a lineage edge: data of Source flows into Target.
type Edge struct {
	Source  string       `json:"source"`
	Target  string       `json:"target"`
	Kind    EdgeKind     `json:"kind"`
	Origin  string       `json:"origin,omitempty"`
	Columns []ColumnPair `json:"columns,omitempty"`
	// ColumnLevel is false when the source could not give a column map (a view whose
	// SQL could not be attributed, a declared edge without columns).
	ColumnLevel bool `json:"column_level"`
	// LinkingColumn is the key column an inferred edge was found by.
	LinkingColumn string `json:"linking_column,omitempty"`
}

// Key identifies an edge.
func (e Edge) Key() EdgeKey { return EdgeKey{Source: e.Source, Target: e.Target, Kind: e.Kind} }

// EdgeKey identifies an edge in the backend.
type EdgeKey struct {
	Source string   `json:"source"`
	Target string   `json:"target"`
	Kind   EdgeKind `json:"kind"`
}

// Change is one outbox entry: what to upsert and delete in the backend. Deletes apply
// before upserts; deleting a node deletes its edges.
type Change struct {
	UpsertNodes []Node    `json:"upsert_nodes,omitempty"`
	DeleteNodes []string  `json:"delete_nodes,omitempty"`
	UpsertEdges []Edge    `json:"upsert_edges,omitempty"`
	DeleteEdges []EdgeKey `json:"delete_edges,omitempty"`
}

// Empty reports whether the change does nothing.
func (c Change) Empty() bool {
	return len(c.UpsertNodes)+len(c.DeleteNodes)+len(c.UpsertEdges)+len(c.DeleteEdges) == 0
}

// Direction of a traversal.
type Direction string

// Directions.
const (
	Upstream   Direction = "upstream"
	Downstream Direction = "downstream"
	Both       Direction = "both"
)

// Export is the whole projected graph of a workspace.
type Export struct {
	Nodes []Node
	Edges []Edge
}

// Graph is the port every lineage backend implements. Every method is scoped to one
// workspace; the backend knows nothing of visibility, caps or column semantics.
type Graph interface {
	// Neighbours returns, in one round trip, the edges leaving (Downstream) or entering
	// (Upstream) any of ids. Both is not accepted.
	Neighbours(ctx context.Context, workspaceID string, ids []string, dir Direction) ([]Edge, error)
	// Apply applies a change idempotently: deletes first, then upserts.
	Apply(ctx context.Context, workspaceID string, c Change) error
	// Export returns every node and edge of the workspace.
	Export(ctx context.Context, workspaceID string) (Export, error)
	// Clear removes every node and edge of the workspace (before a rebuild).
	Clear(ctx context.Context, workspaceID string) error
}
