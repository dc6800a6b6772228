package neo4jgraph

// Every Cypher statement the backend sends is a named constant in this file, and
// nothing else in the package builds Cypher text: cypher_test.go validates each
// constant here with Neo4j's own Cypher language library (syntax, semantics,
// deprecations for Neo4j 5) and checks that every $parameter a constant uses is
// passed by its call sites with a type the driver maps as intended. The one fragment
// (edgeColumns) is joined at compile time, so the constants are whole statements.
//
// Values never enter the text: workspace ids, dataset ids, names and column maps all
// travel as parameters.

// Schema, created by New at start with IF NOT EXISTS, so starting again is a no-op.
const (
	// cypherConstraintNodeKey makes (workspace_id, id) unique on :VigiaNode. Its
	// backing index serves every lookup by id: the anchors of cypherNeighboursDown,
	// cypherNeighboursUp, cypherDeleteNodes and cypherDeleteEdges, and the MERGEs of
	// cypherUpsertNodes and cypherUpsertEdges (without it MERGE scans every node and
	// concurrent MERGEs could create duplicates).
	cypherConstraintNodeKey = `CREATE CONSTRAINT vigia_node_unique IF NOT EXISTS
FOR (n:VigiaNode) REQUIRE (n.workspace_id, n.id) IS UNIQUE`

	// cypherIndexWorkspace serves the whole-workspace scans: cypherExportNodes,
	// cypherExportEdges and cypherClearBatch.
	cypherIndexWorkspace = `CREATE INDEX vigia_node_workspace IF NOT EXISTS
FOR (n:VigiaNode) ON (n.workspace_id)`
)

// edgeColumns is the projection shared by the statements that return edges; a is the
// source node, r the :FEEDS relationship, b the target node.
const edgeColumns = `a.id AS source, b.id AS target, r.kind AS kind, r.origin AS origin,
  r.column_map AS column_map, r.column_level AS column_level, r.linking_column AS linking_column`

// Reads.
const (
	// cypherNeighboursDown returns the edges leaving any of $ids, at most $limit rows
	// (the caller asks for one more than its cap to tell a cut from a fit).
	cypherNeighboursDown = `UNWIND $ids AS id
MATCH (a:VigiaNode {workspace_id: $ws, id: id})-[r:FEEDS]->(b:VigiaNode)
RETURN ` + edgeColumns + `
LIMIT $limit`

	// cypherNeighboursUp returns the edges entering any of $ids, at most $limit rows.
	cypherNeighboursUp = `UNWIND $ids AS id
MATCH (a:VigiaNode)-[r:FEEDS]->(b:VigiaNode {workspace_id: $ws, id: id})
RETURN ` + edgeColumns + `
LIMIT $limit`

	// cypherExportNodes returns every node of the workspace.
	cypherExportNodes = `MATCH (n:VigiaNode {workspace_id: $ws})
RETURN n.id AS id, n.kind AS kind, n.name AS name, n.type AS type
ORDER BY id`

	// cypherExportEdges returns every edge of the workspace.
	cypherExportEdges = `MATCH (a:VigiaNode {workspace_id: $ws})-[r:FEEDS]->(b:VigiaNode)
RETURN ` + edgeColumns + `
ORDER BY source, target, kind`
)

// Writes. Each is one UNWIND over a list parameter, so a batch is one round trip.
const (
	// cypherDeleteNodes removes nodes (and their edges) by id.
	cypherDeleteNodes = `UNWIND $ids AS id
MATCH (n:VigiaNode {workspace_id: $ws, id: id})
DETACH DELETE n`

	// cypherDeleteEdges removes edges by (source, target, kind).
	cypherDeleteEdges = `UNWIND $keys AS k
MATCH (:VigiaNode {workspace_id: $ws, id: k.source})-[r:FEEDS {kind: k.kind}]->(:VigiaNode {workspace_id: $ws, id: k.target})
DELETE r`

	// cypherUpsertNodes creates or updates nodes.
	cypherUpsertNodes = `UNWIND $nodes AS n
MERGE (x:VigiaNode {workspace_id: $ws, id: n.id})
SET x.kind = n.kind, x.name = n.name, x.type = n.type`

	// cypherUpsertEdges creates or updates edges, creating bare endpoint nodes when
	// the edge arrives before them.
	cypherUpsertEdges = `UNWIND $edges AS e
MERGE (a:VigiaNode {workspace_id: $ws, id: e.source})
  ON CREATE SET a.kind = e.source_kind, a.name = '', a.type = ''
MERGE (b:VigiaNode {workspace_id: $ws, id: e.target})
  ON CREATE SET b.kind = e.target_kind, b.name = '', b.type = ''
MERGE (a)-[r:FEEDS {kind: e.kind}]->(b)
SET r.origin = e.origin, r.column_map = e.column_map, r.column_level = e.column_level,
  r.linking_column = e.linking_column`

	// cypherClearBatch removes at most $batch nodes of the workspace (with their
	// edges) and returns how many it removed; Clear repeats it until none is left, so
	// clearing a large workspace never holds one huge transaction.
	cypherClearBatch = `MATCH (n:VigiaNode {workspace_id: $ws})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted`
)
