package lineage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/vigia-data/vigia"
)

// Origins of declared and imported lineage.
const (
	OriginDeclaredAPI  = "api"
	OriginDeclaredYAML = "yaml"
	originDBT          = "dbt:"
	originOpenLineage  = "openlineage:"
)

// maxImportBytes bounds a manifest, an event or a declaration file.
const maxImportBytes = 32 << 20

// ImportResult says what an import or a declaration changed.
type ImportResult struct {
	Edges     int `json:"edges"`
	Exposures int `json:"exposures"`
	// Unmatched counts names that match no dataset of the workspace (or several).
	Unmatched int `json:"unmatched"`
	// Destinations counts outputs outside the warehouse, kept as destination exposures.
	Destinations int `json:"destinations"`
}

// DeclaredEdge is an edge declared by an admin: source and target dataset ids, and an
// optional column map.
type DeclaredEdge struct {
	SourceID string
	TargetID string
	Columns  []ColumnPair
}

// ExposureInput declares an exposure reading datasets.
type ExposureInput struct {
	Name       string
	Type       string
	URL        string
	Owner      string
	DatasetIDs []string
}

// DeclareEdge records a declared edge (admin session only). Returns KindForbidden for a
// token or a non-admin, KindNotFound for a dataset of another workspace, KindInvalid
// for an edge from a dataset to itself or a bad column map.
func (s *Service) DeclareEdge(ctx context.Context, in DeclaredEdge) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	if err := s.checkDatasets(ctx, []string{in.SourceID, in.TargetID}); err != nil {
		return err
	}
	if in.SourceID == in.TargetID {
		return vigia.Invalid(vigia.Field("value_error", nil, "body", "target_id"))
	}
	for i, c := range in.Columns {
		if strings.TrimSpace(c.From) == "" || strings.TrimSpace(c.To) == "" || len(c.From) > 200 || len(c.To) > 200 {
			return vigia.Invalid(vigia.Field("value_error", nil, "body", "columns", itoa(i)))
		}
	}
	e := RecordEdge{Edge: Edge{Source: in.SourceID, Target: in.TargetID, Kind: KindDeclared, Origin: OriginDeclaredAPI,
		Columns: in.Columns, ColumnLevel: len(in.Columns) > 0}}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpsertEdges(ctx, p.WorkspaceID, []RecordEdge{e}); err != nil {
			return err
		}
		return s.emit(ctx, p.WorkspaceID, Change{UpsertEdges: []Edge{e.Edge}})
	})
	if err != nil {
		return err
	}
	s.projectNow(ctx, p.WorkspaceID)
	return nil
}

// DeleteDeclaredEdge removes a declared edge (admin session only). Returns
// KindForbidden, or KindNotFound when no such declared edge exists.
func (s *Service) DeleteDeclaredEdge(ctx context.Context, sourceID, targetID string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	if !vigia.ValidID(sourceID) || !vigia.ValidID(targetID) {
		return vigia.NotFound()
	}
	k := EdgeKey{Source: sourceID, Target: targetID, Kind: KindDeclared}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		old, err := s.store.EdgesTouching(ctx, p.WorkspaceID, []string{sourceID})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(old, func(e RecordEdge) bool { return e.Key() == k }) {
			return vigia.NotFound()
		}
		if err := s.store.DeleteEdges(ctx, p.WorkspaceID, []EdgeKey{k}); err != nil {
			return err
		}
		return s.emit(ctx, p.WorkspaceID, Change{DeleteEdges: []EdgeKey{k}})
	})
	if err != nil {
		return err
	}
	s.projectNow(ctx, p.WorkspaceID)
	return nil
}

// DeclareExposure creates or replaces an exposure (by type and name) and the datasets
// it reads (admin session only). Returns KindForbidden, KindInvalid for a bad name or
// type, KindNotFound for a dataset of another workspace.
func (s *Service) DeclareExposure(ctx context.Context, in ExposureInput) (Exposure, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Exposure{}, err
	}
	if err := validExposure(in, "body"); err != nil {
		return Exposure{}, err
	}
	if err := s.checkDatasets(ctx, in.DatasetIDs); err != nil {
		return Exposure{}, err
	}
	var out Exposure
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.putExposure(ctx, p.WorkspaceID, "declared:"+OriginDeclaredAPI, KindDeclared, in)
		return err
	})
	if err != nil {
		return Exposure{}, err
	}
	s.projectNow(ctx, p.WorkspaceID)
	return out, nil
}

// putExposure upserts an exposure and replaces its edges, in the tx in ctx.
func (s *Service) putExposure(ctx context.Context, ws, origin string, kind EdgeKind, in ExposureInput) (Exposure, error) {
	e := Exposure{Name: in.Name, Type: in.Type, URL: in.URL, Owner: in.Owner, Origin: origin, DatasetIDs: dedupe(in.DatasetIDs)}
	id, err := s.store.UpsertExposure(ctx, ws, e)
	if err != nil {
		return Exposure{}, err
	}
	e.ID = id
	node := ExposureNodeID(id)
	var edges []RecordEdge
	for _, d := range e.DatasetIDs {
		edges = append(edges, RecordEdge{Edge: Edge{Source: d, Target: node}})
	}
	_, err = s.replaceEdges(ctx, ws, kind, origin+":"+id, edges,
		[]Node{{ID: node, Kind: NodeExposure, Name: e.Name, Type: e.Type}}, nil)
	return e, err
}

// dropExposures deletes exposures of an origin not in keep, with their edges.
func (s *Service) dropExposures(ctx context.Context, ws, origin string, kind EdgeKind, keep []string) error {
	gone, err := s.store.DeleteExposures(ctx, ws, origin, keep)
	if err != nil {
		return err
	}
	var nodes []string
	for _, id := range gone {
		if _, err := s.replaceEdges(ctx, ws, kind, origin+":"+id, nil, nil, nil); err != nil {
			return err
		}
		nodes = append(nodes, ExposureNodeID(id))
	}
	return s.emit(ctx, ws, Change{DeleteNodes: nodes})
}

// Exposures lists the workspace's exposures with the datasets they read that the
// caller can see.
func (s *Service) Exposures(ctx context.Context) ([]Exposure, error) {
	_, v, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	exps, err := s.store.ListExposures(ctx, v.WorkspaceID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range exps {
		ids = append(ids, e.DatasetIDs...)
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(ids), false)
	if err != nil {
		return nil, err
	}
	for i, e := range exps {
		// Datasets the caller cannot see are not named, not even by id.
		kept := []string{}
		for _, id := range e.DatasetIDs {
			if info[id].Visible {
				kept = append(kept, id)
			}
		}
		exps[i].DatasetIDs = kept
	}
	return exps, nil
}

func validExposure(in ExposureInput, loc ...string) error {
	name := strings.TrimSpace(in.Name)
	if name == "" || len([]rune(name)) > 200 {
		return vigia.Invalid(vigia.Field("string_too_long", map[string]any{"min_length": 1, "max_length": 200}, append(loc, "name")...))
	}
	if !slices.Contains(ExposureTypes, in.Type) {
		return vigia.Invalid(vigia.Field("enum", nil, append(loc, "type")...))
	}
	if len(in.URL) > 2000 || len(in.Owner) > 200 {
		return vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": 2000}, append(loc, "url")...))
	}
	if len(in.DatasetIDs) > 500 {
		return vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": 500}, append(loc, "dataset_ids")...))
	}
	return nil
}

// checkDatasets returns KindNotFound unless every id is a live dataset of the caller's
// workspace that the caller can see.
func (s *Service) checkDatasets(ctx context.Context, ids []string) error {
	_, v, err := principal(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !vigia.ValidID(id) {
			return vigia.NotFound()
		}
	}
	info, err := s.store.DatasetInfos(ctx, v, dedupe(ids), false)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if d, ok := info[id]; !ok || !d.Visible {
			return vigia.NotFound()
		}
	}
	return nil
}

// DeclarationFile is the YAML file `vigia lineage declare` loads. Datasets are named
// connection/schema.table (or by id).
//
//	edges:
//	  - from: warehouse/public.orders
//	    to: warehouse/analytics.orders_clean
//	    columns: [{from: amount, to: amount_eur}]
//	exposures:
//	  - name: Receita diária
//	    type: dashboard
//	    url: https://bi.example.pt/d/42
//	    owner: financas
//	    depends_on: [warehouse/analytics.revenue_daily]
type DeclarationFile struct {
	Edges []struct {
		From    string       `yaml:"from"`
		To      string       `yaml:"to"`
		Columns []ColumnPair `yaml:"columns"`
	} `yaml:"edges"`
	Exposures []struct {
		Name      string   `yaml:"name"`
		Type      string   `yaml:"type"`
		URL       string   `yaml:"url"`
		Owner     string   `yaml:"owner"`
		DependsOn []string `yaml:"depends_on"`
	} `yaml:"exposures"`
}

// LoadDeclarations replaces the workspace's file-declared edges and exposures with a
// YAML declaration (admin only: the command line acts as the workspace admin).
// Returns KindForbidden, KindInvalid for bad YAML (without echoing it) or a name that
// matches no dataset.
func (s *Service) LoadDeclarations(ctx context.Context, body []byte) (ImportResult, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return ImportResult{}, err
	}
	if len(body) > maxImportBytes {
		return ImportResult{}, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
	}
	var f DeclarationFile
	if err := yaml.UnmarshalWithOptions(body, &f, yaml.Strict()); err != nil {
		return ImportResult{}, vigia.Invalid(vigia.Field("value_error", nil, "file"))
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	var edges []RecordEdge
	for i, e := range f.Edges {
		src, ok1 := names.ref(e.From)
		dst, ok2 := names.ref(e.To)
		if !ok1 || !ok2 || src == dst {
			return ImportResult{}, vigia.Invalid(vigia.Field("value_error", nil, "edges", itoa(i)))
		}
		edges = append(edges, RecordEdge{Edge: Edge{Source: src, Target: dst, Columns: e.Columns, ColumnLevel: len(e.Columns) > 0}})
	}
	var exps []ExposureInput
	for i, x := range f.Exposures {
		in := ExposureInput{Name: strings.TrimSpace(x.Name), Type: x.Type, URL: x.URL, Owner: x.Owner}
		for _, d := range x.DependsOn {
			id, ok := names.ref(d)
			if !ok {
				return ImportResult{}, vigia.Invalid(vigia.Field("value_error", nil, "exposures", itoa(i), "depends_on"))
			}
			in.DatasetIDs = append(in.DatasetIDs, id)
		}
		if err := validExposure(in, "exposures", itoa(i)); err != nil {
			return ImportResult{}, err
		}
		exps = append(exps, in)
	}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.replaceEdges(ctx, p.WorkspaceID, KindDeclared, OriginDeclaredYAML, edges, nil, nil); err != nil {
			return err
		}
		var keep []string
		for _, in := range exps {
			e, err := s.putExposure(ctx, p.WorkspaceID, "declared:"+OriginDeclaredYAML, KindDeclared, in)
			if err != nil {
				return err
			}
			keep = append(keep, e.ID)
		}
		return s.dropExposures(ctx, p.WorkspaceID, "declared:"+OriginDeclaredYAML, KindDeclared, keep)
	})
	if err != nil {
		return ImportResult{}, err
	}
	res.Edges, res.Exposures = len(edges), len(exps)
	s.projectNow(ctx, p.WorkspaceID)
	return res, nil
}

// nameIndex finds datasets by id, connection/schema.table, schema.table or table.
type nameIndex struct {
	ids   map[string]bool
	names map[string][]string
}

func (s *Service) nameIndex(ctx context.Context, ws string) (nameIndex, error) {
	ds, err := s.store.FindByName(ctx, ws)
	if err != nil {
		return nameIndex{}, err
	}
	ix := nameIndex{ids: map[string]bool{}, names: map[string][]string{}}
	add := func(k, id string) {
		k = strings.ToLower(k)
		if !slices.Contains(ix.names[k], id) {
			ix.names[k] = append(ix.names[k], id)
		}
	}
	for _, d := range ds {
		ix.ids[d.ID] = true
		add(d.ConnectionName+"/"+d.Schema+"."+d.Table, d.ID)
		add(d.Schema+"."+d.Table, d.ID)
		add(d.Table, d.ID)
	}
	return ix, nil
}

// ref resolves a name to exactly one dataset.
func (ix nameIndex) ref(name string) (string, bool) {
	name = strings.TrimSpace(name)
	if ix.ids[name] {
		return name, true
	}
	m := ix.names[strings.ToLower(name)]
	if len(m) != 1 {
		return "", false
	}
	return m[0], true
}

// dbtManifest is the part of a dbt manifest.json lineage reads. Column lineage, which
// dbt does not record itself, is read where a tool put it in a column's meta:
// columns.<c>.meta.lineage = [{node: <unique_id>, column: <c>}].
type dbtManifest struct {
	Metadata struct {
		ProjectName string `json:"project_name"`
	} `json:"metadata"`
	Nodes     map[string]dbtNode `json:"nodes"`
	Sources   map[string]dbtNode `json:"sources"`
	Exposures map[string]struct {
		Name  string `json:"name"`
		Label string `json:"label"`
		Type  string `json:"type"`
		URL   string `json:"url"`
		Owner struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"owner"`
		DependsOn struct {
			Nodes []string `json:"nodes"`
		} `json:"depends_on"`
	} `json:"exposures"`
}

type dbtNode struct {
	ResourceType string `json:"resource_type"`
	Schema       string `json:"schema"`
	Name         string `json:"name"`
	Alias        string `json:"alias"`
	Identifier   string `json:"identifier"`
	DependsOn    struct {
		Nodes []string `json:"nodes"`
	} `json:"depends_on"`
	Columns map[string]struct {
		Meta struct {
			Lineage []struct {
				Node   string `json:"node"`
				Column string `json:"column"`
			} `json:"lineage"`
		} `json:"meta"`
	} `json:"columns"`
}

func (n dbtNode) relation() string {
	name := n.Name
	if n.Identifier != "" {
		name = n.Identifier
	}
	if n.Alias != "" {
		name = n.Alias
	}
	return n.Schema + "." + name
}

// dbtExposureTypes maps dbt's exposure types to ours.
var dbtExposureTypes = map[string]string{"dashboard": "dashboard", "notebook": "notebook", "analysis": "analysis",
	"ml": "ml_model", "application": "application"}

// ImportDBTManifest reads a dbt manifest: depends_on between models, seeds, snapshots
// and sources become dbt edges (with column lineage where the manifest has it), and
// dbt exposures become exposures. The import replaces the previous one of the same
// project. Session admins and API tokens (the run-results endpoint is a marked write)
// may call it. Returns KindInvalid for a body that is not a manifest.
func (s *Service) ImportDBTManifest(ctx context.Context, manifest []byte) (ImportResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	if !p.IsToken() && p.Role != vigia.RoleAdmin {
		return ImportResult{}, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
	}
	if len(manifest) > maxImportBytes {
		return ImportResult{}, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
	}
	var m dbtManifest
	if err := json.Unmarshal(manifest, &m); err != nil || (m.Nodes == nil && m.Sources == nil) {
		return ImportResult{}, vigia.Invalid(vigia.Field("value_error", nil, "body", "manifest"))
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	dataset := map[string]string{} // unique_id → dataset id
	resolve := func(uid string, n dbtNode) {
		if id, ok := names.ref(n.relation()); ok {
			dataset[uid] = id
		} else {
			res.Unmatched++
		}
	}
	for uid, n := range m.Sources {
		resolve(uid, n)
	}
	for uid, n := range m.Nodes {
		switch n.ResourceType {
		case "model", "seed", "snapshot":
			resolve(uid, n)
		}
	}
	type pair struct{ src, dst string }
	cols := map[pair][]ColumnPair{}
	var order []pair
	for uid, n := range m.Nodes {
		dst, ok := dataset[uid]
		if !ok {
			continue
		}
		for _, dep := range n.DependsOn.Nodes {
			src, ok := dataset[dep]
			if !ok || src == dst {
				continue
			}
			k := pair{src, dst}
			if _, seen := cols[k]; !seen {
				cols[k] = []ColumnPair{}
				order = append(order, k)
			}
		}
		for col, c := range n.Columns {
			for _, l := range c.Meta.Lineage {
				src, ok := dataset[l.Node]
				if !ok || src == dst || l.Column == "" {
					continue
				}
				k := pair{src, dst}
				if _, seen := cols[k]; !seen {
					order = append(order, k)
				}
				cols[k] = append(cols[k], ColumnPair{From: l.Column, To: col})
			}
		}
	}
	var edges []RecordEdge
	for _, k := range order {
		edges = append(edges, RecordEdge{Edge: Edge{Source: k.src, Target: k.dst, Columns: cols[k], ColumnLevel: len(cols[k]) > 0}})
	}
	project := m.Metadata.ProjectName
	if project == "" {
		project = "default"
	}
	origin := originDBT + project
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.replaceEdges(ctx, p.WorkspaceID, KindDBT, origin, edges, nil, nil); err != nil {
			return err
		}
		var keep []string
		for _, x := range m.Exposures {
			t, ok := dbtExposureTypes[x.Type]
			if !ok {
				t = "application"
			}
			name := x.Label
			if name == "" {
				name = x.Name
			}
			in := ExposureInput{Name: name, Type: t, URL: x.URL, Owner: x.Owner.Name}
			for _, dep := range x.DependsOn.Nodes {
				if id, ok := dataset[dep]; ok {
					in.DatasetIDs = append(in.DatasetIDs, id)
				}
			}
			if validExposure(in) != nil {
				res.Unmatched++
				continue
			}
			e, err := s.putExposure(ctx, p.WorkspaceID, origin, KindDBT, in)
			if err != nil {
				return err
			}
			keep = append(keep, e.ID)
		}
		res.Exposures = len(keep)
		return s.dropExposures(ctx, p.WorkspaceID, origin, KindDBT, keep)
	})
	if err != nil {
		return ImportResult{}, err
	}
	res.Edges = len(edges)
	s.projectNow(ctx, p.WorkspaceID)
	return res, nil
}

// RunResults is what POST /integrations/dbt/run-results receives: dbt's
// run_results.json and, for lineage, the manifest of the same run.
type RunResults struct {
	RunResults json.RawMessage
	Manifest   json.RawMessage
}

// RunSummary is what a dbt run told.
type RunSummary struct {
	InvocationID string         `json:"invocation_id"`
	Results      int            `json:"results"`
	ByStatus     map[string]int `json:"by_status"`
	Lineage      *ImportResult  `json:"lineage"`
}

// DBTRunResults reads a dbt run's results (a marked write for tokens) and, when the
// manifest comes along, imports its lineage. Returns KindInvalid for bodies that are
// not dbt artefacts.
func (s *Service) DBTRunResults(ctx context.Context, in RunResults) (RunSummary, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return RunSummary{}, err
	}
	var rr struct {
		Metadata struct {
			InvocationID string `json:"invocation_id"`
		} `json:"metadata"`
		Results []struct {
			UniqueID string `json:"unique_id"`
			Status   string `json:"status"`
		} `json:"results"`
	}
	if len(in.RunResults) == 0 || json.Unmarshal(in.RunResults, &rr) != nil || rr.Results == nil {
		return RunSummary{}, vigia.Invalid(vigia.Field("value_error", nil, "body", "run_results"))
	}
	out := RunSummary{InvocationID: rr.Metadata.InvocationID, Results: len(rr.Results), ByStatus: map[string]int{}}
	for _, r := range rr.Results {
		st := r.Status
		if len(st) > 32 {
			st = "other"
		}
		out.ByStatus[st]++
	}
	if len(in.Manifest) > 0 {
		res, err := s.ImportDBTManifest(ctx, in.Manifest)
		if err != nil {
			return RunSummary{}, err
		}
		out.Lineage = &res
	}
	return out, nil
}

// olEvent is the part of an OpenLineage run event lineage reads.
type olEvent struct {
	EventType string `json:"eventType"`
	Job       struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"job"`
	Inputs  []olDataset `json:"inputs"`
	Outputs []olDataset `json:"outputs"`
}

type olDataset struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Facets    struct {
		ColumnLineage *struct {
			Fields map[string]struct {
				InputFields []struct {
					Namespace string `json:"namespace"`
					Name      string `json:"name"`
					Field     string `json:"field"`
				} `json:"inputFields"`
			} `json:"fields"`
		} `json:"columnLineage"`
	} `json:"facets"`
}

// OpenLineageEvent reads an OpenLineage run event (a marked write for tokens): every
// input feeds every output through an openlineage edge with the columnLineage facet's
// column map; an output that is no dataset of the workspace is a destination outside
// the warehouse. The edges of a job replace that job's previous ones. Returns
// KindInvalid for a body that is not a run event.
func (s *Service) OpenLineageEvent(ctx context.Context, body []byte) (ImportResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	var ev olEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return ImportResult{}, vigia.Invalid(vigia.Field("json_invalid", nil, "body"))
	}
	if ev.Job.Name == "" || len(ev.Job.Name) > 500 || len(ev.Job.Namespace) > 500 {
		return ImportResult{}, vigia.Invalid(vigia.Field("missing", nil, "body", "job", "name"))
	}
	if ev.EventType == "ABORT" || ev.EventType == "FAIL" {
		return ImportResult{}, nil // a failed run tells nothing about lineage
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	match := func(d olDataset) (string, bool) {
		parts := strings.Split(d.Name, ".")
		if len(parts) >= 2 {
			if id, ok := names.ref(parts[len(parts)-2] + "." + parts[len(parts)-1]); ok {
				return id, true
			}
		}
		return names.ref(parts[len(parts)-1])
	}
	inputs := map[string]string{} // namespace/name → dataset id
	var inIDs []string
	for _, in := range ev.Inputs {
		if id, ok := match(in); ok {
			inputs[in.Namespace+"/"+in.Name] = id
			inIDs = append(inIDs, id)
		} else {
			res.Unmatched++
		}
	}
	inIDs = dedupe(inIDs)
	origin := originOpenLineage + ev.Job.Namespace + "/" + ev.Job.Name
	var edges []RecordEdge
	var dests []ExposureInput
	for _, out := range ev.Outputs {
		cols := map[string][]ColumnPair{}
		if cl := out.Facets.ColumnLineage; cl != nil {
			for field, f := range cl.Fields {
				for _, inf := range f.InputFields {
					if src, ok := inputs[inf.Namespace+"/"+inf.Name]; ok && inf.Field != "" {
						cols[src] = append(cols[src], ColumnPair{From: inf.Field, To: field})
					}
				}
			}
		}
		dst, ok := match(out)
		if !ok {
			name := out.Namespace + "/" + out.Name
			if len(name) > 200 {
				name = name[len(name)-200:]
			}
			dests = append(dests, ExposureInput{Name: name, Type: ExposureTypeDestination, DatasetIDs: inIDs})
			continue
		}
		for _, src := range inIDs {
			if src == dst {
				continue
			}
			c := cols[src]
			slices.SortFunc(c, func(a, b ColumnPair) int { return strings.Compare(a.To+"\x00"+a.From, b.To+"\x00"+b.From) })
			edges = append(edges, RecordEdge{Edge: Edge{Source: src, Target: dst, Columns: c, ColumnLevel: len(c) > 0}})
		}
	}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.replaceEdges(ctx, p.WorkspaceID, KindOpenLineage, origin, edges, nil, nil); err != nil {
			return err
		}
		var keep []string
		for _, d := range dests {
			e, err := s.putExposure(ctx, p.WorkspaceID, origin, KindOpenLineage, d)
			if err != nil {
				return err
			}
			keep = append(keep, e.ID)
		}
		return s.dropExposures(ctx, p.WorkspaceID, origin, KindOpenLineage, keep)
	})
	if err != nil {
		return ImportResult{}, err
	}
	res.Edges, res.Destinations = len(edges), len(dests)
	s.projectNow(ctx, p.WorkspaceID)
	return res, nil
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
