// Package readme keeps dataset READMEs: a draft written from facts (purpose from the
// domain and lineage, columns with types, semantic types and sensitivity, a quality
// summary, owners and consumers), which a session may edit and publish, and its Markdown
// export. Every text is deterministic (ai_generated false, ai_model null); the export's
// AI front matter is written only for AI-generated text, so never here.
package readme

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/sensitivity"
)

// MaxContent bounds an edited draft.
const MaxContent = 100000

// Domain is a data product the dataset belongs to.
type Domain struct {
	Name        string
	Description string
	Owner       *string
	Consumers   []string // "name (kind)"
}

// Stored is what the record keeps of a README.
type Stored struct {
	DraftMD     *string
	EditedBy    *string
	EditedAt    *time.Time
	PublishedMD *string
	PublishedBy *string
	PublishedAt *time.Time
}

// Readme is a dataset's README.
type Readme struct {
	DatasetID string
	// Draft is the edited draft, or the one written from facts now (Edited false).
	Draft       string
	Edited      bool
	EditedBy    *string
	EditedAt    *time.Time
	GeneratedAt *time.Time // when the draft was written from facts (not edited)
	Published   *string
	PublishedBy *string
	PublishedAt *time.Time
}

// Store keeps READMEs and reads the dataset's domains.
type Store interface {
	Readme(ctx context.Context, datasetID string) (Stored, error)
	SaveDraft(ctx context.Context, datasetID, md, by string, at time.Time) error
	Publish(ctx context.Context, datasetID, md, by string, at time.Time) error
	Domains(ctx context.Context, datasetID string) ([]Domain, error)
}

// Facts are the reads a draft is written from.
type Facts interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
	Lineage(ctx context.Context, datasetID string) (lineage.LineageResult, error)
	Sensitivity(ctx context.Context, datasetID string) (sensitivity.Report, error)
}

// Service is the README service.
type Service struct {
	store Store
	facts Facts
	clock vigia.Clock
}

// NewService returns the README service.
func NewService(store Store, facts Facts, clock vigia.Clock) *Service {
	return &Service{store: store, facts: facts, clock: clock}
}

// Get returns a dataset's README: the edited draft or one written from facts now, and
// the published text. KindNotFound when the caller cannot see the dataset.
func (s *Service) Get(ctx context.Context, datasetID string) (Readme, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return Readme{}, err
	}
	d, err := s.facts.Dataset(ctx, datasetID)
	if err != nil {
		return Readme{}, err
	}
	st, err := s.store.Readme(ctx, datasetID)
	if err != nil {
		return Readme{}, err
	}
	r := Readme{DatasetID: datasetID, Published: st.PublishedMD, PublishedBy: st.PublishedBy, PublishedAt: st.PublishedAt}
	if st.DraftMD != nil {
		r.Draft, r.Edited, r.EditedBy, r.EditedAt = *st.DraftMD, true, st.EditedBy, st.EditedAt
		return r, nil
	}
	r.Draft, err = s.write(ctx, d)
	if err != nil {
		return Readme{}, err
	}
	r.GeneratedAt = vigia.Ptr(s.clock.Now())
	return r, nil
}

// Edit replaces the draft (a session of a member or admin). KindInvalid for empty or
// oversized text.
func (s *Service) Edit(ctx context.Context, datasetID, md string) (Readme, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Readme{}, err
	}
	switch n := utf8.RuneCountInString(md); {
	case strings.TrimSpace(md) == "":
		return Readme{}, vigia.Invalid(vigia.Field("string_too_short", map[string]any{"min_length": 1}, "content_md"))
	case n > MaxContent:
		return Readme{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxContent}, "content_md"))
	}
	if _, err := s.facts.Dataset(ctx, datasetID); err != nil {
		return Readme{}, err
	}
	if err := s.store.SaveDraft(ctx, datasetID, md, p.UserID, s.clock.Now()); err != nil {
		return Readme{}, err
	}
	return s.Get(ctx, datasetID)
}

// Publish publishes the current draft (a session of a member or admin).
func (s *Service) Publish(ctx context.Context, datasetID string) (Readme, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Readme{}, err
	}
	r, err := s.Get(ctx, datasetID)
	if err != nil {
		return Readme{}, err
	}
	if err := s.store.Publish(ctx, datasetID, r.Draft, p.UserID, s.clock.Now()); err != nil {
		return Readme{}, err
	}
	return s.Get(ctx, datasetID)
}

// Markdown is the export: the published text, else the draft. An AI-generated README
// would start with front matter (ai-generated, ai-model, ai-generated-at); these never
// are, so the export is the text alone.
func (s *Service) Markdown(ctx context.Context, datasetID string) (string, error) {
	r, err := s.Get(ctx, datasetID)
	if err != nil {
		return "", err
	}
	if r.Published != nil {
		return *r.Published, nil
	}
	return r.Draft, nil
}

// write writes the draft from facts: no value of the data, only names, types, levels
// and figures.
func (s *Service) write(ctx context.Context, d catalog.Dataset) (string, error) {
	lin, err := s.facts.Lineage(ctx, d.ID)
	if err != nil && !vigia.IsKind(err, vigia.KindNotFound) {
		return "", err
	}
	sens, err := s.facts.Sensitivity(ctx, d.ID)
	if err != nil {
		return "", err
	}
	doms, err := s.store.Domains(ctx, d.ID)
	if err != nil {
		return "", err
	}
	level := map[string]string{}
	for _, c := range sens.Columns {
		level[c.Name] = c.Level
	}
	var b strings.Builder
	name := d.Schema + "." + d.Table
	fmt.Fprintf(&b, "# %s\n\n", name)
	b.WriteString("## Propósito\n\n")
	fmt.Fprintf(&b, "%s `%s` da ligação %s.", kindPT(d.Kind), name, d.ConnectionName)
	for _, dm := range doms {
		fmt.Fprintf(&b, " Pertence ao domínio %s", dm.Name)
		if dm.Description != "" {
			fmt.Fprintf(&b, " (%s)", dm.Description)
		}
		b.WriteString(".")
	}
	if len(lin.Upstream) > 0 {
		fmt.Fprintf(&b, " Alimentado por %s.", neighbours(lin.Upstream))
	}
	if len(lin.Downstream) > 0 {
		fmt.Fprintf(&b, " Alimenta %s.", neighbours(lin.Downstream))
	}
	b.WriteString("\n\n## Colunas\n\n| Coluna | Tipo | Tipo semântico | Sensibilidade |\n|---|---|---|---|\n")
	for _, c := range d.Columns {
		sem := "—"
		if c.Profile != nil && c.Profile.Semantic != nil && c.Profile.Semantic.Type != "" {
			sem = c.Profile.Semantic.Type
		}
		pk := ""
		if c.PrimaryKey {
			pk = " (chave primária)"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %s | %s |\n", cell(c.Name), pk, cell(c.DataType), cell(sem), level[c.Name])
	}
	b.WriteString("\n## Qualidade\n\n")
	if d.LatestScore != nil {
		fmt.Fprintf(&b, "Pontuação mais recente: %.1f/100.", *d.LatestScore)
	} else {
		b.WriteString("Ainda sem pontuação.")
	}
	if d.LastScanAt != nil {
		fmt.Fprintf(&b, " Último scan: %s.", d.LastScanAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, " Problemas abertos: %d.\n\n", len(d.Issues))
	b.WriteString("## Responsáveis\n\n")
	owners := 0
	for _, dm := range doms {
		if dm.Owner != nil && *dm.Owner != "" {
			fmt.Fprintf(&b, "- %s (domínio %s)\n", *dm.Owner, dm.Name)
			owners++
		}
	}
	if owners == 0 {
		b.WriteString("Sem responsável definido.\n")
	}
	b.WriteString("\n## Consumidores\n\n")
	consumers := 0
	for _, dm := range doms {
		for _, c := range dm.Consumers {
			fmt.Fprintf(&b, "- %s\n", c)
			consumers++
		}
	}
	for _, x := range lin.Exposures {
		fmt.Fprintf(&b, "- %s (%s)\n", x.Name, x.Type)
		consumers++
	}
	if consumers == 0 {
		b.WriteString("Sem consumidores registados.\n")
	}
	return b.String(), nil
}

func neighbours(ns []lineage.NeighbourView) string {
	var names []string
	hidden := 0
	for _, n := range ns {
		if n.Restricted {
			hidden++
			continue
		}
		names = append(names, "`"+n.Name+"`")
	}
	if hidden > 0 {
		names = append(names, fmt.Sprintf("%d dataset(s) restrito(s)", hidden))
	}
	return strings.Join(names, ", ")
}

func kindPT(k string) string {
	switch k {
	case "view":
		return "Vista"
	case "materialized_view":
		return "Vista materializada"
	case "external":
		return "Tabela externa"
	}
	return "Tabela"
}

// cell escapes a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
