package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/suggest"
)

// SuggestionService is what the transport needs of suggestions.
type SuggestionService interface {
	List(ctx context.Context, category, datasetID *string, page vigia.Page) (vigia.List[suggest.Suggestion], error)
	Get(ctx context.Context, id string) (suggest.Suggestion, error)
	Accept(ctx context.Context, id string) (suggest.Suggestion, error)
	Dismiss(ctx context.Context, id string) (suggest.Suggestion, error)
	Rehearse(ctx context.Context, id string, predicate *string) (suggest.Suggestion, error)
	Open(ctx context.Context, datasetID string) ([]suggest.Suggestion, error)
}

// SuggestionReasonOut says why a rehearsal counted nothing.
type SuggestionReasonOut struct {
	Code    string         `json:"code" doc:"no_diagnosis, aggregate, limit, not_select, forbidden, function_not_allowed, unknown_table, timeout, source_error, blackout"`
	Params  map[string]any `json:"params"`
	Message string         `json:"message" doc:"pt-PT"`
}

// RehearsalOut is a suggestion's last rehearsal: counts, status and actor only.
type RehearsalOut struct {
	Version      int                  `json:"version"`
	Status       string               `json:"status" enum:"queued,ok,blocked,timeout,error"`
	AffectedRows *int64               `json:"affected_rows"`
	TotalRows    *int64               `json:"total_rows"`
	Pct          *float64             `json:"pct"`
	RequestedAt  time.Time            `json:"requested_at"`
	RanAt        *time.Time           `json:"ran_at"`
	DurationMS   *int64               `json:"duration_ms"`
	Actor        string               `json:"actor"`
	Reason       *SuggestionReasonOut `json:"reason"`
}

// SuggestionImpactOut is what a suggestion's change would touch.
type SuggestionImpactOut struct {
	EstimatedRows       *int64  `json:"estimated_rows" doc:"The rehearsal's count with rehearsal status ok, else the sample's estimate"`
	EstimatedRowsSample *int64  `json:"estimated_rows_sample" doc:"The estimate from the profile's sample"`
	RowsSource          string  `json:"rows_source" enum:"sample,rehearsal"`
	RuleID              *string `json:"rule_id" doc:"The rule an accepted rule suggestion created"`
}

// SuggestionItemOut is a suggestion.
type SuggestionItemOut struct {
	ID          string              `json:"id"`
	DatasetID   string              `json:"dataset_id"`
	DatasetName string              `json:"dataset_name"`
	Category    string              `json:"category" doc:"rule, parsing, domain (a domain for a dataset without one, from its lineage neighbours), owner (an owner for a dataset whose domains have none, from its lineage neighbours' domains), tuning (a metric's anomaly threshold, anomaly_threshold:<metric>:<column>, or a rule's tolerance, rule_tolerance:<rule id>, from their own history); enrichment exists and is created only on request"`
	Signature   string              `json:"signature" doc:"parse_standardize:<column>, not_null:<column>, referential:<column> (a declared foreign key), domain:<domain id>, owner:<domain id> (the domain that gets the owner)"`
	Column      *string             `json:"column"`
	Status      string              `json:"status" enum:"open,accepted,dismissed"`
	Params      map[string]any      `json:"params" doc:"masks (mask and sample count, digit 9, letter A; never values) and target_mask for parsing; rule_type and column for rules"`
	AIGenerated bool                `json:"ai_generated"`
	AIModel     *string             `json:"ai_model"`
	GeneratedAt *time.Time          `json:"generated_at"`
	Rehearsal   *RehearsalOut       `json:"rehearsal"`
	Impact      SuggestionImpactOut `json:"impact"`
	CreatedAt   time.Time           `json:"created_at"`
	UpdatedAt   time.Time           `json:"updated_at"`
}

// RehearsalIn optionally gives a rehearsal its own predicate.
type RehearsalIn struct {
	Predicate *string `json:"predicate,omitempty" maxLength:"2000" doc:"A filter to try instead of the one the suggestion implies: a SQL condition on the dataset's table, counted as SELECT count(*) FROM <table> WHERE <predicate> after the dialect's parser accepts it. Never stored."`
}

var suggestionIDParam = param{Name: "suggestion_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) suggestionRoutes() {
	s.register(operation{ID: "listSuggestions", Method: http.MethodGet, Path: "/api/v1/suggestions", Tag: "suggestions",
		List: true, ListDefault: suggest.PageDefault, Summary: "Suggestions on the datasets the caller can see, newest first",
		Params: []param{{Name: "category", In: "query", Type: "string", Enum: []string{"rule", "parsing", "domain", "owner", "tuning", "enrichment"}},
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64}},
		Response: []SuggestionItemOut{}}, s.handleSuggestionList)
	s.register(operation{ID: "getSuggestion", Method: http.MethodGet, Path: "/api/v1/suggestions/{suggestion_id}", Tag: "suggestions",
		Summary: "One suggestion", Params: []param{suggestionIDParam}, Response: SuggestionItemOut{}}, s.handleSuggestionGet)
	s.register(operation{ID: "acceptSuggestion", Method: http.MethodPost, Path: "/api/v1/suggestions/{suggestion_id}/accept", Tag: "suggestions",
		Summary: "Accept an open suggestion; a rule suggestion creates its rule (member or admin session)", Params: []param{suggestionIDParam},
		Response: SuggestionItemOut{}, Errors: map[int]string{http.StatusConflict: "suggestion_not_open: already accepted or dismissed; suggestion_no_longer_holds: the proposal stopped being true"},
		Desc: "409 suggestion_not_open when already accepted or dismissed; 409 suggestion_no_longer_holds when an owner suggestion's domain got an owner meanwhile."}, s.handleSuggestionAccept)
	s.register(operation{ID: "dismissSuggestion", Method: http.MethodPost, Path: "/api/v1/suggestions/{suggestion_id}/dismiss", Tag: "suggestions",
		Summary: "Dismiss an open suggestion (member or admin session)", Params: []param{suggestionIDParam}, Response: SuggestionItemOut{},
		Errors: map[int]string{http.StatusConflict: "suggestion_not_open: already accepted or dismissed"},
		Desc:   "409 suggestion_not_open when already accepted or dismissed."}, s.handleSuggestionDismiss)
	s.register(operation{ID: "rehearseSuggestion", Method: http.MethodPost, Path: "/api/v1/suggestions/{suggestion_id}/rehearsal", Tag: "suggestions",
		Summary: "Count on the source the rows the suggestion's change would touch (member or admin session)", Params: []param{suggestionIDParam},
		Body: RehearsalIn{}, OptionalBody: true, Response: SuggestionItemOut{},
		Desc: "Vigia builds SELECT count(*) FROM <the dataset's table> WHERE <predicate>, checks it with the dialect's parser (one SELECT, " +
			"functions of an allowlist, the dataset's own table only: else blocked with not_select, forbidden, function_not_allowed or " +
			"unknown_table) and runs it in a read-only transaction with a timeout (timeout, source_error). Only the counts, status, " +
			"duration and actor are stored; impact.rows_source is then rehearsal."}, s.handleSuggestionRehearse)
}

func (s *Server) toSuggestionOut(r *http.Request, sg suggest.Suggestion) SuggestionItemOut {
	out := SuggestionItemOut{ID: sg.ID, DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, Category: sg.Category, Signature: sg.Signature,
		Status: sg.Status, Params: sg.Params, CreatedAt: sg.CreatedAt, UpdatedAt: sg.UpdatedAt,
		Impact: SuggestionImpactOut{EstimatedRows: sg.EstimatedRowsSample, EstimatedRowsSample: sg.EstimatedRowsSample, RowsSource: "sample", RuleID: sg.RuleID}}
	if out.Params == nil {
		out.Params = map[string]any{}
	}
	if sg.Column != "" {
		c := sg.Column
		out.Column = &c
	}
	if h := sg.Rehearsal; h != nil {
		ro := &RehearsalOut{Version: h.Version, Status: h.Status, AffectedRows: h.AffectedRows, TotalRows: h.TotalRows, Pct: h.Pct,
			RequestedAt: h.RequestedAt, Actor: h.Actor}
		if !h.RanAt.IsZero() {
			ran, d := h.RanAt, h.DurationMS
			ro.RanAt, ro.DurationMS = &ran, &d
		}
		if h.Reason != nil {
			params := h.Reason.Params
			if params == nil {
				params = map[string]any{}
			}
			ro.Reason = &SuggestionReasonOut{Code: h.Reason.Code, Params: params,
				Message: s.deps.Messages.Message("pt-PT", "rehearsal."+h.Reason.Code, params)}
		}
		out.Rehearsal = ro
		if h.Status == suggest.RehearsalOK {
			out.Impact.EstimatedRows, out.Impact.RowsSource = h.AffectedRows, suggest.RowsSourceRehearsal
		}
	}
	return out
}

func (s *Server) handleSuggestionList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Suggestions.List(r.Context(), in.String("category"), in.String("dataset_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]SuggestionItemOut, 0, len(res.Items))
	for _, sg := range res.Items {
		out = append(out, s.toSuggestionOut(r, sg))
	}
	list(w, res.Total, out)
}

func (s *Server) suggestionAnswer(w http.ResponseWriter, r *http.Request, sg suggest.Suggestion, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.toSuggestionOut(r, sg))
}

func (s *Server) handleSuggestionGet(w http.ResponseWriter, r *http.Request, in *input) {
	sg, err := s.deps.Suggestions.Get(r.Context(), in.Path("suggestion_id"))
	s.suggestionAnswer(w, r, sg, err)
}

func (s *Server) handleSuggestionAccept(w http.ResponseWriter, r *http.Request, in *input) {
	sg, err := s.deps.Suggestions.Accept(r.Context(), in.Path("suggestion_id"))
	s.suggestionAnswer(w, r, sg, err)
}

func (s *Server) handleSuggestionDismiss(w http.ResponseWriter, r *http.Request, in *input) {
	sg, err := s.deps.Suggestions.Dismiss(r.Context(), in.Path("suggestion_id"))
	s.suggestionAnswer(w, r, sg, err)
}

func (s *Server) handleSuggestionRehearse(w http.ResponseWriter, r *http.Request, in *input) {
	var body RehearsalIn
	if r.ContentLength != 0 {
		if err := in.Decode(&body, 0); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	sg, err := s.deps.Suggestions.Rehearse(r.Context(), in.Path("suggestion_id"), body.Predicate)
	s.suggestionAnswer(w, r, sg, err)
}
