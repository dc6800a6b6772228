package lineage

// ViewParser is what lineage needs from a SQL parser: the lineage of one view
// definition in a dialect (postgres, mysql, sqlite). The lineage/sqllineage adapter
// implements it with the dialects' real parsers; app wires it in, so the features and
// transports never link a parser. Errors never carry the SQL text.
type ViewParser interface {
	Analyze(dialect, sql string, cat ViewCatalog) (ViewLineage, error)
}

// ViewCatalog is what the parser may know of the connection a view belongs to: the
// columns of its tables and views in order by "schema.table", and the view's own
// schema, where an unqualified name is looked up first.
type ViewCatalog struct {
	Tables map[string][]string
	Schema string
}

// ViewLineage is the lineage of one view definition.
type ViewLineage struct {
	// Columns are the view's output columns in order, as the parser names them.
	Columns []string
	// Edges has one entry per table or view read, in order of appearance, with the
	// column map it carries into the view (empty when it only filters or joins).
	Edges []ViewEdge
	// Unresolved holds the parser's stable reason codes for what it could not attribute.
	Unresolved []string
	// ColumnLevel is false when no column map could be built at all.
	ColumnLevel bool
}

// ViewEdge is one table or view a view reads, as the SQL names it (Schema "" when
// unqualified), with its column map.
type ViewEdge struct {
	Source  TableName
	Columns []ColumnPair
}
