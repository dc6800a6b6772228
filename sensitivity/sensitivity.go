// Package sensitivity classifies a dataset's columns as public, internal, confidential
// or pii: automatically from the semantic types their values were detected as and their
// names, or by hand (a session sets a level; who and when are kept, with a trail of every
// change). A column derived through lineage from a PII column is proposed as PII (a
// lineage-inherited suggestion) until someone decides.
package sensitivity

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/trust"
)

// Levels, weakest first.
const (
	Public       = "public"
	Internal     = "internal"
	Confidential = "confidential"
	PII          = "pii"
	// Auto, as a level to set, removes the manual level.
	Auto = "auto"
)

// Levels are the sensitivity levels, weakest first.
var Levels = []string{Public, Internal, Confidential, PII}

// Origins of a column's level.
const (
	OriginAuto   = "auto"
	OriginManual = "manual"
)

var piiName = regexp.MustCompile("(?i)" + trust.PIINamePattern)

// confidentialName matches names of columns holding secrets or pay.
var confidentialName = regexp.MustCompile(`(?i)(^|[-_. ])(salario|salary|vencimento|wage|password|passwd|senha|secret|segredo|token|api_?key|hash)($|[-_. ]|[0-9])`)

// AutoLevel is a column's automatic level and why: pii for a personal-data semantic type
// detected in its values (reason semantic:<type>) or a personal-data name (reason name);
// confidential for a name of secrets or pay (reason name); internal otherwise (reason
// default).
func AutoLevel(name, semanticType string, matches int) (level, reason string) {
	if semanticType != "" && matches > 0 && slices.Contains(trust.PIISemanticTypes(), strings.ToLower(semanticType)) {
		return PII, "semantic:" + strings.ToLower(semanticType)
	}
	if piiName.MatchString(name) {
		return PII, "name"
	}
	if confidentialName.MatchString(name) {
		return Confidential, "name"
	}
	return Internal, "default"
}

// Manual is a level a person set on a column.
type Manual struct {
	Column   string
	Level    string
	AuthorID string
	At       time.Time
}

// Change is one entry of the trail.
type Change struct {
	Column   string
	From     *string // nil: the automatic level was in force
	To       string  // a level, or auto
	AuthorID string
	At       time.Time
}

// Derivation says a column of the dataset is derived from an upstream column (a
// lineage edge's column map; inferred edges are joins, not derivations, and are left out).
type Derivation struct {
	Column          string
	SourceDatasetID string
	SourceColumn    string
}

// Source is an upstream column a suggestion comes from; DatasetID and Column are empty
// when the caller cannot see that dataset (Restricted).
type Source struct {
	DatasetID  string
	Column     string
	Level      string
	Restricted bool
}

// Suggestion is a lineage-inherited proposal: pii, because the column is derived from
// PII columns.
type Suggestion struct {
	Level string
	From  []Source
}

// Column is a column's sensitivity.
type Column struct {
	Name   string
	Level  string
	Origin string
	// Reason says why an automatic level was chosen (semantic:<type>, name, default).
	Reason string
	// AuthorID and At say who set a manual level and when.
	AuthorID *string
	At       *time.Time
	// Suggestion is the lineage-inherited proposal when it differs from the level.
	Suggestion *Suggestion
}

// Report is a dataset's sensitivity.
type Report struct {
	DatasetID string
	Columns   []Column
	Trail     []Change
}

// Store keeps manual levels and their trail, and reads derivations.
type Store interface {
	// Manual returns the manual levels of the columns of the datasets among ids.
	Manual(ctx context.Context, datasetIDs []string) (map[string]map[string]Manual, error)
	// Trail returns a dataset's changes, oldest first.
	Trail(ctx context.Context, datasetID string) ([]Change, error)
	// Derivations returns the column maps of the lineage edges into the dataset.
	Derivations(ctx context.Context, workspaceID, datasetID string) ([]Derivation, error)
	// Set records a change: the manual level (removed when To is auto) and its trail entry.
	Set(ctx context.Context, datasetID string, c Change) error
}

// Catalog reads datasets as the caller sees them.
type Catalog interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Service is the sensitivity service.
type Service struct {
	store   Store
	catalog Catalog
	clock   vigia.Clock
}

// NewService returns the sensitivity service.
func NewService(store Store, cat Catalog, clock vigia.Clock) *Service {
	return &Service{store: store, catalog: cat, clock: clock}
}

// Dataset returns a dataset's column sensitivity with its trail. KindNotFound when the
// caller cannot see the dataset.
func (s *Service) Dataset(ctx context.Context, datasetID string) (Report, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Report{}, err
	}
	d, err := s.catalog.Dataset(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	ders, err := s.store.Derivations(ctx, p.WorkspaceID, datasetID)
	if err != nil {
		return Report{}, err
	}
	ids := []string{datasetID}
	for _, dv := range ders {
		if !slices.Contains(ids, dv.SourceDatasetID) {
			ids = append(ids, dv.SourceDatasetID)
		}
	}
	manual, err := s.store.Manual(ctx, ids)
	if err != nil {
		return Report{}, err
	}
	// The upstream columns' levels, as their datasets' readers see them.
	upstream := map[string]map[string]string{}
	visible := map[string]bool{}
	for _, id := range ids[1:] {
		u, err := s.catalog.Dataset(ctx, id)
		if vigia.IsKind(err, vigia.KindNotFound) {
			continue
		}
		if err != nil {
			return Report{}, err
		}
		visible[id] = true
		upstream[id] = levels(u, manual[id])
	}
	byCol := map[string][]Source{}
	for _, dv := range ders {
		lv, ok := upstream[dv.SourceDatasetID][dv.SourceColumn]
		if !ok || lv != PII {
			continue
		}
		src := Source{DatasetID: dv.SourceDatasetID, Column: dv.SourceColumn, Level: lv}
		if !visible[dv.SourceDatasetID] {
			src = Source{Level: lv, Restricted: true}
		}
		byCol[dv.Column] = append(byCol[dv.Column], src)
	}
	rep := Report{DatasetID: datasetID, Columns: []Column{}}
	for _, c := range d.Columns {
		col := Column{Name: c.Name, Origin: OriginAuto}
		if m, ok := manual[datasetID][c.Name]; ok {
			col.Level, col.Origin, col.AuthorID, col.At = m.Level, OriginManual, vigia.Ptr(m.AuthorID), vigia.Ptr(m.At)
		} else {
			col.Level, col.Reason = autoOf(c)
		}
		if from := byCol[c.Name]; len(from) > 0 && col.Level != PII && col.Origin == OriginAuto {
			col.Suggestion = &Suggestion{Level: PII, From: from}
		}
		rep.Columns = append(rep.Columns, col)
	}
	rep.Trail, err = s.store.Trail(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	return rep, nil
}

// Set sets a column's level by hand (a session of a member or admin), or returns it to
// the automatic level with auto; the change goes into the trail with its author and
// date. KindNotFound when the caller cannot see the dataset or it has no such column;
// KindInvalid for an unknown level.
func (s *Service) Set(ctx context.Context, datasetID, column, level string) (Report, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Report{}, err
	}
	if level != Auto && !slices.Contains(Levels, level) {
		return Report{}, vigia.Invalid(vigia.Field("enum", nil, "level"))
	}
	d, err := s.catalog.Dataset(ctx, datasetID)
	if err != nil {
		return Report{}, err
	}
	if !slices.ContainsFunc(d.Columns, func(c catalog.Column) bool { return c.Name == column }) {
		return Report{}, vigia.NotFound()
	}
	manual, err := s.store.Manual(ctx, []string{datasetID})
	if err != nil {
		return Report{}, err
	}
	var from *string
	if m, ok := manual[datasetID][column]; ok {
		from = vigia.Ptr(m.Level)
	}
	if (from == nil && level == Auto) || (from != nil && *from == level) {
		return s.Dataset(ctx, datasetID) // nothing changes: no trail entry
	}
	if err := s.store.Set(ctx, datasetID, Change{Column: column, From: from, To: level, AuthorID: p.UserID, At: s.clock.Now()}); err != nil {
		return Report{}, err
	}
	return s.Dataset(ctx, datasetID)
}

func autoOf(c catalog.Column) (string, string) {
	st, matches := "", 0
	if c.Profile != nil && c.Profile.Semantic != nil {
		st, matches = c.Profile.Semantic.Type, c.Profile.Semantic.Matches
	}
	return AutoLevel(c.Name, st, matches)
}

// levels are a dataset's column levels: manual where set, else automatic.
func levels(d catalog.Dataset, manual map[string]Manual) map[string]string {
	out := map[string]string{}
	for _, c := range d.Columns {
		if m, ok := manual[c.Name]; ok {
			out[c.Name] = m.Level
		} else {
			out[c.Name], _ = autoOf(c)
		}
	}
	return out
}
