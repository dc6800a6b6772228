package lineage

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

// Origins of the edges the scan derives; they scope what a later scan replaces.
const (
	originViewSQL = "view_sql:"
	originKeys    = "keys:"
)

// AfterScan runs at the end of each scan of a connection: it re-derives the parsed
// edges from the view definitions discovery captured and the inferred edges from names
// and keys, projects them, groups the workspace's open issues into incidents and takes
// a snapshot when the graph changed. Each step's failure is returned after the
// others ran, so one bad view never stops incidents.
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
	parsed := s.ParseViews(cat)
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
	if err := s.GroupIncidents(ctx, workspaceID, scanID); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := s.snapshot(ctx, workspaceID, "scan", &scanID); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseViews turns the view definitions of a connection into parsed edges: one per
// table or view each view reads, with its column map. A definition the parser rejects
// gives no edge (and is logged without its SQL); what the walker could not attribute
// is kept in the edge's notes, and a view without any column map has ColumnLevel false.
func (s *Service) ParseViews(cat ConnectionCatalog) []RecordEdge {
	dialect := sqllineage.Dialect(cat.Dialect)
	mc := sqllineage.MapCatalog{}
	for _, d := range cat.Datasets {
		cols := make([]string, 0, len(d.Columns))
		for _, c := range d.Columns {
			cols = append(cols, c.Name)
		}
		mc[datasetName(d.Schema, d.Table)] = cols
	}
	var out []RecordEdge
	for _, v := range cat.Datasets {
		if v.ViewDefinition == "" {
			continue
		}
		res, err := sqllineage.Analyze(dialect, v.ViewDefinition, mc)
		if err != nil {
			s.log.Warn("view definition not parsed", "dataset_id", v.ID, "dialect", cat.Dialect, "cause", err.Error())
			continue
		}
		for _, e := range res.Edges() {
			src, ok := resolveTable(cat, e.Source, v.Schema)
			if !ok || src == v.ID {
				continue
			}
			re := RecordEdge{Edge: Edge{Source: src, Target: v.ID, ColumnLevel: res.ColumnLevel, Columns: []ColumnPair{}}, Notes: res.Unresolved}
			for _, p := range e.Columns {
				re.Columns = append(re.Columns, ColumnPair{From: p.From, To: p.To, Direct: p.Direct})
			}
			out = append(out, re)
		}
	}
	return out
}

// resolveTable finds the dataset a view's SQL names: schema and name as written
// (without regard to case), else the view's own schema or public for an unqualified
// name, else the one table of that name in the connection.
func resolveTable(cat ConnectionCatalog, t sqllineage.TableRef, viewSchema string) (string, bool) {
	match := func(schema string) (string, bool) {
		for _, d := range cat.Datasets {
			if strings.EqualFold(d.Schema, schema) && strings.EqualFold(d.Table, t.Name) {
				return d.ID, true
			}
		}
		return "", false
	}
	if t.Schema != "" {
		return match(t.Schema)
	}
	if id, ok := match(viewSchema); ok {
		return id, true
	}
	if id, ok := match("public"); ok {
		return id, true
	}
	var found []string
	for _, d := range cat.Datasets {
		if strings.EqualFold(d.Table, t.Name) {
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
