// Package report writes reports people read from Vigia's own facts — scores and their
// trend, dimensions, verdicts, incidents and their blast radius, SLA attainment, top
// issues, trust decisions, contract status — as Markdown, and exports them as a
// self-contained HTML page, a PDF and (executive workspace overviews) a 5-slide deck.
// Everything is deterministic and offline: no language model is involved, so every
// report says ai_generated false and ai_model null.
package report

import (
	"context"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Report types.
const (
	TypeWorkspaceOverview = "workspace_overview"
	TypeDomain            = "domain"
	TypeDataset           = "dataset"
	TypeIncident          = "incident"
)

// Personas: who the report is written for.
const (
	PersonaExecutive   = "executive"
	PersonaEngineering = "engineering"
	PersonaSteward     = "steward"
)

// Types and Personas are the accepted values, for validation and the API document.
var (
	Types     = []string{TypeWorkspaceOverview, TypeDomain, TypeDataset, TypeIncident}
	Personas  = []string{PersonaExecutive, PersonaEngineering, PersonaSteward}
	Languages = []string{"pt", "en", "es"}
)

// PageDefault is the default page of the report list.
const PageDefault = 50

// WindowDays is how far back a report looks (score trend, incidents, SLA, decisions).
const WindowDays = 30

// MaxSubjectID bounds a subject id.
const MaxSubjectID = 64

// Report is a written report with the facts it was written from (the exports draw
// their charts from the same facts).
type Report struct {
	ID          string
	WorkspaceID string
	Type        string
	Persona     string
	SubjectID   *string
	Title       string
	// Language is pt, en or es; nil for older reports (which are pt).
	Language    *string
	ContentMD   string
	Facts       Facts
	AIGenerated bool
	AIModel     *string
	GeneratedAt time.Time
	// RoutineID is the routine that made the report; nil when a person asked for it.
	RoutineID *string
	CreatedBy string
	// Restricted is true when the facts include datasets of a restricted-access domain:
	// then only its author and admins read the report.
	Restricted bool
}

// Lang is the report's language, pt for older reports without one.
func (r Report) Lang() string {
	if r.Language == nil {
		return "pt"
	}
	return *r.Language
}

// CreateInput asks for a report.
type CreateInput struct {
	Type      string
	Persona   string
	SubjectID *string
	// Language nil: the account's, else the workspace's, else pt.
	Language *string
}

// Reader is who reads reports: their author id and whether they are an admin.
type Reader struct {
	WorkspaceID string
	ID          string
	Admin       bool
}

// Scope is what a report covers: its subject's name and the datasets it counts.
type Scope struct {
	Name       string
	DatasetIDs []string
	// IncidentID narrows the incidents to one (post-incident review).
	IncidentID string
	// Restricted: some dataset of the scope is in a restricted-access domain.
	Restricted bool
}

// Store keeps reports and reads the facts they are written from.
type Store interface {
	// Scope resolves a report's subject for the viewer; KindNotFound when the subject
	// does not exist or the viewer cannot see it.
	Scope(ctx context.Context, v catalog.Viewer, typ string, subjectID *string) (Scope, error)
	// Facts reads the facts of the scope's datasets between since and until.
	Facts(ctx context.Context, v catalog.Viewer, sc Scope, since, until time.Time) (Facts, error)
	// InsertReport stores a new report.
	InsertReport(ctx context.Context, r Report) error
	// Report returns a report the reader may read; KindNotFound otherwise.
	Report(ctx context.Context, rd Reader, id string) (Report, error)
	// Reports lists the reports the reader may read, newest first.
	Reports(ctx context.Context, rd Reader, page vigia.Page) (vigia.List[Report], error)
}

// Service creates, reads and exports reports.
type Service struct {
	store Store
	clock vigia.Clock
}

// NewService returns the report service.
func NewService(store Store, clock vigia.Clock) *Service {
	return &Service{store: store, clock: clock}
}

// LanguageOf maps a locale (pt-PT, en-GB, es-ES, de-CH...) to a report language: pt,
// en or es; de and fr get en, anything else "" (unknown).
func LanguageOf(locale string) string {
	l := strings.ToLower(locale)
	switch {
	case strings.HasPrefix(l, "pt"):
		return "pt"
	case strings.HasPrefix(l, "es"):
		return "es"
	case strings.HasPrefix(l, "en"), strings.HasPrefix(l, "de"), strings.HasPrefix(l, "fr"):
		return "en"
	}
	return ""
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// validate checks a request: type, persona and language among theirs, a subject id
// for every type but workspace_overview and none for it.
func (in CreateInput) validate() error {
	var fields []vigia.FieldError
	if !contains(Types, in.Type) {
		fields = append(fields, vigia.Field("enum", nil, "type"))
	}
	if !contains(Personas, in.Persona) {
		fields = append(fields, vigia.Field("enum", nil, "persona"))
	}
	if in.Language != nil && !contains(Languages, *in.Language) {
		fields = append(fields, vigia.Field("enum", nil, "language"))
	}
	if in.Type == TypeWorkspaceOverview && in.SubjectID != nil {
		fields = append(fields, vigia.Field("extra_forbidden", nil, "subject_id"))
	}
	if contains(Types, in.Type) && in.Type != TypeWorkspaceOverview && (in.SubjectID == nil || *in.SubjectID == "") {
		fields = append(fields, vigia.Field("missing", nil, "subject_id"))
	}
	if in.SubjectID != nil && len(*in.SubjectID) > MaxSubjectID {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxSubjectID}, "subject_id"))
	}
	if len(fields) > 0 {
		return vigia.Invalid(fields...)
	}
	return nil
}

// authorOf is the id a principal writes reports as: the person, or the API token.
func authorOf(p vigia.Principal) string {
	if p.UserID != "" {
		return "user:" + p.UserID
	}
	return "token:" + p.TokenID
}

func readerOf(p vigia.Principal) Reader {
	return Reader{WorkspaceID: p.WorkspaceID, ID: authorOf(p), Admin: !p.ReadOnly && p.Role == vigia.RoleAdmin}
}

// CreateReport writes a report for the calling person (member or admin session) from
// the facts they can see. Errors: KindInvalid for a bad type, persona, language or
// subject; KindNotFound when the subject is missing or invisible; token_read_only for
// an API token.
func (s *Service) CreateReport(ctx context.Context, in CreateInput) (Report, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Report{}, err
	}
	if err := in.validate(); err != nil {
		return Report{}, err
	}
	if in.Language == nil {
		lang := LanguageOf(p.Locale)
		if lang == "" {
			lang = LanguageOf(p.WorkspaceLocale)
		}
		if lang == "" {
			lang = "pt"
		}
		in.Language = &lang
	}
	return s.generate(ctx, catalog.ViewerOf(p), in, authorOf(p), nil)
}

// Generate writes a report for a routine of the workspace: it sees what an API token
// sees (no restricted-access domain), so everyone in the workspace may read it.
func (s *Service) Generate(ctx context.Context, workspaceID string, in CreateInput, routineID string) (Report, error) {
	if err := in.validate(); err != nil {
		return Report{}, err
	}
	if in.Language == nil {
		lang := "pt"
		in.Language = &lang
	}
	v := catalog.Viewer{WorkspaceID: workspaceID, TeamIDs: []string{}}
	return s.generate(ctx, v, in, "routine:"+routineID, &routineID)
}

func (s *Service) generate(ctx context.Context, v catalog.Viewer, in CreateInput, author string, routineID *string) (Report, error) {
	sc, err := s.store.Scope(ctx, v, in.Type, in.SubjectID)
	if err != nil {
		return Report{}, err
	}
	now := s.clock.Now().UTC().Truncate(time.Second)
	facts, err := s.store.Facts(ctx, v, sc, now.AddDate(0, 0, -WindowDays), now)
	if err != nil {
		return Report{}, err
	}
	r := Report{ID: vigia.NewID(), WorkspaceID: v.WorkspaceID, Type: in.Type, Persona: in.Persona, SubjectID: in.SubjectID,
		Language: in.Language, Facts: facts, GeneratedAt: now, RoutineID: routineID, CreatedBy: author, Restricted: sc.Restricted}
	r.Title, r.ContentMD = Write(r)
	if err := s.store.InsertReport(ctx, r); err != nil {
		return Report{}, err
	}
	return r, nil
}

// Report returns a report the caller may read (KindNotFound otherwise).
func (s *Service) Report(ctx context.Context, id string) (Report, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Report{}, err
	}
	if !vigia.ValidID(id) {
		return Report{}, vigia.NotFound()
	}
	return s.store.Report(ctx, readerOf(p), id)
}

// Reports lists the reports the caller may read, newest first: those of routines and
// those without restricted facts, their own, and every one for an admin.
func (s *Service) Reports(ctx context.Context, page vigia.Page) (vigia.List[Report], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Report]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Report]{}, err
	}
	return s.store.Reports(ctx, readerOf(p), page)
}

// ExportHTML returns the report as one self-contained HTML page.
func (s *Service) ExportHTML(ctx context.Context, id string) ([]byte, error) {
	r, err := s.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	return HTML(r)
}

// ExportPDF returns the report as a PDF.
func (s *Service) ExportPDF(ctx context.Context, id string) ([]byte, error) {
	r, err := s.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	return PDF(r)
}

// ExportDeck returns the 5-slide deck of an executive workspace overview. Errors:
// KindConflict (report_deck_unsupported) for any other report.
func (s *Service) ExportDeck(ctx context.Context, id string) ([]byte, error) {
	r, err := s.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Type != TypeWorkspaceOverview || r.Persona != PersonaExecutive {
		return nil, vigia.Conflict(CodeDeckUnsupported, "error.report_deck_unsupported",
			map[string]any{"type": r.Type, "persona": r.Persona})
	}
	return Deck(r)
}

// CodeDeckUnsupported is the 409 code of a slide deck asked of a report other than an
// executive workspace overview.
const CodeDeckUnsupported = "report_deck_unsupported"
