package rule

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rule/rulefile"
)

// MaxImportBody bounds an imported file (bytes); a larger body is 413.
const MaxImportBody = 2 << 20

// ActionRulesImported is the activity-log action of an import that created rules.
const ActionRulesImported = "rules_imported"

// Results of an imported item.
const (
	ImportCreated     = "created"
	ImportDuplicate   = "duplicate"
	ImportUnsupported = "unsupported"
	ImportInvalid     = "invalid"
)

// Reason codes of invalid items the service adds to the file's own (rulefile.Code*).
const (
	CodeUnknownDataset   = "unknown_dataset"   // no dataset the caller can see has the table's name
	CodeAmbiguousDataset = "ambiguous_dataset" // several datasets have it: name the connection
	CodeUnknownReference = "unknown_reference" // the reference table is no dataset the caller can see
)

// ImportInput is a rules file to import.
type ImportInput struct {
	Body []byte
	// Format is dbt, sodacl or gx; empty to detect it.
	Format string
	// ConnectionID, when set, resolves table names among that connection's datasets only.
	ConnectionID *string
	// DryRun answers what would happen and changes nothing.
	DryRun bool
}

// ImportItem is the result of one check of the file.
type ImportItem struct {
	Index  int
	Line   int
	Path   string
	Result string
	// Code says why an item is unsupported or invalid (stable).
	Code string
	// Loc names the parameter an invalid item failed on (["params", "column"]).
	Loc      []string
	RuleType string
	// DatasetID and DatasetName are the dataset the item resolved to (never the name
	// as written in the file).
	DatasetID   string
	DatasetName string
	// RuleID is the created rule (empty on a dry run); DuplicateOf the existing
	// equivalent rule; DuplicateOfItem an earlier item of the same file it repeats.
	RuleID          string
	DuplicateOf     string
	DuplicateOfItem *int
}

// ImportResult is what an import did (or would do, on a dry run).
type ImportResult struct {
	Format                                    string
	DryRun                                    bool
	Created, Duplicates, Unsupported, Invalid int
	Items                                     []ImportItem
}

// ImportRules reads a rules file (SodaCL, a GX suite or a dbt property file) and
// creates a rule for each check Vigia can hold, on the dataset its table names; an
// equivalent rule that exists (or an earlier check of the file) is reported as a
// duplicate and not created again. Every item gets a result: created, duplicate,
// unsupported (with a reason code) or invalid (with its line or path). The rules are
// created in one transaction; a file that cannot be read creates nothing. Only a
// member's or admin's session may import. Returns KindNotFound for a connection the
// caller cannot see, KindInvalid for an unknown format or
// an unreadable file (see parseInvalid), KindTooLarge over MaxImportBody.
func (s *Service) ImportRules(ctx context.Context, in ImportInput) (ImportResult, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return ImportResult{}, err
	}
	if in.Format != "" && !slices.Contains(rulefile.Formats(), in.Format) {
		return ImportResult{}, vigia.Invalid(vigia.Field("enum", nil, "format"))
	}
	if len(in.Body) > MaxImportBody {
		return ImportResult{}, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
	}
	if in.ConnectionID != nil {
		if !vigia.ValidID(*in.ConnectionID) {
			return ImportResult{}, vigia.NotFound()
		}
		if _, err := s.conns.Connection(ctx, *in.ConnectionID); err != nil {
			return ImportResult{}, err
		}
	}
	format, items, err := rulefile.Decode(in.Format, in.Body)
	if err != nil {
		var pe *rulefile.ParseError
		if !errors.As(err, &pe) {
			return ImportResult{}, err
		}
		return ImportResult{}, parseInvalid(pe)
	}
	v := catalog.ViewerOf(p)
	res := ImportResult{Format: format, DryRun: in.DryRun, Items: make([]ImportItem, 0, len(items))}
	names, err := s.datasetIndex(ctx, in.ConnectionID)
	if err != nil {
		return ImportResult{}, err
	}
	details := map[string]catalog.Dataset{}
	existing := map[string][]Rule{}
	type fresh struct {
		rule  Rule
		index int
	}
	var created []fresh
	now := s.clock.Now()
	for i, it := range items {
		out := ImportItem{Index: i, Line: it.Line, Path: it.Path, RuleType: it.Rule.Type}
		switch it.Status {
		case rulefile.StatusUnsupported:
			out.Result, out.Code = ImportUnsupported, it.Code
		case rulefile.StatusInvalid:
			out.Result, out.Code = ImportInvalid, it.Code
		default:
			r, code, loc, err := s.importedRule(ctx, v, names, details, it.Rule)
			if err != nil {
				return ImportResult{}, err
			}
			if code != "" {
				out.Result, out.Code, out.Loc = ImportInvalid, code, loc
				if r.DatasetID != "" {
					out.DatasetID, out.DatasetName = r.DatasetID, r.DatasetName()
				}
				break
			}
			out.DatasetID, out.DatasetName = r.DatasetID, r.DatasetName()
			if _, ok := existing[r.DatasetID]; !ok {
				id := r.DatasetID
				if existing[id], err = s.allRules(ctx, v, Filter{DatasetID: &id}); err != nil {
					return ImportResult{}, err
				}
			}
			if j := slices.IndexFunc(existing[r.DatasetID], func(e Rule) bool { return equivalent(e, r) }); j >= 0 {
				out.Result, out.DuplicateOf = ImportDuplicate, existing[r.DatasetID][j].ID
				break
			}
			if j := slices.IndexFunc(created, func(c fresh) bool { return equivalent(c.rule, r) }); j >= 0 {
				idx := created[j].index
				out.Result, out.DuplicateOfItem = ImportDuplicate, &idx
				break
			}
			r.ID, r.WorkspaceID, r.CreatedBy, r.CreatedAt, r.UpdatedAt, r.Active = vigia.NewID(), p.WorkspaceID, "user:"+p.UserID, now, now, true
			created = append(created, fresh{rule: r, index: i})
			out.Result = ImportCreated
			if !in.DryRun {
				out.RuleID = r.ID
			}
		}
		switch out.Result {
		case ImportCreated:
			res.Created++
		case ImportDuplicate:
			res.Duplicates++
		case ImportUnsupported:
			res.Unsupported++
		case ImportInvalid:
			res.Invalid++
		}
		res.Items = append(res.Items, out)
	}
	if in.DryRun || len(created) == 0 {
		return res, nil
	}
	rules := make([]Rule, len(created))
	for i, c := range created {
		rules[i] = c.rule
	}
	act := event.Activity{WorkspaceID: p.WorkspaceID, Actor: "user:" + p.UserID, Action: ActionRulesImported, SubjectType: "workspace",
		SubjectID: p.WorkspaceID, CreatedAt: now, Details: map[string]any{"format": format, "created": res.Created,
			"duplicates": res.Duplicates, "unsupported": res.Unsupported, "invalid": res.Invalid}}
	if err := s.store.CreateRules(ctx, rules, act); err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

// parseInvalid is the 422 of a file that cannot be read: its type says why
// (yaml_invalid, json_invalid, rules_file_unknown, rules_format_unknown, missing for an
// empty file, too_long over MaxItems checks) and its loc where reading stopped
// (["line", "12"]), never what the file holds.
func parseInvalid(pe *rulefile.ParseError) error {
	var loc []string
	if pe.Line > 0 {
		loc = []string{"line", strconv.Itoa(pe.Line)}
	}
	switch pe.Code {
	case "not_a_rules_file":
		return vigia.Invalid(vigia.Field("rules_file_unknown", nil, loc...))
	case "format_unknown":
		return vigia.Invalid(vigia.Field("rules_format_unknown", nil, loc...))
	case "empty":
		return vigia.Invalid(vigia.Field("missing", nil, loc...))
	case "too_many_items":
		return vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": rulefile.MaxItems}, loc...))
	}
	return vigia.Invalid(vigia.Field(pe.Code, nil, loc...))
}

// datasetIndex maps the names of the datasets the caller can see (of one connection
// when set) to them: by schema.table and by table alone.
type datasetIndex struct {
	qualified map[string][]catalog.Dataset
	table     map[string][]catalog.Dataset
}

func (s *Service) datasetIndex(ctx context.Context, connectionID *string) (datasetIndex, error) {
	idx := datasetIndex{qualified: map[string][]catalog.Dataset{}, table: map[string][]catalog.Dataset{}}
	for offset := 0; ; offset += vigia.MaxLimit {
		page, err := s.datasets.FindDatasets(ctx, catalog.DatasetFilter{ConnectionID: connectionID,
			Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
		if err != nil {
			return idx, err
		}
		for _, d := range page.Items {
			q := rulefile.Table{Schema: d.Schema, Name: d.Table}.String()
			idx.qualified[q] = append(idx.qualified[q], d)
			idx.table[d.Table] = append(idx.table[d.Table], d)
		}
		if len(page.Items) < vigia.MaxLimit {
			return idx, nil
		}
	}
}

// find resolves a table named in a file; code says why it cannot.
func (idx datasetIndex) find(t rulefile.Table) (catalog.Dataset, string) {
	var hits []catalog.Dataset
	switch {
	case t.Name == "":
	case t.Schema == "":
		hits = idx.table[t.Name]
	default:
		hits = idx.qualified[t.String()]
		if len(hits) == 0 && t.Schema == "main" {
			hits = idx.qualified[t.Name] // a dbt source of a schemaless SQLite table
		}
	}
	switch len(hits) {
	case 0:
		return catalog.Dataset{}, CodeUnknownDataset
	case 1:
		return hits[0], ""
	}
	return catalog.Dataset{}, CodeAmbiguousDataset
}

// importedRule turns a file's rule into a checked rule of a dataset the caller can see;
// code and loc say why it cannot be one. err is an internal failure only.
func (s *Service) importedRule(ctx context.Context, v catalog.Viewer, idx datasetIndex, details map[string]catalog.Dataset,
	fr rulefile.Rule) (Rule, string, []string, error) {
	found, code := idx.find(fr.Table)
	if code != "" {
		return Rule{}, code, nil, nil
	}
	d, ok := details[found.ID]
	if !ok {
		var err error
		if d, err = s.datasets.Dataset(ctx, found.ID); err != nil {
			if vigia.IsKind(err, vigia.KindNotFound) {
				return Rule{}, CodeUnknownDataset, nil, nil
			}
			return Rule{}, "", nil, err
		}
		details[found.ID] = d
	}
	r := Rule{DatasetID: d.ID, DatasetSchema: d.Schema, DatasetTable: d.Table, ConnectionID: d.ConnectionID, Type: fr.Type,
		Name: strings.TrimSpace(fr.Name), Severity: fr.Severity}
	if r.Severity == "" {
		r.Severity = SeverityWarning
	}
	if fields := checkSeverityName(r.Severity, r.Name); len(fields) > 0 {
		return r, rulefile.CodeInvalidValue, fields[0].Loc, nil
	}
	in := ParamsIn{Columns: fr.Columns, Values: fr.Values, Min: fr.Min, Max: fr.Max, MaxOrphanPct: fr.MaxOrphanPct,
		MaxAgeHours: fr.MaxAgeHours}
	in.Column, in.Pattern, in.RefColumn, in.SQL = optString(fr.Column), optString(fr.Pattern), optString(fr.RefColumn), optString(fr.SQL)
	in.MinRows, in.MaxFailing = optCount(fr.MinRows), optCount(fr.MaxFailing)
	if fr.Type == TypeReferential && fr.Ref != nil {
		ref, code := idx.find(*fr.Ref)
		if code != "" {
			return r, CodeUnknownReference, []string{"params", "ref_dataset_id"}, nil
		}
		in.RefDatasetID = &ref.ID
	}
	params, err := s.checkParams(ctx, d, fr.Type, in)
	if err != nil {
		var ve *vigia.Error
		if errors.As(err, &ve) && ve.Kind == vigia.KindInvalid && len(ve.Fields) > 0 {
			return r, ve.Fields[0].Type, ve.Fields[0].Loc, nil
		}
		if vigia.IsKind(err, vigia.KindNotFound) {
			return r, CodeUnknownReference, []string{"params", "ref_dataset_id"}, nil
		}
		return r, "", nil, err
	}
	r.Params = params
	return r, "", nil, nil
}

// equivalent reports whether two rules of a dataset check the same thing: same type and
// parameters (a unique key's columns and accepted values in any order, ages to the
// second), whatever their names and severities.
func equivalent(a, b Rule) bool {
	if a.DatasetID != b.DatasetID || a.Type != b.Type {
		return false
	}
	pa, pb := a.Params, b.Params
	sameSet := func(x, y []string) bool {
		if len(x) != len(y) {
			return false
		}
		xs, ys := slices.Clone(x), slices.Clone(y)
		slices.Sort(xs)
		slices.Sort(ys)
		return slices.Equal(xs, ys)
	}
	sameF := func(x, y *float64) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return math.Abs(*x-*y) < 1e-9
	}
	sameI := func(x, y *int64) bool {
		xv, yv := int64(0), int64(0)
		if x != nil {
			xv = *x
		}
		if y != nil {
			yv = *y
		}
		return xv == yv
	}
	sameAge := func(x, y *float64) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return math.Round(*x*3600) == math.Round(*y*3600)
	}
	sameOrphans := func(x, y *float64) bool {
		zero := 0.0
		if x == nil {
			x = &zero
		}
		if y == nil {
			y = &zero
		}
		return sameF(x, y)
	}
	return pa.Column == pb.Column && sameSet(pa.KeyColumns(), pb.KeyColumns()) && sameSet(pa.Values, pb.Values) &&
		pa.Pattern == pb.Pattern && sameF(pa.Min, pb.Min) && sameF(pa.Max, pb.Max) && pa.RefDatasetID == pb.RefDatasetID &&
		pa.RefColumn == pb.RefColumn && sameOrphans(pa.MaxOrphanPct, pb.MaxOrphanPct) && sameAge(pa.MaxAgeHours, pb.MaxAgeHours) &&
		sameI(pa.MinRows, pb.MinRows) && strings.TrimSpace(pa.SQL) == strings.TrimSpace(pb.SQL) && sameI(pa.MaxFailing, pb.MaxFailing)
}
