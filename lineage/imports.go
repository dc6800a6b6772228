package lineage

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/ingest"
)

// Origins of declared and imported lineage.
const (
	OriginDeclaredAPI  = "api"
	OriginDeclaredYAML = "yaml"
	originDBT          = "dbt:"
	originOpenLineage  = "openlineage:"
)

// ImportResult says what an import or a declaration changed.
type ImportResult struct {
	Edges     int `json:"edges"`
	Exposures int `json:"exposures"`
	// Unmatched counts names that match no dataset of the workspace (or several);
	// UnmatchedNames lists them (dbt unique ids, at most 100).
	Unmatched      int      `json:"unmatched"`
	UnmatchedNames []string `json:"unmatched_names"`
	// Destinations counts outputs outside the warehouse, kept as destination exposures.
	Destinations int `json:"destinations"`
	// Replaced reports that the import replaced the project's previous lineage although
	// it matched far less of it (the replace option).
	Replaced bool `json:"replaced"`
}

// ImportOptions changes how an import treats the lineage it replaces.
type ImportOptions struct {
	// Replace lets an import replace the project's edges and exposures even when it
	// matches nothing or far fewer than there are (see ImportDBTManifest).
	Replace bool
}

// CodeDBTImportWouldErase is the conflict code of a dbt import that would silently
// erase most of a project's lineage.
const CodeDBTImportWouldErase = "dbt_import_would_erase"

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
		return vigia.Invalid(vigia.Field("value_error", nil, "target_id"))
	}
	for i, c := range in.Columns {
		if strings.TrimSpace(c.From) == "" || strings.TrimSpace(c.To) == "" || len(c.From) > 200 || len(c.To) > 200 {
			return vigia.Invalid(vigia.Field("value_error", nil, "columns", itoa(i)))
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
	if err := validExposure(in); err != nil {
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

// ReplaceFeedExposures replaces the exposures a feed (a BI tool's refresh reports:
// origin bi:<tool>:<bi dataset id>) keeps with exps, as declared edges from the datasets
// they read; exposures of the origin not among them go. The caller (the feed's
// service) has checked the principal and the datasets. KindInvalid for a bad exposure.
func (s *Service) ReplaceFeedExposures(ctx context.Context, workspaceID, origin string, exps []ExposureInput) error {
	for i, in := range exps {
		if err := validExposure(in, "dashboards", itoa(i)); err != nil {
			return err
		}
	}
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		_, err := s.replaceOrigin(ctx, workspaceID, KindDeclared, origin, nil, exps)
		return err
	})
	if err != nil {
		return err
	}
	s.projectNow(ctx, workspaceID)
	return nil
}

// replaceOrigin replaces an import origin's edges and exposures with these (exposures
// of the origin not among them go, with their edges), in the tx in ctx; it returns how
// many exposures the origin now has.
func (s *Service) replaceOrigin(ctx context.Context, ws string, kind EdgeKind, origin string, edges []RecordEdge, exps []ExposureInput) (int, error) {
	if _, err := s.replaceEdges(ctx, ws, kind, origin, edges, nil, nil); err != nil {
		return 0, err
	}
	keep := make([]string, 0, len(exps))
	for _, in := range exps {
		e, err := s.putExposure(ctx, ws, origin, kind, in)
		if err != nil {
			return 0, err
		}
		keep = append(keep, e.ID)
	}
	return len(keep), s.dropExposures(ctx, ws, origin, kind, keep)
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

// MayDeclare returns KindForbidden unless the caller may load a declaration file (an
// admin session: the command line acts as the workspace admin). Callers check it
// before decoding the file (ingest.DecodeDeclarations), so a forbidden upload is not
// parsed.
func (s *Service) MayDeclare(ctx context.Context) error {
	_, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	return err
}

// LoadDeclarations replaces the workspace's file-declared edges and exposures with a
// decoded declaration file (admin only, see MayDeclare). Returns KindForbidden, or
// KindInvalid for a name that matches no dataset.
func (s *Service) LoadDeclarations(ctx context.Context, f ingest.Declarations) (ImportResult, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return ImportResult{}, err
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
		cols := columnPairs(e.Columns)
		edges = append(edges, RecordEdge{Edge: Edge{Source: src, Target: dst, Columns: cols, ColumnLevel: len(cols) > 0}})
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

// columnPairs are a declaration's column pairs as lineage keeps them.
func columnPairs(in []ingest.ColumnPair) []ColumnPair {
	if in == nil {
		return nil
	}
	out := make([]ColumnPair, 0, len(in))
	for _, c := range in {
		out = append(out, ColumnPair{From: c.From, To: c.To, Direct: c.Direct})
	}
	return out
}

// dbtExposureTypes maps dbt's exposure types to ours.
var dbtExposureTypes = map[string]string{"dashboard": "dashboard", "notebook": "notebook", "analysis": "analysis",
	"ml": "ml_model", "application": "application"}

// ImportDBTManifest reads a dbt manifest: depends_on between models, seeds, snapshots
// and sources become dbt edges (with column lineage where the manifest has it), and
// dbt exposures become exposures (their owner's name, else their owner's email). The
// import replaces the previous one of the same project, but never silently erases it:
// when the project has lineage and the manifest matches no dataset at all, or gives
// fewer than half its current edges and exposures, the import is refused with
// KindConflict (CodeDBTImportWouldErase, the unmatched names in the detail) unless
// opts.Replace is set. Session admins and API tokens (the run-results endpoint is a
// marked write) may call it (see MayImportDBT).
func (s *Service) ImportDBTManifest(ctx context.Context, m ingest.DBTManifest, opts ImportOptions) (ImportResult, error) {
	p, err := mayImportDBT(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return ImportResult{}, err
	}
	res := ImportResult{UnmatchedNames: []string{}}
	var unmatched []string
	dataset := map[string]string{} // unique_id → dataset id
	resolve := func(uid string, n ingest.DBTNode) {
		if id, ok := names.ref(n.Relation()); ok {
			dataset[uid] = id
		} else {
			unmatched = append(unmatched, uid)
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
	slices.SortFunc(order, func(a, b pair) int { return strings.Compare(a.src+a.dst, b.src+b.dst) })
	var edges []RecordEdge
	for _, k := range order {
		c := cols[k]
		slices.SortFunc(c, func(a, b ColumnPair) int { return strings.Compare(a.To+"\x00"+a.From, b.To+"\x00"+b.From) })
		edges = append(edges, RecordEdge{Edge: Edge{Source: k.src, Target: k.dst, Columns: c, ColumnLevel: len(c) > 0}})
	}
	var exps []ExposureInput
	expIDs := make([]string, 0, len(m.Exposures))
	for id := range m.Exposures {
		expIDs = append(expIDs, id)
	}
	sort.Strings(expIDs)
	for _, uid := range expIDs {
		x := m.Exposures[uid]
		t, ok := dbtExposureTypes[x.Type]
		if !ok {
			t = "application"
		}
		name := x.Label
		if name == "" {
			name = x.Name
		}
		owner := x.Owner.Name
		if strings.TrimSpace(owner) == "" {
			owner = x.Owner.Email
		}
		in := ExposureInput{Name: name, Type: t, URL: x.URL, Owner: owner}
		for _, dep := range x.DependsOn.Nodes {
			if id, ok := dataset[dep]; ok {
				in.DatasetIDs = append(in.DatasetIDs, id)
			}
		}
		if validExposure(in) != nil {
			unmatched = append(unmatched, uid)
			continue
		}
		exps = append(exps, in)
	}
	sort.Strings(unmatched)
	res.Unmatched = len(unmatched)
	res.UnmatchedNames = listNames(unmatched)
	project := m.Metadata.ProjectName
	if project == "" {
		project = "default"
	}
	origin := originDBT + project
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		current, err := s.store.Edges(ctx, p.WorkspaceID, KindDBT, origin)
		if err != nil {
			return err
		}
		currentExps, err := s.store.ListExposures(ctx, p.WorkspaceID)
		if err != nil {
			return err
		}
		had := len(current)
		for _, e := range currentExps {
			if e.Origin == origin {
				had++
			}
		}
		// A manifest that matches nothing, or far less than the project has, is more
		// likely the wrong workspace or a partial manifest than the project's new shape.
		if gives := len(edges) + len(exps); had > 0 && (len(dataset) == 0 || 2*gives < had) {
			if !opts.Replace {
				return wouldErase(had, gives, unmatched)
			}
			res.Replaced = true
		}
		res.Exposures, err = s.replaceOrigin(ctx, p.WorkspaceID, KindDBT, origin, edges, exps)
		return err
	})
	if err != nil {
		return ImportResult{}, err
	}
	res.Edges = len(edges)
	s.projectNow(ctx, p.WorkspaceID)
	return res, nil
}

// wouldErase is the refusal of an import that would erase most of a project's lineage:
// how much there is, how much the manifest gives, and the names it could not match.
func wouldErase(had, gives int, unmatched []string) error {
	return &vigia.Error{Kind: vigia.KindConflict, Code: CodeDBTImportWouldErase, Key: "error.dbt_import_would_erase",
		Params: map[string]any{"current": had, "matched": gives, "unmatched": len(unmatched)},
		Detail: map[string]any{"unmatched_names": listNames(unmatched)}}
}

// listNames keeps at most maxUnmatchedNames names for a listing, each cut to 200
// characters, with anything but letters, digits and . _ - $ : / @ replaced: they are
// the caller's own names, echoed only so that they can be fixed.
func listNames(names []string) []string {
	out := make([]string, 0, min(len(names), maxUnmatchedNames))
	for _, n := range names {
		if len(out) == maxUnmatchedNames {
			break
		}
		if len(n) > 200 {
			n = n[:200]
		}
		out = append(out, strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-$:/@", r) {
				return r
			}
			return '?'
		}, n))
	}
	return out
}

// MayImportDBT returns KindForbidden unless the caller may import a dbt manifest: an
// admin session or an API token (the run-results endpoint is a marked write). Callers
// check it before decoding the manifest (ingest.DecodeDBTManifest), so a forbidden
// upload is not parsed.
func (s *Service) MayImportDBT(ctx context.Context) error {
	_, err := mayImportDBT(ctx)
	return err
}

func mayImportDBT(ctx context.Context) (vigia.Principal, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.Principal{}, err
	}
	if !p.IsToken() && p.Role != vigia.RoleAdmin {
		return vigia.Principal{}, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
	}
	return p, nil
}

// RunSummary is what a dbt run told.
type RunSummary struct {
	InvocationID string         `json:"invocation_id"`
	Results      int            `json:"results"`
	ByStatus     map[string]int `json:"by_status"`
	Lineage      *ImportResult  `json:"lineage"`
	// Tests are the run's test results with what the manifest says they test; without
	// a manifest it is empty.
	Tests []DBTTest `json:"-"`
	// UnmatchedTests counts the test results whose tested model the manifest does not
	// name, or names as no dataset of the workspace (or without a manifest, all).
	UnmatchedTests int `json:"-"`
	// Models are the run's model results whose relation the manifest names as a
	// dataset of the workspace; UnmatchedModels counts the others (without a manifest,
	// all).
	Models          []DBTModel `json:"-"`
	UnmatchedModels int        `json:"-"`
}

// DBTModel is a dbt model (seed, snapshot) result on the dataset it builds: its
// unique_id, status (success, error, skipped) and timings.
type DBTModel struct {
	UniqueID  string
	DatasetID string
	Status    string
	StartedAt time.Time
	EndedAt   *time.Time
}

// DBTTest is a dbt test result on a dataset: the test's unique_id, generic test name
// (not_null, unique, accepted_values, relationships, … or "" for a singular test),
// tested column, its kwargs, the dataset a relationships test refers to (when it is
// one of the workspace's), its status and failures.
type DBTTest struct {
	UniqueID     string
	DatasetID    string
	TestName     string
	Column       string
	Kwargs       map[string]any
	RefDatasetID string
	Status       string
	Failures     *int64
}

// DBTRunResults records a dbt run's results (a marked write for tokens) and, when the
// run's manifest comes along, imports its lineage with opts (see ImportDBTManifest).
// Returns KindForbidden for a manifest the caller may not import, KindConflict when the
// import would erase the project's lineage.
func (s *Service) DBTRunResults(ctx context.Context, run ingest.DBTRun, manifest *ingest.DBTManifest, opts ImportOptions) (RunSummary, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return RunSummary{}, err
	}
	out := RunSummary{InvocationID: run.InvocationID, Results: run.Results, ByStatus: run.ByStatus}
	if out.ByStatus == nil {
		out.ByStatus = map[string]int{}
	}
	if manifest != nil {
		res, err := s.ImportDBTManifest(ctx, *manifest, opts)
		if err != nil {
			return RunSummary{}, err
		}
		out.Lineage = &res
		tests, unmatched, err := s.dbtTests(ctx, run, *manifest)
		if err != nil {
			return RunSummary{}, err
		}
		out.Tests, out.UnmatchedTests = tests, unmatched
		models, unmatched, err := s.dbtModels(ctx, run, *manifest)
		if err != nil {
			return RunSummary{}, err
		}
		out.Models, out.UnmatchedModels = models, unmatched
	} else {
		out.UnmatchedTests, out.UnmatchedModels = len(run.Tests), len(run.Models)
	}
	return out, nil
}

// dbtModels maps the run's model results to the datasets the manifest's relations
// name; results without a known start are unmatched too.
func (s *Service) dbtModels(ctx context.Context, run ingest.DBTRun, m ingest.DBTManifest) ([]DBTModel, int, error) {
	if len(run.Models) == 0 {
		return nil, 0, nil
	}
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, 0, err
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return nil, 0, err
	}
	var out []DBTModel
	unmatched := 0
	for _, r := range run.Models {
		n, ok := m.Nodes[r.UniqueID]
		var id string
		if ok && !r.StartedAt.IsZero() {
			id, ok = names.ref(n.Relation())
		}
		if !ok || r.StartedAt.IsZero() {
			unmatched++
			continue
		}
		out = append(out, DBTModel{UniqueID: r.UniqueID, DatasetID: id, Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt})
	}
	return out, unmatched, nil
}

// dbtTests maps the run's test results to the datasets the manifest says they test:
// the test node's attached_node, else the first model, seed, snapshot or source it
// depends on. A relationships test's other dependency is its reference.
func (s *Service) dbtTests(ctx context.Context, run ingest.DBTRun, m ingest.DBTManifest) ([]DBTTest, int, error) {
	if len(run.Tests) == 0 {
		return nil, 0, nil
	}
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, 0, err
	}
	names, err := s.nameIndex(ctx, p.WorkspaceID)
	if err != nil {
		return nil, 0, err
	}
	resolve := func(uid string) (string, bool) {
		if n, ok := m.Sources[uid]; ok {
			return names.ref(n.Relation())
		}
		n, ok := m.Nodes[uid]
		if !ok {
			return "", false
		}
		switch n.ResourceType {
		case "model", "seed", "snapshot":
			return names.ref(n.Relation())
		}
		return "", false
	}
	var out []DBTTest
	unmatched := 0
	for _, t := range run.Tests {
		n, ok := m.Nodes[t.UniqueID]
		if !ok || n.ResourceType != "test" {
			unmatched++
			continue
		}
		target := n.AttachedNode
		if target == "" && n.TestMetadata != nil {
			// kwargs.model is "{{ get_where_subquery(ref('orders')) }}": the tested model.
			if model, ok := n.TestMetadata.Kwargs["model"].(string); ok {
				if name := refName(model); name != "" {
					for _, dep := range n.DependsOn.Nodes {
						if d, ok := m.Nodes[dep]; ok && d.Name == name {
							target = dep
							break
						}
					}
				}
			}
		}
		if target == "" {
			for _, dep := range n.DependsOn.Nodes {
				if _, ok := resolve(dep); ok {
					target = dep
					break
				}
			}
		}
		ds, ok := resolve(target)
		if !ok {
			unmatched++
			continue
		}
		dt := DBTTest{UniqueID: t.UniqueID, DatasetID: ds, Column: n.ColumnName, Status: t.Status, Failures: t.Failures}
		if md := n.TestMetadata; md != nil {
			dt.TestName, dt.Kwargs = md.Name, md.Kwargs
			if c, ok := md.Kwargs["column_name"].(string); ok && c != "" {
				dt.Column = c
			}
		}
		for _, dep := range n.DependsOn.Nodes {
			if dep == target {
				continue
			}
			if id, ok := resolve(dep); ok {
				dt.RefDatasetID = id
				break
			}
		}
		out = append(out, dt)
	}
	return out, unmatched, nil
}

// refName is X of the first ref('X') (or ref("X")) in s; "" without one.
func refName(s string) string {
	i := strings.Index(s, "ref(")
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(s[i+4:])
	if rest == "" || (rest[0] != '\'' && rest[0] != '"') {
		return ""
	}
	q := rest[0]
	end := strings.IndexByte(rest[1:], q)
	if end < 0 {
		return ""
	}
	return rest[1 : 1+end]
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
