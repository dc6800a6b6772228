package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/report"
)

// ReportService is what the transport needs of reports.
type ReportService interface {
	CreateReport(ctx context.Context, in report.CreateInput) (report.Report, error)
	Reports(ctx context.Context, page vigia.Page) (vigia.List[report.Report], error)
	Report(ctx context.Context, id string) (report.Report, error)
	ExportHTML(ctx context.Context, id string) ([]byte, error)
	ExportPDF(ctx context.Context, id string) ([]byte, error)
	ExportDeck(ctx context.Context, id string) ([]byte, error)
}

// ReportIn asks for a report.
type ReportIn struct {
	Type      string  `json:"type" enum:"workspace_overview,domain,dataset,incident"`
	Persona   string  `json:"persona" enum:"executive,engineering,steward"`
	SubjectID *string `json:"subject_id,omitempty" maxLength:"64" doc:"The domain, dataset or incident the report is about; required for those types, refused for workspace_overview"`
	Language  *string `json:"language,omitempty" enum:"pt,en,es" doc:"Absent: the account's language, else the workspace's, else pt"`
}

// ReportOut is a report Vigia wrote from its own facts.
type ReportOut struct {
	ID          string    `json:"id"`
	Type        string    `json:"type" enum:"workspace_overview,domain,dataset,incident"`
	Persona     string    `json:"persona" enum:"executive,engineering,steward"`
	SubjectID   *string   `json:"subject_id"`
	Title       string    `json:"title"`
	Language    *string   `json:"language" enum:"pt,en,es" doc:"null for older reports, which are pt"`
	ContentMD   string    `json:"content_md" doc:"Markdown; section headings stay Portuguese"`
	Score       *float64  `json:"score" doc:"Mean of the latest scores of the report's datasets when it was written"`
	AIGenerated bool      `json:"ai_generated" doc:"false: Vigia writes reports from its own facts, no language model is involved"`
	AIModel     *string   `json:"ai_model" doc:"null: no language model"`
	GeneratedAt time.Time `json:"generated_at"`
	RoutineID   *string   `json:"routine_id" doc:"The key of the routine that wrote the report; null when a person asked for it"`
}

var reportIDParam = param{Name: "report_id", In: "path", Type: "string", Required: true, MaxLen: 64}

// Media types of the exports.
const (
	mediaHTML = "text/html"
	mediaPDF  = "application/pdf"
	mediaPPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
)

func (s *Server) reportRoutes() {
	s.register(operation{ID: "createReport", Method: http.MethodPost, Path: "/api/v1/reports", Tag: "reports", Status: http.StatusCreated,
		Summary: "Write a report from Vigia's facts (member or admin session)", Body: ReportIn{}, Response: ReportOut{},
		Desc: "Written deterministically from the facts the caller can see over the last 30 days: scores and trend, dimensions, " +
			"verdicts, incidents and their blast radius, SLA attainment, top issues, trust decisions, contract status; the persona " +
			"chooses the sections. ai_generated is false and ai_model null. 404 when the subject is missing or invisible."},
		s.handleReportCreate)
	s.register(operation{ID: "listReports", Method: http.MethodGet, Path: "/api/v1/reports", Tag: "reports", List: true,
		ListDefault: report.PageDefault, Response: []ReportOut{},
		Summary: "Reports the caller may read, newest first",
		Desc: "A report whose facts include a restricted-access domain is read by its author and admins only; routines' reports " +
			"never include one."}, s.handleReportList)
	s.register(operation{ID: "getReport", Method: http.MethodGet, Path: "/api/v1/reports/{report_id}", Tag: "reports",
		Summary: "One report with its language and ai fields", Params: []param{reportIDParam}, Response: ReportOut{}}, s.handleReportGet)
	s.register(operation{ID: "exportReportHTML", Method: http.MethodGet, Path: "/api/v1/reports/{report_id}/export", Tag: "reports",
		Summary: "The report as one self-contained HTML page", ContentType: mediaHTML, Params: []param{reportIDParam},
		Desc: "No external resource: styles inline, the score trend, dimension bars and incident timeline as inline SVG. " +
			"Carries the ai-generated marker (meta ai-generated and the footer)."}, s.handleReportHTML)
	s.register(operation{ID: "exportReportPDF", Method: http.MethodGet, Path: "/api/v1/reports/{report_id}/export.pdf", Tag: "reports",
		Summary: "The report as a PDF", ContentType: mediaPDF, Params: []param{reportIDParam},
		Desc: "Generated in Go with the same charts, in a font that carries Portuguese accents. The ai-generated marker is in " +
			"every page's footer and in the document's subject and keywords. Always built in: never 501."}, s.handleReportPDF)
	s.register(operation{ID: "exportReportPPTX", Method: http.MethodGet, Path: "/api/v1/reports/{report_id}/export.pptx", Tag: "reports",
		Summary: "An executive workspace overview as a 5-slide deck", ContentType: mediaPPTX, Params: []param{reportIDParam},
		Errors: map[int]string{http.StatusConflict: "The report is not an executive workspace_overview (report_deck_unsupported)"},
		Desc: "Office Open XML written by Vigia: headline, score and trend, incidents and blast radius, SLA and trust decisions, " +
			"contracts and dimensions; the ai-generated marker is on every slide and in the custom document properties. " +
			"Always built in: never 501."}, s.handleReportPPTX)
}

func toReportOut(r report.Report) ReportOut {
	return ReportOut{ID: r.ID, Type: r.Type, Persona: r.Persona, SubjectID: r.SubjectID, Title: r.Title, Language: r.Language,
		ContentMD: r.ContentMD, Score: r.Facts.Score, AIGenerated: r.AIGenerated, AIModel: r.AIModel, GeneratedAt: r.GeneratedAt,
		RoutineID: r.RoutineID}
}

func (s *Server) handleReportCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body ReportIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rep, err := s.deps.Reports.CreateReport(r.Context(), report.CreateInput{Type: body.Type, Persona: body.Persona,
		SubjectID: body.SubjectID, Language: body.Language})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/reports/"+rep.ID)
	writeJSON(w, http.StatusCreated, toReportOut(rep))
}

func (s *Server) handleReportList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Reports.Reports(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ReportOut, 0, len(res.Items))
	for _, rep := range res.Items {
		out = append(out, toReportOut(rep))
	}
	list(w, res.Total, out)
}

func (s *Server) handleReportGet(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.Reports.Report(r.Context(), in.Path("report_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toReportOut(rep))
}

func (s *Server) handleReportHTML(w http.ResponseWriter, r *http.Request, in *input) {
	body, err := s.deps.Reports.ExportHTML(r.Context(), in.Path("report_id"))
	s.writeFile(w, r, err, mediaHTML+"; charset=utf-8", "", body)
}

func (s *Server) handleReportPDF(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("report_id")
	body, err := s.deps.Reports.ExportPDF(r.Context(), id)
	s.writeFile(w, r, err, mediaPDF, "report-"+id+".pdf", body)
}

func (s *Server) handleReportPPTX(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("report_id")
	body, err := s.deps.Reports.ExportDeck(r.Context(), id)
	s.writeFile(w, r, err, mediaPPTX, "report-"+id+".pptx", body)
}

// writeFile answers an export: the file, or the error.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request, err error, contentType, filename string, body []byte) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Cache-Control", "no-store")
	if filename != "" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
