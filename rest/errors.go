package rest

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/vigia-data/vigia"
)

// ErrorOut is the contract's error envelope (part 7).
type ErrorOut struct {
	Detail     any    `json:"detail" doc:"Human-readable reason: a string, or on 422 a list of ValidationItem"`
	Code       string `json:"code" doc:"Stable code; decide on it, not on detail"`
	RequestID  string `json:"request_id" doc:"Equals the X-Request-ID header"`
	RetryAfter *int   `json:"retry_after,omitempty" doc:"Seconds to wait (429 only)"`
	Plan       string `json:"plan,omitempty" enum:"free,team,business" doc:"402 only: the workspace's plan"`
	Limit      *int   `json:"limit,omitempty" doc:"402 only: the limit reached (0 when the plan does not include the feature)"`
	// RequiredPlan and Quota say which limit a 402 is about.
	RequiredPlan string `json:"required_plan,omitempty" enum:"team,business" doc:"402 plan_limit only: the smallest plan that includes the feature"`
	Quota        string `json:"quota,omitempty" enum:"datasets,scans_per_day" doc:"402 org_quota only: the quota used up"`
}

// ValidationItem is one item of a 422 detail list. ctx holds only the rule's bounds;
// the received value is never returned.
type ValidationItem struct {
	Type string         `json:"type" doc:"Stable type, e.g. less_than_equal, missing"`
	Loc  []string       `json:"loc" doc:"Where: [query, limit], [body, name]"`
	Msg  string         `json:"msg" doc:"Human-readable message in the response language"`
	Ctx  map[string]any `json:"ctx" doc:"The rule's bounds only (gt, ge, lt, le, multiple_of, min_length, max_length, max_digits, decimal_places)"`
}

// writeError answers err with the contract envelope. Internal errors are logged with
// the request id and answered with a fixed message.
// reply answers 200 with what body returns, or the error when err is set (body is not
// called then): the end of every read handler.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, err error, body func() any) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body())
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := vigia.AsError(err)
	ctx := r.Context()
	status := vigia.HTTPStatus(e.Kind)
	if vigia.ClientClosed(ctx, err) {
		// The caller disconnected: nothing to answer, and not a server error.
		s.log.InfoContext(ctx, "client_closed", "request_id", vigia.RequestID(ctx), "method", r.Method, "route", routePattern(r))
		return
	}
	if status >= 500 {
		s.log.ErrorContext(ctx, "request failed", "request_id", vigia.RequestID(ctx),
			"method", r.Method, "route", routePattern(r), "code", e.Code, "cause", causeOf(e))
	}
	lang := vigia.Lang(ctx)
	out := ErrorOut{Code: e.Code, RequestID: vigia.RequestID(ctx)}
	if e.Kind == vigia.KindInvalid && e.Detail == nil {
		out.Detail = s.validationItems(r, e.Fields)
	} else if e.Detail != nil {
		d := map[string]any{"code": e.Code, "message": s.msgs.Message(lang, e.Key, e.Params)}
		for k, v := range e.Detail {
			if k != "code" && k != "message" {
				d[k] = v
			}
		}
		out.Detail = d
	} else {
		out.Detail = s.msgs.Message(lang, e.Key, e.Params)
	}
	if pl := e.Plan; pl != nil {
		limit := pl.Limit
		out.Plan, out.Limit, out.RequiredPlan, out.Quota = pl.Plan, &limit, pl.Required, pl.Quota
	}
	if e.Kind == vigia.KindRateLimited {
		ra := e.RetryAfter
		if ra < 1 {
			ra = 1
		}
		out.RetryAfter = &ra
		w.Header().Set("Retry-After", strconv.Itoa(ra))
	}
	writeJSON(w, status, out)
}

// validationItems renders 422 items in the request's language, each located by the
// request's operation (see locate); ctx keeps the rule's bounds only.
func (s *Server) validationItems(r *http.Request, fields []vigia.FieldError) []ValidationItem {
	lang := vigia.Lang(r.Context())
	op := s.opByRoute[r.Method+" "+routePattern(r)]
	items := make([]ValidationItem, 0, len(fields))
	for _, f := range fields {
		c := f.Bounds()
		items = append(items, ValidationItem{Type: f.Type, Loc: op.locate(f.Loc), Msg: s.msgs.FieldMessage(lang, f.Type, f.Ctx), Ctx: c})
	}
	return items
}

func causeOf(e *vigia.Error) string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		slog.Default().Debug("write response", "err", err)
	}
}

func notFound() error { return vigia.NotFound() }

func validID(id string) bool { return vigia.ValidID(id) }

// presence is whether a required body field was sent.
type presence struct {
	name string
	ok   bool
}

func present(name string, ok bool) presence { return presence{name, ok} }

// required answers 422 with a missing item for every required body field not sent.
func required(fields ...presence) error {
	var items []vigia.FieldError
	for _, f := range fields {
		if !f.ok {
			items = append(items, vigia.Field("missing", nil, f.name))
		}
	}
	if len(items) > 0 {
		return vigia.Invalid(items...)
	}
	return nil
}

func invalid(typ string, loc ...string) error { return vigia.Invalid(vigia.Field(typ, nil, loc...)) }
