package rule

import (
	"context"
	"slices"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rule/rulefile"
)

// Export is an export file with what it left out.
type Export = rulefile.Output

// ExportFormats are the formats of a dataset's export; a workspace export takes the
// formats that hold several tables (dbt, sodacl).
var (
	ExportFormats          = rulefile.Formats()
	WorkspaceExportFormats = []string{rulefile.FormatSodaCL, rulefile.FormatDBT}
)

// ExportRules writes the active rules of one dataset (datasetID set) or of every
// dataset the caller can see as a file in format. A rule the format cannot express is
// listed in the file's header and in Export.Unsupported; a referential rule whose
// reference dataset the caller cannot see is always among them, so no export names
// it. Any credential may export. Returns KindInvalid for an unknown format (gx needs
// a dataset) and KindNotFound for a dataset the caller cannot see.
func (s *Service) ExportRules(ctx context.Context, datasetID *string, format string) (Export, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Export{}, err
	}
	formats := ExportFormats
	if datasetID == nil {
		formats = WorkspaceExportFormats
	}
	if !slices.Contains(formats, format) {
		return Export{}, vigia.Invalid(vigia.Field("enum", nil, "format"))
	}
	v := catalog.ViewerOf(p)
	var tables []rulefile.Table
	f := Filter{}
	if datasetID != nil {
		d, err := s.datasets.Dataset(ctx, *datasetID)
		if err != nil {
			return Export{}, err
		}
		tables = append(tables, rulefile.Table{Schema: d.Schema, Name: d.Table})
		f.DatasetID = &d.ID
	}
	rules, err := s.allRules(ctx, v, f)
	if err != nil {
		return Export{}, err
	}
	var out []rulefile.Rule
	for _, r := range rules {
		if !r.Active {
			continue
		}
		fr := toFileRule(r)
		if datasetID == nil && !slices.Contains(tables, fr.Table) {
			tables = append(tables, fr.Table)
		}
		out = append(out, fr)
	}
	if datasetID == nil {
		slices.SortFunc(tables, func(a, b rulefile.Table) int { return strings.Compare(a.String(), b.String()) })
	}
	exp, _ := rulefile.Encode(format, tables, out) // the format and the table count were checked
	return exp, nil
}

// allRules lists every rule the viewer can see that f selects, with read-time
// visibility applied (an invisible reference dataset is left out).
func (s *Service) allRules(ctx context.Context, v catalog.Viewer, f Filter) ([]Rule, error) {
	var out []Rule
	for offset := 0; ; offset += vigia.MaxLimit {
		f.Page = vigia.Page{Limit: vigia.MaxLimit, Offset: offset}
		res, err := s.store.Rules(ctx, v, f)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if len(res.Items) < vigia.MaxLimit {
			break
		}
	}
	return out, s.forReader(ctx, v, out)
}

// toFileRule is a rule as the file formats name it.
func toFileRule(r Rule) rulefile.Rule {
	p := r.Params
	fr := rulefile.Rule{ID: r.ID, Table: rulefile.Table{Schema: r.DatasetSchema, Name: r.DatasetTable}, Type: r.Type, Name: r.Name,
		Severity: r.Severity, Column: p.Column, Columns: p.Columns, Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max,
		RefColumn: p.RefColumn, MaxOrphanPct: p.MaxOrphanPct, MaxAgeHours: p.MaxAgeHours, MinRows: p.MinRows, SQL: p.SQL,
		MaxFailing: p.MaxFailing}
	if r.RefDataset != nil && !r.RefRestricted {
		fr.Ref = &rulefile.Table{Schema: r.RefDataset.Schema, Name: r.RefDataset.Table}
	}
	return fr
}
