package lineage

import (
	"context"
	"errors"
	"sort"
	"strings"
)

// Origins of the edges the scan derives; they scope what a later scan replaces.
const (
	originViewSQL = "view_sql:"
	originKeys    = "keys:"
)

// AfterScan runs at the end of each scan of a connection: it re-derives the parsed
// edges from the view definitions discovery captured and the inferred edges from names
// and keys, projects them and takes a snapshot when the graph changed. Each step's
// failure is returned after the others ran. It is the first consumer of a succeeded
// scan's event (scan.Service.AfterScan); incidents are grouped after it (package
// incident, the next consumer).
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	cat, err := s.store.ConnectionDatasets(ctx, connectionID)
	if err != nil {
		return err
	}
	dropped, err := s.store.DroppedDatasets(ctx, connectionID)
	if err != nil {
		return err
	}
	// Only dropped datasets that still have edges matter; older drops are gone already.
	var stale []RecordEdge
	if len(dropped) > 0 {
		if stale, err = s.store.EdgesTouching(ctx, workspaceID, dropped); err != nil {
			return err
		}
		if len(stale) == 0 {
			dropped = nil
		}
	}
	parsed, viewNotes := s.ParseViews(cat)
	inferred := InferKeys(cat)
	nodes := make([]Node, 0, len(cat.Datasets))
	for _, d := range cat.Datasets {
		nodes = append(nodes, Node{ID: d.ID, Kind: NodeDataset, Name: datasetName(d.Schema, d.Table)})
	}
	var errs []error
	var changed bool
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		c1, err := s.replaceEdges(ctx, workspaceID, KindParsed, originViewSQL+connectionID, parsed, nodes, dropped)
		if err != nil {
			return err
		}
		c2, err := s.replaceEdges(ctx, workspaceID, KindInferred, originKeys+connectionID, inferred, nil, nil)
		if err != nil {
			return err
		}
		if err := s.store.SetLineageNotes(ctx, connectionID, viewNotes); err != nil {
			return err
		}
		if len(stale) > 0 {
			// Edges of other origins that touch a dropped dataset go with it.
			keys := make([]EdgeKey, 0, len(stale))
			for _, e := range stale {
				keys = append(keys, e.Key())
			}
			if err := s.store.DeleteEdges(ctx, workspaceID, keys); err != nil {
				return err
			}
			changed = true
			if err := s.emit(ctx, workspaceID, Change{DeleteEdges: keys}); err != nil {
				return err
			}
		}
		changed = changed || c1 || c2
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	s.projectNow(ctx, workspaceID)
	if _, _, err := s.snapshot(ctx, workspaceID, "scan", &scanID); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Reason codes of a view's own lineage beyond the parser's (ViewLineage.Unresolved).
const (
	// ReasonUnparsable: the dialect's parser rejected the view's definition; its table
	// edges come from the dependency catalog where the source keeps one.
	ReasonUnparsable = "unparsable"
	// ReasonNotInDependencyCatalog: the SQL named a table the source's dependency
	// catalog says the view does not read; no edge was made to it.
	ReasonNotInDependencyCatalog = "not_in_dependency_catalog"
	// ReasonNoColumnMap: the dependency catalog records a table the SQL walker did not
	// find; its edge is table level only.
	ReasonNoColumnMap = "no_column_map"
)

// ParseViews turns the view definitions of a connection into parsed edges: one per
// table or view each view reads, with its column map, and the reason codes of each
// view's own lineage (by dataset id) for the views that have some.
//
// Names resolve as the database resolved them: a qualified name is that schema's
// table; an unqualified one is the view's own schema (Postgres definitions are read with
// an empty search path, so every table name comes qualified; MySQL/MariaDB qualify with
// the database; SQLite has one schema), never a same-named table elsewhere. Where the
// source keeps a dependency catalog (pg_depend, VIEW_TABLE_USAGE) it decides the table
// edges: a table the SQL names but the catalog does not is left out, and one the catalog
// records but the walker missed (SQL it could not parse or attribute) is a table-level
// edge. Column maps come from the parser, with the view's columns and the source
// columns spelled as the database reports them.
func (s *Service) ParseViews(cat ConnectionCatalog) ([]RecordEdge, map[string][]string) {
	fold := cat.Dialect != "postgres"
	tables := map[string][]string{}
	byID := make(map[string]CatalogDataset, len(cat.Datasets))
	for _, d := range cat.Datasets {
		cols := make([]string, 0, len(d.Columns))
		for _, c := range d.Columns {
			cols = append(cols, c.Name)
		}
		tables[datasetName(d.Schema, d.Table)] = cols
		byID[d.ID] = d
	}
	// The exact names once, not a walk of the catalog per view reference (1,000 views
	// over 10,000 tables).
	exact := make(map[[2]string]string, len(cat.Datasets))
	for i := len(cat.Datasets) - 1; i >= 0; i-- {
		d := cat.Datasets[i]
		exact[[2]string{d.Schema, d.Table}] = d.ID
	}
	var out []RecordEdge
	notes := map[string][]string{}
	for _, v := range cat.Datasets {
		if v.ViewDefinition == "" && !v.DependsOnKnown {
			continue
		}
		var viewNotes []string
		parsed := map[string]*RecordEdge{}
		var order []string
		res, err := s.views.Analyze(cat.Dialect, v.ViewDefinition, ViewCatalog{Tables: tables, Schema: v.Schema})
		switch {
		case v.ViewDefinition == "":
		case err != nil:
			s.log.Warn("view definition not parsed", "dataset_id", v.ID, "dialect", cat.Dialect, "cause", err.Error())
			viewNotes = append(viewNotes, ReasonUnparsable)
		default:
			viewNotes = append(viewNotes, res.Unresolved...)
			outNames := viewColumnNames(res, v)
			for _, e := range res.Edges {
				src, ok := resolveTable(cat, exact, e.Source, v.Schema, fold)
				if !ok || src == v.ID {
					continue
				}
				re, seen := parsed[src]
				if !seen {
					re = &RecordEdge{Edge: Edge{Source: src, Target: v.ID, ColumnLevel: res.ColumnLevel, Columns: []ColumnPair{}}, Notes: res.Unresolved}
					parsed[src] = re
					order = append(order, src)
				}
				for _, p := range e.Columns {
					re.Columns = append(re.Columns, ColumnPair{From: columnSpelling(byID[src], p.From), To: outNames[p.To], Direct: p.Direct})
				}
			}
		}
		if v.DependsOnKnown {
			deps := map[string]bool{}
			var depOrder []string
			for _, d := range v.DependsOn {
				id, ok := resolveTable(cat, exact, d, v.Schema, fold)
				if ok && id != v.ID && !deps[id] {
					deps[id] = true
					depOrder = append(depOrder, id)
				}
			}
			for _, id := range order {
				if !deps[id] {
					viewNotes = append(viewNotes, ReasonNotInDependencyCatalog)
				}
			}
			for _, id := range depOrder {
				if re, ok := parsed[id]; ok {
					out = append(out, *re)
					continue
				}
				out = append(out, RecordEdge{Edge: Edge{Source: id, Target: v.ID, Columns: []ColumnPair{}},
					Notes: dedupe(append(append([]string{}, viewNotes...), ReasonNoColumnMap))})
			}
		} else {
			for _, id := range order {
				out = append(out, *parsed[id])
			}
		}
		if len(viewNotes) > 0 {
			notes[v.ID] = dedupe(viewNotes)
		}
	}
	return out, notes
}

// viewColumnNames maps the parser's output column names to the view's columns as the
// database reports them, by position when the counts agree (SQLite definitions go
// through the Postgres parser, which folds unquoted names to lower case), else to
// themselves.
func viewColumnNames(res ViewLineage, v CatalogDataset) map[string]string {
	out := make(map[string]string, len(res.Columns))
	same := len(res.Columns) == len(v.Columns)
	for i, c := range res.Columns {
		out[c] = c
		if same {
			out[c] = v.Columns[i].Name
		}
	}
	return out
}

// columnSpelling is a source column as its table spells it: the parser may have folded
// its case (SQLite definitions go through the Postgres parser, and MySQL and SQLite
// compare column names without regard to case). An exact name wins; else the one column
// of that name ignoring case.
func columnSpelling(d CatalogDataset, name string) string {
	var found string
	n := 0
	for _, c := range d.Columns {
		if c.Name == name {
			return name
		}
		if strings.EqualFold(c.Name, name) {
			found = c.Name
			n++
		}
	}
	if n == 1 {
		return found
	}
	return name
}

// resolveTable finds the dataset a view's SQL (or its dependency catalog) names: the
// schema and name as written, else, for an unqualified name, the view's own schema.
// Where names compare without regard to case (fold: MySQL, SQLite) the exact spelling
// wins, then a unique match ignoring case; Postgres names compare exactly.
func resolveTable(cat ConnectionCatalog, exact map[[2]string]string, t TableName, viewSchema string, fold bool) (string, bool) {
	schema := t.Schema
	if schema == "" {
		schema = viewSchema
	}
	if id, ok := exact[[2]string{schema, t.Name}]; ok {
		return id, true
	}
	if !fold {
		return "", false
	}
	var found []string
	for _, d := range cat.Datasets {
		if strings.EqualFold(d.Schema, schema) && strings.EqualFold(d.Table, t.Name) {
			found = append(found, d.ID)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// InferKeys infers edges from names and keys within a connection: a column <x>_id of
// one table and a table named x (or its plural) keyed by id link the keyed table to
// the other, by the linking column. Such edges are kind inferred: kept apart, and
// inferred_only wherever they are the only evidence.
func InferKeys(cat ConnectionCatalog) []RecordEdge {
	type keyed struct {
		id  string
		key string
	}
	byName := map[string][]keyed{}
	for _, d := range cat.Datasets {
		for _, c := range d.Columns {
			if c.PrimaryKey && strings.EqualFold(c.Name, "id") {
				byName[strings.ToLower(d.Table)] = append(byName[strings.ToLower(d.Table)], keyed{d.ID, c.Name})
			}
		}
	}
	var out []RecordEdge
	for _, d := range cat.Datasets {
		for _, c := range d.Columns {
			name := strings.ToLower(c.Name)
			if c.PrimaryKey || !strings.HasSuffix(name, "_id") || len(name) <= 3 {
				continue
			}
			x := strings.TrimSuffix(name, "_id")
			var cands []keyed
			for _, n := range []string{x, x + "s", x + "es", strings.TrimSuffix(x, "y") + "ies"} {
				cands = append(cands, byName[n]...)
			}
			if len(cands) != 1 || cands[0].id == d.ID {
				continue // none, or ambiguous: never guessed
			}
			out = append(out, RecordEdge{Edge: Edge{Source: cands[0].id, Target: d.ID, ColumnLevel: true, LinkingColumn: c.Name,
				Columns: []ColumnPair{{From: cands[0].key, To: c.Name, Direct: true}}}})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Target < out[j].Target
	})
	return out
}
