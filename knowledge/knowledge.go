// Package knowledge keeps the workspace's knowledge entries — notes, decisions (tagged
// with the knowledge-graph snapshot they were made on), glossary terms and metric
// definitions — linked to datasets and their columns; finds them with a hybrid search
// (full-text in Portuguese, English and Spanish fused with trigram similarity by
// reciprocal-rank fusion, in the store); holds back the entries whose text carries
// personal data (the PII gate: tag gate:pii, outdated); and gives the knowledge graph
// its kb_entry, term and metric nodes with their means edges. Every text here is the
// people's own: nothing is generated (ai_generated false, ai_model null).
package knowledge

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Entry kinds.
const (
	KindNote     = "note"
	KindDecision = "decision"
	KindTerm     = "term"
	KindMetric   = "metric"
)

// Kinds are the entry kinds.
var Kinds = []string{KindNote, KindDecision, KindTerm, KindMetric}

// TagPIIGate marks an entry the personal-data gate held back; only the gate sets or
// clears it.
const TagPIIGate = "gate:pii"

// SnapshotTagPrefix starts the tag naming the knowledge-graph snapshot a decision was
// made on (snapshot:<id>).
const SnapshotTagPrefix = "snapshot:"

// CodeReactivateContainsPII is the 422 code of outdated=false on a gated entry whose
// text still holds personal data.
const CodeReactivateContainsPII = "service_knowledge_reactivate_contains_pii"

// Bounds of an entry.
const (
	MaxTitle    = 200
	MaxBody     = 20000
	MaxTags     = 20
	MaxTag      = 100
	MaxLinks    = 50
	MaxColumn   = 200
	MaxQuery    = 200
	DefaultList = 50
)

// Link ties an entry to a dataset, or to one of its columns (Column non-empty).
type Link struct {
	DatasetID string
	Column    string
}

// Entry is a knowledge entry.
type Entry struct {
	ID          string
	WorkspaceID string
	Kind        string
	Title       string
	Body        string
	Tags        []string
	// Links are the datasets and columns the entry is about (those the reader sees).
	Links     []Link
	Outdated  bool
	AuthorID  string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Score is the entry's fused reciprocal-rank score in a search (0 without a query).
	Score float64
}

// Gated reports whether the personal-data gate holds the entry back.
func (e Entry) Gated() bool { return slices.Contains(e.Tags, TagPIIGate) }

// EntryInput is a new entry.
type EntryInput struct {
	Kind  string
	Title string
	Body  string
	Tags  []string
	Links []Link
}

// EntryPatch changes an entry; nil fields stay.
type EntryPatch struct {
	Title    *string
	Body     *string
	Tags     *[]string
	Links    *[]Link
	Outdated *bool
}

// Query selects entries. With Q the list is the fused search result, best first;
// without it, newest first.
type Query struct {
	Q    *string
	Kind *string
	Tag  *string
	// DatasetID keeps the entries linked to the dataset.
	DatasetID *string
	// IncludeOutdated lists outdated (and gated) entries too.
	IncludeOutdated bool
	Page            vigia.Page
}

// Store keeps the entries; every method is scoped to the viewer's workspace, and the
// links it answers to the datasets the viewer sees.
type Store interface {
	InsertEntry(ctx context.Context, e Entry) error
	// Entry returns an entry; KindNotFound when absent or of another workspace.
	Entry(ctx context.Context, v catalog.Viewer, id string) (Entry, error)
	// UpdateEntry saves the entry's title, body, tags, outdated flag and updated_at, and
	// when links is not nil replaces the links to datasets the viewer sees with it
	// (links to datasets the viewer cannot see stay).
	UpdateEntry(ctx context.Context, v catalog.Viewer, e Entry, links []Link) error
	// Search lists entries: the hybrid search when q.Q is set (Total is the fused list
	// size), else all matching the filters, newest first.
	Search(ctx context.Context, v catalog.Viewer, q Query) (vigia.List[Entry], error)
	// MissingLinks returns the links among links whose dataset is not a live dataset the
	// viewer sees, or whose column the dataset does not have.
	MissingLinks(ctx context.Context, v catalog.Viewer, links []Link) ([]Link, error)
}

// Graph gives decisions the knowledge-graph snapshot they are made on: the latest, or
// a new one when the graph changed since.
type Graph interface {
	CurrentSnapshot(ctx context.Context, workspaceID string) (string, error)
}

// Service is the knowledge-entry service.
type Service struct {
	store Store
	graph Graph
	clock vigia.Clock
}

// NewService returns the knowledge service.
func NewService(store Store, graph Graph, clock vigia.Clock) *Service {
	return &Service{store: store, graph: graph, clock: clock}
}

// Create adds an entry (a session of a member or admin). Text with personal data is
// kept but gated: tag gate:pii and outdated. A decision gets the tag snapshot:<id> of
// the knowledge graph's current snapshot. KindInvalid lists every bad field; a link to
// a dataset the caller cannot see is KindNotFound.
func (s *Service) Create(ctx context.Context, in EntryInput) (Entry, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Entry{}, err
	}
	fields := checkText(&in.Title, &in.Body, true)
	if !slices.Contains(Kinds, in.Kind) {
		fields = append(fields, vigia.Field("enum", nil, "kind"))
	}
	tags, tf := checkTags(in.Tags)
	links, lf := checkLinks(in.Links)
	fields = append(append(fields, tf...), lf...)
	if len(fields) > 0 {
		return Entry{}, vigia.Invalid(fields...)
	}
	v := catalog.ViewerOf(p)
	if err := s.checkLinksExist(ctx, v, links); err != nil {
		return Entry{}, err
	}
	tags = slices.DeleteFunc(tags, func(t string) bool {
		return t == TagPIIGate || (in.Kind == KindDecision && strings.HasPrefix(t, SnapshotTagPrefix))
	})
	if in.Kind == KindDecision {
		sn, err := s.graph.CurrentSnapshot(ctx, p.WorkspaceID)
		if err != nil {
			return Entry{}, err
		}
		tags = append(tags, SnapshotTagPrefix+sn)
	}
	now := s.clock.Now()
	e := Entry{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Kind: in.Kind, Title: in.Title, Body: in.Body,
		Tags: tags, Links: links, AuthorID: p.UserID, CreatedAt: now, UpdatedAt: now}
	if len(PersonalData(e.Title+"\n"+e.Body, "")) > 0 {
		e.Tags = append(e.Tags, TagPIIGate)
		e.Outdated = true
	}
	if err := s.store.InsertEntry(ctx, e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Update changes an entry (a session of a member or admin). New text is gated as at
// creation. Tags cannot add or remove gate:pii: the tag stays as the gate left it.
// outdated=false on a gated entry re-runs the gate on its (new) text: clean, the tag
// goes and the entry is current; personal data still there is a 422 with code
// service_knowledge_reactivate_contains_pii (the kinds found in its detail, never the
// values). KindNotFound for an entry of another workspace.
func (s *Service) Update(ctx context.Context, id string, in EntryPatch) (Entry, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Entry{}, err
	}
	if !vigia.ValidID(id) {
		return Entry{}, vigia.NotFound()
	}
	v := catalog.ViewerOf(p)
	e, err := s.store.Entry(ctx, v, id)
	if err != nil {
		return Entry{}, err
	}
	title, body := e.Title, e.Body
	if in.Title != nil {
		title = *in.Title
	}
	if in.Body != nil {
		body = *in.Body
	}
	fields := checkText(&title, &body, in.Title != nil)
	var tags []string
	if in.Tags != nil {
		var tf []vigia.FieldError
		tags, tf = checkTags(*in.Tags)
		fields = append(fields, tf...)
	}
	var links []Link
	if in.Links != nil {
		var lf []vigia.FieldError
		links, lf = checkLinks(*in.Links)
		fields = append(fields, lf...)
	}
	if len(fields) > 0 {
		return Entry{}, vigia.Invalid(fields...)
	}
	if in.Links != nil {
		if err := s.checkLinksExist(ctx, v, links); err != nil {
			return Entry{}, err
		}
	}
	gated := e.Gated()
	if in.Tags != nil {
		// A decision keeps the snapshot it was made on; gate:pii is the gate's own.
		keep := slices.DeleteFunc(slices.Clone(e.Tags), func(t string) bool {
			return !(t == TagPIIGate || (e.Kind == KindDecision && strings.HasPrefix(t, SnapshotTagPrefix)))
		})
		tags = slices.DeleteFunc(tags, func(t string) bool {
			return t == TagPIIGate || (e.Kind == KindDecision && strings.HasPrefix(t, SnapshotTagPrefix))
		})
		e.Tags = append(tags, keep...)
	}
	e.Title, e.Body = title, body
	found := PersonalData(e.Title+"\n"+e.Body, "")
	switch {
	case in.Outdated != nil && !*in.Outdated && gated && len(found) > 0:
		return Entry{}, &vigia.Error{Kind: vigia.KindInvalid, Code: CodeReactivateContainsPII,
			Key: "error.service_knowledge_reactivate_contains_pii", Detail: map[string]any{"kinds": found}}
	case len(found) > 0:
		if !gated {
			e.Tags = append(e.Tags, TagPIIGate)
		}
		e.Outdated = true
	case in.Outdated != nil && !*in.Outdated:
		e.Tags = slices.DeleteFunc(e.Tags, func(t string) bool { return t == TagPIIGate })
		e.Outdated = false
	case in.Outdated != nil:
		e.Outdated = *in.Outdated
	}
	e.UpdatedAt = s.clock.Now()
	var replace []Link
	if in.Links != nil {
		replace = links
		if replace == nil {
			replace = []Link{}
		}
	}
	if err := s.store.UpdateEntry(ctx, v, e, replace); err != nil {
		return Entry{}, err
	}
	return s.store.Entry(ctx, v, id)
}

// Search lists entries (any caller, API tokens too): with q the hybrid search, best
// first; outdated and gated entries only with IncludeOutdated. KindInvalid for a bad
// page, kind or query.
func (s *Service) Search(ctx context.Context, q Query) (vigia.List[Entry], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Entry]{}, err
	}
	fields := vigia.FieldsOf(q.Page.Validate())
	if q.Kind != nil && !slices.Contains(Kinds, *q.Kind) {
		fields = append(fields, vigia.Field("enum", nil, "kind"))
	}
	if q.Q != nil {
		t := strings.TrimSpace(*q.Q)
		switch {
		case utf8.RuneCountInString(t) > MaxQuery:
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxQuery}, "q"))
		case t == "":
			q.Q = nil
		default:
			q.Q = &t
		}
	}
	if len(fields) > 0 {
		return vigia.List[Entry]{}, vigia.Invalid(fields...)
	}
	if q.DatasetID != nil && !vigia.ValidID(*q.DatasetID) {
		return vigia.List[Entry]{Items: []Entry{}}, nil
	}
	return s.store.Search(ctx, catalog.ViewerOf(p), q)
}

// Get returns one entry. KindNotFound for an entry of another workspace.
func (s *Service) Get(ctx context.Context, id string) (Entry, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Entry{}, err
	}
	if !vigia.ValidID(id) {
		return Entry{}, vigia.NotFound()
	}
	return s.store.Entry(ctx, catalog.ViewerOf(p), id)
}

func (s *Service) checkLinksExist(ctx context.Context, v catalog.Viewer, links []Link) error {
	if len(links) == 0 {
		return nil
	}
	missing, err := s.store.MissingLinks(ctx, v, links)
	if err != nil {
		return err
	}
	for _, l := range missing {
		if l.Column == "" {
			return vigia.NotFound()
		}
	}
	if len(missing) > 0 {
		return vigia.Invalid(vigia.Field("value_error", nil, "links", "column"))
	}
	return nil
}

// checkText trims and bounds the title and body; the title is required when given.
func checkText(title, body *string, titleGiven bool) []vigia.FieldError {
	var fields []vigia.FieldError
	*title = strings.TrimSpace(*title)
	switch n := utf8.RuneCountInString(*title); {
	case n == 0 && titleGiven:
		fields = append(fields, vigia.Field("string_too_short", map[string]any{"min_length": 1}, "title"))
	case n > MaxTitle:
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxTitle}, "title"))
	}
	if utf8.RuneCountInString(*body) > MaxBody {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxBody}, "body"))
	}
	return fields
}

// checkTags trims, lower-cases and dedupes tags.
func checkTags(in []string) ([]string, []vigia.FieldError) {
	if len(in) > MaxTags {
		return nil, []vigia.FieldError{vigia.Field("too_long", map[string]any{"max_length": MaxTags}, "tags")}
	}
	out := make([]string, 0, len(in))
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		switch {
		case t == "":
			return nil, []vigia.FieldError{vigia.Field("string_too_short", map[string]any{"min_length": 1}, "tags")}
		case utf8.RuneCountInString(t) > MaxTag:
			return nil, []vigia.FieldError{vigia.Field("string_too_long", map[string]any{"max_length": MaxTag}, "tags")}
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkLinks bounds and dedupes links; a dataset id that is no id matches no dataset
// (reported as not found by checkLinksExist).
func checkLinks(in []Link) ([]Link, []vigia.FieldError) {
	if len(in) > MaxLinks {
		return nil, []vigia.FieldError{vigia.Field("too_long", map[string]any{"max_length": MaxLinks}, "links")}
	}
	var out []Link
	for _, l := range in {
		l.Column = strings.TrimSpace(l.Column)
		if utf8.RuneCountInString(l.Column) > MaxColumn {
			return nil, []vigia.FieldError{vigia.Field("string_too_long", map[string]any{"max_length": MaxColumn}, "links", "column")}
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}
