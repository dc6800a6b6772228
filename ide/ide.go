// Package ide answers an editor extension: a table reference as written in SQL resolved
// to its dataset with verdict, score, trust decision and owner, and a dataset's columns
// with types, semantic types, sensitivity and null/distinct figures — metadata only,
// never values.
package ide

import (
	"context"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/trust"
)

// MaxName is the longest reference resolved; MaxHint the longest connection hint.
const (
	MaxName = 400
	MaxHint = 200
)

// Candidate is a visible dataset whose schema and table match a reference ignoring case.
type Candidate struct {
	ID             string
	ConnectionID   string
	ConnectionName string
	Schema         string
	Table          string
	Kind           string
}

// Store finds datasets by name for a viewer.
type Store interface {
	// DatasetsNamed returns the viewer's live datasets whose table (and schema, when
	// given) equal the names ignoring case, ordered by connection name, schema, table.
	DatasetsNamed(ctx context.Context, v catalog.Viewer, schema *string, table string) ([]Candidate, error)
}

// Trust is what the editor needs of trust.
type Trust interface {
	EditorBrief(ctx context.Context, datasetID string) (trust.EditorBrief, error)
}

// Catalog is what the editor needs of the catalog.
type Catalog interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Service answers the editor.
type Service struct {
	store   Store
	trust   Trust
	catalog Catalog
}

// NewService returns the editor metadata service.
func NewService(store Store, tr Trust, cat Catalog) *Service {
	return &Service{store: store, trust: tr, catalog: cat}
}

// Resolution is a resolved reference: the dataset with its brief, and the other
// datasets the reference could name (another connection) when the hint did not decide.
type Resolution struct {
	Dataset Candidate
	Brief   trust.EditorBrief
	Others  []Candidate
}

// part is one identifier of a reference; quoted ones match exactly.
type part struct {
	name   string
	quoted bool
}

// parseRef splits a reference as SQL writes it: identifiers separated by dots, each
// bare or in double quotes (a doubled quote inside is one quote), or in backquotes
// (MySQL). It keeps the last two (schema and table) of up to three
// (database.schema.table). ok is false for anything else.
func parseRef(s string) ([]part, bool) {
	var parts []part
	i := 0
	for {
		if i >= len(s) {
			return nil, false
		}
		var p part
		switch q := s[i]; q {
		case '"', '`':
			p.quoted = true
			i++
			var b strings.Builder
			closed := false
			for i < len(s) {
				if s[i] == q {
					if i+1 < len(s) && s[i+1] == q {
						b.WriteByte(q)
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed || b.Len() == 0 {
				return nil, false
			}
			p.name = b.String()
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '"' && s[j] != '`' {
				j++
			}
			p.name = strings.TrimSpace(s[i:j])
			if p.name == "" || strings.ContainsAny(p.name, " \t\r\n;,()'") {
				return nil, false
			}
			i = j
		}
		parts = append(parts, p)
		if len(parts) > 3 {
			return nil, false
		}
		if i == len(s) {
			break
		}
		if s[i] != '.' {
			return nil, false
		}
		i++
	}
	if len(parts) == 3 {
		parts = parts[1:]
	}
	return parts, true
}

func (p part) matches(name string) bool {
	if p.quoted {
		return p.name == name
	}
	return strings.EqualFold(p.name, name)
}

// Resolve finds the dataset a reference names: `schema.table` or `table`, quoted
// identifiers matched exactly, bare ones ignoring case (as databases fold them), a
// leading database ignored; connection, when given, is the name or id of the connection
// to prefer. KindInvalid for an empty, too long or malformed reference; KindNotFound
// when no visible dataset matches.
func (s *Service) Resolve(ctx context.Context, name string, connection *string) (Resolution, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Resolution{}, err
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return Resolution{}, vigia.Invalid(vigia.Field("missing", nil, "name"))
	case len([]rune(name)) > MaxName:
		return Resolution{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxName}, "name"))
	}
	parts, ok := parseRef(name)
	if !ok {
		return Resolution{}, vigia.Invalid(vigia.Field("value_error", nil, "name"))
	}
	var schema *string
	table := parts[len(parts)-1]
	if len(parts) == 2 {
		schema = &parts[0].name
	}
	cands, err := s.store.DatasetsNamed(ctx, catalog.ViewerOf(p), schema, table.name)
	if err != nil {
		return Resolution{}, err
	}
	var exact []Candidate
	for _, c := range cands {
		if table.matches(c.Table) && (len(parts) == 1 || parts[0].matches(c.Schema)) {
			exact = append(exact, c)
		}
	}
	if connection != nil {
		hint := strings.TrimSpace(*connection)
		var preferred, rest []Candidate
		for _, c := range exact {
			if c.ConnectionID == hint || strings.EqualFold(c.ConnectionName, hint) {
				preferred = append(preferred, c)
			} else {
				rest = append(rest, c)
			}
		}
		exact = append(preferred, rest...)
	}
	if len(exact) == 0 {
		return Resolution{}, vigia.NotFound()
	}
	brief, err := s.trust.EditorBrief(ctx, exact[0].ID)
	if err != nil {
		return Resolution{}, err
	}
	others := exact[1:]
	if others == nil {
		others = []Candidate{}
	}
	return Resolution{Dataset: exact[0], Brief: brief, Others: others}, nil
}

// Column is a column's metadata for the editor: never a value (no minimum, maximum or
// sample).
type Column struct {
	Name         string
	Position     int
	DataType     string
	Class        string
	Nullable     bool
	PrimaryKey   bool
	SemanticType *string
	// Sensitivity is pii when the column holds personal data (detected values or its
	// name), nil when not classified.
	Sensitivity   *string
	NullCount     *int64
	NullRate      *float64
	Distinct      *float64
	DistinctEstim bool
	Profiled      bool
}

// Columns returns a dataset's columns with their metadata. KindNotFound when the caller
// cannot see the dataset.
func (s *Service) Columns(ctx context.Context, datasetID string) ([]Column, error) {
	d, err := s.catalog.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	facts := make([]trust.ColumnFact, 0, len(d.Columns))
	for _, c := range d.Columns {
		f := trust.ColumnFact{Name: c.Name, DataType: c.DataType, PrimaryKey: c.PrimaryKey}
		if c.Profile != nil && c.Profile.Semantic != nil {
			f.SemanticType, f.SemanticMatches = c.Profile.Semantic.Type, c.Profile.Semantic.Matches
		}
		facts = append(facts, f)
	}
	pii, _ := trust.PII(facts)
	isPII := map[string]bool{}
	for _, n := range pii {
		isPII[n] = true
	}
	out := make([]Column, 0, len(d.Columns))
	for _, c := range d.Columns {
		col := Column{Name: c.Name, Position: c.Position, DataType: c.DataType, Class: c.Class, Nullable: c.Nullable, PrimaryKey: c.PrimaryKey}
		if isPII[c.Name] {
			col.Sensitivity = vigia.Ptr("pii")
		}
		if pr := c.Profile; pr != nil {
			col.Profiled = true
			col.NullCount, col.NullRate = vigia.Ptr(pr.NullCount), vigia.Ptr(pr.NullRate)
			if pr.Semantic != nil && pr.Semantic.Type != "" {
				col.SemanticType = vigia.Ptr(pr.Semantic.Type)
			}
			if pr.Distinct != nil {
				col.Distinct, col.DistinctEstim = vigia.Ptr(pr.Distinct.Value), pr.Distinct.Estimated
			}
		}
		out = append(out, col)
	}
	return out, nil
}
