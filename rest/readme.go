package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/readme"
)

// ReadmeOut is a dataset's README.
type ReadmeOut struct {
	DatasetID            string     `json:"dataset_id"`
	ContentMD            string     `json:"content_md" doc:"The draft: the edited one, else written from facts on this read"`
	Edited               bool       `json:"edited" doc:"true when a session edited the draft"`
	EditedBy             *string    `json:"edited_by"`
	EditedAt             *time.Time `json:"edited_at"`
	AIGenerated          bool       `json:"ai_generated" doc:"Always false: the draft is written deterministically from facts"`
	AIModel              *string    `json:"ai_model" doc:"Always null"`
	GeneratedAt          *time.Time `json:"generated_at" doc:"When the draft was written from facts; null for an edited draft"`
	PublishedMD          *string    `json:"published_md" doc:"null until published"`
	PublishedBy          *string    `json:"published_by"`
	PublishedAt          *time.Time `json:"published_at"`
	PublishedAIGenerated bool       `json:"published_ai_generated"`
	PublishedAIModel     *string    `json:"published_ai_model"`
}

// ReadmeIn edits the draft.
type ReadmeIn struct {
	ContentMD string `json:"content_md" minLength:"1" maxLength:"100000"`
}

func (s *Server) readmeRoutes() {
	s.register(operation{ID: "datasetReadme", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/readme", Tag: "datasets",
		Params: []param{datasetIDParam}, Response: ReadmeOut{},
		Summary: "Draft and published README with ai_generated, ai_model, published_ai_generated, published_ai_model",
		Desc: "Until a session edits it, the draft is written from facts on each read: purpose from the domains and lineage, " +
			"columns with types, semantic types and sensitivity, quality summary, owners, consumers — names and figures, never " +
			"values. Nothing is AI-generated."}, s.handleReadme)
	s.register(operation{ID: "datasetReadmeMarkdown", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/readme.md", Tag: "datasets",
		Params: []param{datasetIDParam}, ContentType: "text/markdown",
		Summary: "The README as Markdown: the published text, else the draft",
		Desc: "An AI-generated README would start with front matter (ai-generated, ai-model, ai-generated-at); the README is " +
			"never AI-generated here, so the export is the text alone."}, s.handleReadmeMarkdown)
	s.register(operation{ID: "editDatasetReadme", Method: http.MethodPut, Path: "/api/v1/datasets/{dataset_id}/readme", Tag: "datasets",
		Params: []param{datasetIDParam}, Body: ReadmeIn{}, Response: ReadmeOut{},
		Summary: "Replace the README draft (member or admin session)"}, s.handleReadmeEdit)
	s.register(operation{ID: "publishDatasetReadme", Method: http.MethodPost, Path: "/api/v1/datasets/{dataset_id}/readme/publish", Tag: "datasets",
		Params: []param{datasetIDParam}, Response: ReadmeOut{},
		Summary: "Publish the current README draft (member or admin session)"}, s.handleReadmePublish)
}

func toReadmeOut(r readme.Readme) ReadmeOut {
	return ReadmeOut{DatasetID: r.DatasetID, ContentMD: r.Draft, Edited: r.Edited, EditedBy: r.EditedBy, EditedAt: r.EditedAt,
		GeneratedAt: r.GeneratedAt, PublishedMD: r.Published, PublishedBy: r.PublishedBy, PublishedAt: r.PublishedAt}
}

func (s *Server) handleReadme(w http.ResponseWriter, r *http.Request, in *input) {
	rd, err := s.deps.Readmes.Get(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toReadmeOut(rd) })
}

func (s *Server) handleReadmeMarkdown(w http.ResponseWriter, r *http.Request, in *input) {
	md, err := s.deps.Readmes.Markdown(r.Context(), in.Path("dataset_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(md))
}

func (s *Server) handleReadmeEdit(w http.ResponseWriter, r *http.Request, in *input) {
	var body ReadmeIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rd, err := s.deps.Readmes.Edit(r.Context(), in.Path("dataset_id"), body.ContentMD)
	s.reply(w, r, err, func() any { return toReadmeOut(rd) })
}

func (s *Server) handleReadmePublish(w http.ResponseWriter, r *http.Request, in *input) {
	rd, err := s.deps.Readmes.Publish(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toReadmeOut(rd) })
}
