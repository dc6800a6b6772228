package sqllineage

import "github.com/vigia-data/vigia/lineage"

// Parser is the lineage.ViewParser adapter: it reads view definitions with the
// dialects' real parsers.
type Parser struct{}

// Analyze implements lineage.ViewParser: an unqualified table name is looked up in the
// view's own schema first, then as MapCatalog does.
func (Parser) Analyze(dialect, sql string, cat lineage.ViewCatalog) (lineage.ViewLineage, error) {
	res, err := Analyze(Dialect(dialect), sql, viewCatalog{mc: MapCatalog(cat.Tables), schema: cat.Schema})
	if err != nil {
		return lineage.ViewLineage{}, err
	}
	return viewLineage(res), nil
}

// AnalyzeDuckDB is Analyze for a DuckDB view whose SELECT DuckDB has already parsed:
// tree is what json_serialize_sql returned for it and viewCols the view's column list,
// if any. lineage/duckview, which runs DuckDB, calls it.
func (Parser) AnalyzeDuckDB(tree []byte, viewCols []string, cat lineage.ViewCatalog) (lineage.ViewLineage, error) {
	res, err := AnalyzeDuckDBTree(tree, viewCols, viewCatalog{mc: MapCatalog(cat.Tables), schema: cat.Schema})
	if err != nil {
		return lineage.ViewLineage{}, err
	}
	return viewLineage(res), nil
}

func viewLineage(res Result) lineage.ViewLineage {
	out := lineage.ViewLineage{Unresolved: res.Unresolved, ColumnLevel: res.ColumnLevel,
		Columns: make([]string, 0, len(res.Columns))}
	for _, c := range res.Columns {
		out.Columns = append(out.Columns, c.Name)
	}
	for _, e := range res.Edges() {
		le := lineage.ViewEdge{Source: lineage.TableName{Schema: e.Source.Schema, Name: e.Source.Name}}
		for _, p := range e.Columns {
			le.Columns = append(le.Columns, lineage.ColumnPair{From: p.From, To: p.To, Direct: p.Direct})
		}
		out.Edges = append(out.Edges, le)
	}
	return out
}

// viewCatalog serves the parser the columns of the connection's tables, reading an
// unqualified name as a table of the view's own schema.
type viewCatalog struct {
	mc     MapCatalog
	schema string
}

// Columns implements Catalog.
func (c viewCatalog) Columns(t TableRef) ([]string, bool) {
	if t.Schema == "" && c.schema != "" {
		if cols, ok := c.mc.Columns(TableRef{Schema: c.schema, Name: t.Name}); ok {
			return cols, true
		}
	}
	return c.mc.Columns(t)
}
