package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/knowledge"
)

// KnowledgeLinkIn ties an entry to a dataset or one of its columns.
type KnowledgeLinkIn struct {
	DatasetID string `json:"dataset_id" minLength:"1" maxLength:"64"`
	Column    string `json:"column,omitempty" maxLength:"200" doc:"A column of the dataset; absent: the dataset itself"`
}

// KnowledgeEntryIn is a new knowledge entry.
type KnowledgeEntryIn struct {
	Kind  string            `json:"kind" enum:"note,decision,term,metric" doc:"term: a glossary term; metric: a metric definition"`
	Title string            `json:"title" minLength:"1" maxLength:"200"`
	Body  string            `json:"body,omitempty" maxLength:"20000"`
	Tags  []string          `json:"tags,omitempty" maxItems:"20" doc:"gate:pii is the personal-data gate's own and is ignored here; a decision's snapshot:<id> is set by the service"`
	Links []KnowledgeLinkIn `json:"links,omitempty" maxItems:"50" doc:"Datasets and columns the entry is about"`
}

// KnowledgeEntryPatchIn changes an entry; absent fields stay.
type KnowledgeEntryPatchIn struct {
	Title    *string            `json:"title,omitempty" minLength:"1" maxLength:"200"`
	Body     *string            `json:"body,omitempty" maxLength:"20000"`
	Tags     *[]string          `json:"tags,omitempty" maxItems:"20" doc:"Replaces the tags; gate:pii cannot be added or removed here, and a decision keeps its snapshot tag"`
	Links    *[]KnowledgeLinkIn `json:"links,omitempty" maxItems:"50" doc:"Replaces the links to datasets the caller can see"`
	Outdated *bool              `json:"outdated,omitempty" doc:"false on a gate:pii entry re-runs the personal-data gate: 422 service_knowledge_reactivate_contains_pii while the text still holds personal data"`
}

// KnowledgeLinkOut is a link of an entry.
type KnowledgeLinkOut struct {
	DatasetID string  `json:"dataset_id"`
	Column    *string `json:"column"`
}

// KnowledgeEntryOut is a knowledge entry.
type KnowledgeEntryOut struct {
	ID          string             `json:"id"`
	Kind        string             `json:"kind" enum:"note,decision,term,metric"`
	Title       string             `json:"title"`
	Body        string             `json:"body"`
	Tags        []string           `json:"tags" doc:"gate:pii when the personal-data gate holds the entry back; snapshot:<id> on decisions"`
	Links       []KnowledgeLinkOut `json:"links" doc:"Datasets (and columns) the entry is about, those the caller can see"`
	Outdated    bool               `json:"outdated"`
	AuthorID    *string            `json:"author_id"`
	AIGenerated bool               `json:"ai_generated" doc:"Always false: entries are people's text"`
	AIModel     *string            `json:"ai_model" doc:"Always null"`
	Score       *float64           `json:"score" doc:"Fused reciprocal-rank score (k=60) in a search with q; null otherwise"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
}

func (s *Server) knowledgeRoutes() {
	entryID := param{Name: "entry_id", In: "path", Type: "string", Required: true, MaxLen: 64}
	s.register(operation{ID: "listKnowledgeEntries", Method: http.MethodGet, Path: "/api/v1/knowledge", Tag: "knowledge",
		List: true, ListDefault: knowledge.DefaultList, Response: []KnowledgeEntryOut{},
		Summary: "Knowledge entries; with q a hybrid search (total is the fused list size)",
		Desc: "With q: the entries matched by full-text search (Portuguese, English and Spanish configurations) and those " +
			"trigram-similar to q, both on text folded to lower case without accents (\"analise\" finds \"análise\"), " +
			"fused by reciprocal rank (k=60), best first; X-Total-Count is the size of the fused list. Without q: newest " +
			"first. Outdated entries, and those the personal-data gate holds back (tag gate:pii), only with include_outdated=true.",
		Params: []param{
			{Name: "q", In: "query", Type: "string", MaxLen: knowledge.MaxQuery},
			{Name: "kind", In: "query", Type: "string", Enum: knowledge.Kinds},
			{Name: "tag", In: "query", Type: "string", MaxLen: knowledge.MaxTag},
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64, Desc: "Entries about the dataset"},
			{Name: "include_outdated", In: "query", Type: "boolean", Default: false},
		}}, s.handleKnowledgeList)
	s.register(operation{ID: "createKnowledgeEntry", Method: http.MethodPost, Path: "/api/v1/knowledge", Tag: "knowledge",
		Status: http.StatusCreated, Body: KnowledgeEntryIn{}, Response: KnowledgeEntryOut{},
		Summary: "Add a note, decision, glossary term or metric definition (member or admin session)",
		Desc: "A decision is tagged snapshot:<id>, the knowledge-graph snapshot it was made on (a new snapshot when the graph " +
			"changed since the last). Text holding personal data (e-mail addresses, NIF, phone numbers, IBAN) is kept but " +
			"tagged gate:pii and outdated: it leaves searches and the knowledge graph. 404 for a link to a dataset the caller " +
			"cannot see; 422 for a column the dataset does not have."}, s.handleKnowledgeCreate)
	s.register(operation{ID: "getKnowledgeEntry", Method: http.MethodGet, Path: "/api/v1/knowledge/{entry_id}", Tag: "knowledge",
		Summary: "One knowledge entry", Params: []param{entryID}, Response: KnowledgeEntryOut{}}, s.handleKnowledgeGet)
	s.register(operation{ID: "updateKnowledgeEntry", Method: http.MethodPatch, Path: "/api/v1/knowledge/{entry_id}", Tag: "knowledge",
		Summary: "Change a knowledge entry (member or admin session)", Params: []param{entryID}, Body: KnowledgeEntryPatchIn{},
		Response: KnowledgeEntryOut{},
		Desc: "New text passes the personal-data gate as at creation. outdated=false on a gate:pii entry re-runs the gate: " +
			"clean text clears the tag; personal data still there answers 422 service_knowledge_reactivate_contains_pii " +
			"(detail.kinds names the kinds found, never the values). Tags cannot add or remove gate:pii.",
		Errors: map[int]string{http.StatusUnprocessableEntity: "validation_error, service_knowledge_reactivate_contains_pii"}},
		s.handleKnowledgeUpdate)
}

func toKnowledgeOut(e knowledge.Entry, search bool) KnowledgeEntryOut {
	out := KnowledgeEntryOut{ID: e.ID, Kind: e.Kind, Title: e.Title, Body: e.Body, Tags: e.Tags, Links: []KnowledgeLinkOut{},
		Outdated: e.Outdated, AuthorID: optStr(e.AuthorID), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	for _, l := range e.Links {
		out.Links = append(out.Links, KnowledgeLinkOut{DatasetID: l.DatasetID, Column: optStr(l.Column)})
	}
	if search {
		sc := e.Score
		out.Score = &sc
	}
	return out
}

func knowledgeLinks(in []KnowledgeLinkIn) []knowledge.Link {
	out := make([]knowledge.Link, 0, len(in))
	for _, l := range in {
		out = append(out, knowledge.Link{DatasetID: l.DatasetID, Column: l.Column})
	}
	return out
}

func (s *Server) handleKnowledgeList(w http.ResponseWriter, r *http.Request, in *input) {
	q := knowledge.Query{Q: in.String("q"), Kind: in.String("kind"), Tag: in.String("tag"), DatasetID: in.String("dataset_id"), Page: in.Page()}
	if b := in.Bool("include_outdated"); b != nil {
		q.IncludeOutdated = *b
	}
	l, err := s.deps.Knowledge.Search(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]KnowledgeEntryOut, 0, len(l.Items))
	for _, e := range l.Items {
		out = append(out, toKnowledgeOut(e, q.Q != nil))
	}
	list(w, l.Total, out)
}

func (s *Server) handleKnowledgeCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body KnowledgeEntryIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.deps.Knowledge.Create(r.Context(), knowledge.EntryInput{Kind: body.Kind, Title: body.Title, Body: body.Body,
		Tags: body.Tags, Links: knowledgeLinks(body.Links)})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toKnowledgeOut(e, false))
}

func (s *Server) handleKnowledgeGet(w http.ResponseWriter, r *http.Request, in *input) {
	e, err := s.deps.Knowledge.Get(r.Context(), in.Path("entry_id"))
	s.reply(w, r, err, func() any { return toKnowledgeOut(e, false) })
}

func (s *Server) handleKnowledgeUpdate(w http.ResponseWriter, r *http.Request, in *input) {
	var body KnowledgeEntryPatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	p := knowledge.EntryPatch{Title: body.Title, Body: body.Body, Tags: body.Tags, Outdated: body.Outdated}
	if body.Links != nil {
		l := knowledgeLinks(*body.Links)
		p.Links = &l
	}
	e, err := s.deps.Knowledge.Update(r.Context(), in.Path("entry_id"), p)
	s.reply(w, r, err, func() any { return toKnowledgeOut(e, false) })
}
