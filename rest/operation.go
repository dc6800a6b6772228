package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/vigia-data/vigia"
)

// maxBody is the largest JSON body an operation reads unless it sets its own.
const maxBody = 1 << 20

// operation declares one endpoint once: its route, who may call it, its parameters
// with their bounds, and its schemas. Routing, parameter validation and the OpenAPI
// document all come from this declaration.
type operation struct {
	ID      string
	Method  string
	Path    string // chi pattern, e.g. /api/v1/datasets/{dataset_id}
	Summary string
	Tag     string
	Desc    string
	// Public operations need no credential.
	Public bool
	// Probe marks liveness, readiness and version: exempt from the per-IP limit, bounded
	// by their own generous one.
	Probe bool
	// TokenWrite marks a write an API token may call (contract part 5).
	TokenWrite bool
	Params     []param
	Body       any // prototype of the request body (schema only)
	// OptionalBody documents the body as optional (actions with an optional note).
	OptionalBody bool
	Response     any // prototype of the success body (schema only)
	Status       int // success status; 200 by default
	// List operations take limit/offset and answer X-Total-Count. ListDefault is the
	// service's page default (a list without one answers vigia.MaxLimit).
	List        bool
	ListDefault int
	// ContentType of a non-JSON success body.
	ContentType string
	// MoreContentTypes are further file types the success body may come in.
	MoreContentTypes []string
	// NoContent, when set, documents a 204 the operation answers instead (its reason).
	NoContent string
	// Headers documents response headers of the success answers (name → description).
	Headers map[string]string
	// Errors documents error statuses beyond the usual ones (status → description).
	Errors map[int]string
	// MaxBody is the largest request body the operation reads (maxBody by default).
	MaxBody int64
	// BodyMedia documents a body that is no JSON object (a file): the media types it may
	// come in. The handler reads it (RawBody is implied).
	BodyMedia []string
	// RawBody leaves the body to the service, which bounds and checks it after its own
	// rate limit and signature (the inbound ticket webhook).
	RawBody bool
	// Also documents further non-error answers (e.g. 201 on a first write, 503 from
	// readiness) with their body prototype (nil: no body).
	Also       map[int]alsoAnswer
	Deprecated *deprecation
	handler    func(w http.ResponseWriter, r *http.Request, in *input)
}

// alsoAnswer is a documented answer besides the operation's success status.
type alsoAnswer struct {
	Desc string
	Body any
}

// deprecation marks an operation deprecated (RFC 9745, RFC 8594).
type deprecation struct {
	Since  time.Time
	Sunset time.Time
	Link   string
}

// param is a path or query parameter with its bounds.
type param struct {
	Name     string
	In       string // path or query
	Type     string // string, integer, number, boolean
	Desc     string
	Required bool
	Min, Max *int64
	MaxLen   int
	Enum     []string
	Default  any
}

func intp(v int64) *int64 { return &v }

// input is an operation's validated parameters.
type input struct {
	r      *http.Request
	values map[string]any
}

// Path returns a path parameter.
func (in *input) Path(name string) string { return chi.URLParam(in.r, name) }

// String returns an optional string parameter.
func (in *input) String(name string) *string {
	if v, ok := in.values[name].(string); ok {
		return &v
	}
	return nil
}

// Int returns an integer parameter (its default when absent).
func (in *input) Int(name string) int {
	v, _ := in.values[name].(int64)
	return int(v)
}

// OptInt returns an optional integer parameter (its default when absent), nil when
// neither was given.
func (in *input) OptInt(name string) *int {
	if v, ok := in.values[name].(int64); ok {
		n := int(v)
		return &n
	}
	return nil
}

// Bool returns an optional boolean parameter.
func (in *input) Bool(name string) *bool {
	if v, ok := in.values[name].(bool); ok {
		return &v
	}
	return nil
}

// Page returns the list window (parse gave limit and offset their defaults).
func (in *input) Page() vigia.Page {
	return vigia.PageOf(in.OptInt("limit"), in.OptInt("offset"), vigia.MaxLimit)
}

// Decode reads a JSON body into dst: unknown fields, bad JSON and a body over max
// bytes are refused without echoing what was sent.
func (in *input) Decode(dst any, max int64) error {
	if max <= 0 {
		max = maxBody
	}
	body := http.MaxBytesReader(nil, in.r.Body, max)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooLarge *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooLarge):
			return &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
		case errors.Is(err, io.EOF):
			return vigia.Invalid(vigia.Field("missing", nil))
		case errors.As(err, &typeErr):
			return vigia.Invalid(vigia.Field("value_error", nil, strings.Split(typeErr.Field, ".")...))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return vigia.Invalid(vigia.Field("extra_forbidden", nil, vigia.SafeName(name)))
		default:
			return vigia.Invalid(vigia.Field("json_invalid", nil))
		}
	}
	if dec.More() {
		return vigia.Invalid(vigia.Field("json_invalid", nil))
	}
	return nil
}

// parse validates the operation's parameters; the error lists every bad one.
func (op *operation) parse(r *http.Request) (*input, error) {
	in := &input{r: r, values: map[string]any{}}
	q := r.URL.Query()
	var fields []vigia.FieldError
	for _, p := range op.allParams() {
		var raw string
		var present bool
		if p.In == "path" {
			raw = chi.URLParam(r, p.Name)
			present = true
		} else {
			vals, ok := q[p.Name]
			present = ok && len(vals) > 0
			if present {
				raw = vals[0]
			}
		}
		if !present {
			if p.Required {
				fields = append(fields, vigia.Field("missing", nil, p.Name))
			} else if p.Default != nil {
				in.values[p.Name] = p.Default
			}
			continue
		}
		if vigia.BadText(raw) {
			fields = append(fields, vigia.Field("value_error", nil, p.Name))
			continue
		}
		v, f := p.check(raw)
		if f != nil {
			fields = append(fields, *f)
			continue
		}
		in.values[p.Name] = v
	}
	if len(fields) > 0 {
		return nil, vigia.Invalid(fields...)
	}
	return in, nil
}

func (p param) check(raw string) (any, *vigia.FieldError) {
	loc := []string{p.Name}
	fail := func(typ string, ctx map[string]any) (any, *vigia.FieldError) {
		f := vigia.Field(typ, ctx, loc...)
		return nil, &f
	}
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fail("int_parsing", nil)
		}
		if p.Min != nil && n < *p.Min {
			return fail("greater_than_equal", map[string]any{"ge": *p.Min})
		}
		if p.Max != nil && n > *p.Max {
			return fail("less_than_equal", map[string]any{"le": *p.Max})
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return fail("float_parsing", nil)
		}
		if p.Min != nil && n < float64(*p.Min) {
			return fail("greater_than_equal", map[string]any{"ge": *p.Min})
		}
		if p.Max != nil && n > float64(*p.Max) {
			return fail("less_than_equal", map[string]any{"le": *p.Max})
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(raw) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return fail("bool_parsing", nil)
	default:
		if p.MaxLen > 0 && len([]rune(raw)) > p.MaxLen {
			return fail("string_too_long", map[string]any{"max_length": p.MaxLen})
		}
		if len(p.Enum) > 0 {
			for _, e := range p.Enum {
				if raw == e {
					return raw, nil
				}
			}
			return fail("enum", nil)
		}
		return raw, nil
	}
}

// allParams adds limit and offset to list operations.
func (op *operation) allParams() []param {
	if !op.List {
		return op.Params
	}
	def := op.ListDefault
	if def == 0 {
		def = vigia.MaxLimit
	}
	return append(append([]param{}, op.Params...),
		param{Name: "limit", In: "query", Type: "integer", Min: intp(1), Max: intp(vigia.MaxLimit), Default: int64(def), Desc: "Page size (1-500)"},
		param{Name: "offset", In: "query", Type: "integer", Min: intp(0), Default: int64(0), Desc: "Items to skip (>= 0)"},
	)
}

// locate prefixes a field named by a service or by this transport with where it came
// from in the request: the location of the parameter of that name (path or query),
// else the body for an operation that reads one, else the query. Services and
// handlers name fields only (["limit"], ["params", "column"]); this is the one place
// that says "query", "path" or "body". A nil operation (a route outside the table)
// leaves loc as it is.
func (op *operation) locate(loc []string) []string {
	if op == nil {
		return loc
	}
	where := "query"
	if op.Body != nil || len(op.BodyMedia) > 0 {
		where = "body"
	}
	if len(loc) > 0 {
		for _, p := range op.allParams() {
			if p.Name == loc[0] {
				where = p.In
				break
			}
		}
	}
	return append([]string{where}, loc...)
}

// register adds an operation to the router and the document.
func (s *Server) register(op operation, h func(w http.ResponseWriter, r *http.Request, in *input)) {
	op.handler = h
	if managedOperations[op.ID] {
		op.Errors = withManaged(op.Errors)
	}
	if op.Status == 0 {
		op.Status = http.StatusOK
	}
	o := &op
	s.ops = append(s.ops, o)
	s.opByRoute[op.Method+" "+op.Path] = o
	s.root.Method(op.Method, op.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A deprecated operation's headers are set by guard, before any refusal.
		in, err := o.parse(r)
		if err == nil {
			err = o.checkBody(r)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		o.handler(w, r, in)
	}))
}

// checkBody reads the request body once at the edge (at most MaxBody bytes: 413 above)
// and refuses a NUL character, invalid UTF-8 or a lone surrogate in any of its strings
// with 422 value_error at the string's loc, before any handler or service sees it.
// The handler reads the same bytes afterwards.
func (op *operation) checkBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody || op.RawBody || len(op.BodyMedia) > 0 {
		return nil
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, op.bodyLimit()))
	_ = r.Body.Close()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
		}
		return vigia.Invalid(vigia.Field("json_invalid", nil))
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return vigia.CheckJSONText(raw)
}

// bodyLimit is the largest body the operation reads.
func (op *operation) bodyLimit() int64 {
	if op.MaxBody > 0 {
		return op.MaxBody
	}
	return maxBody
}

func setDeprecation(w http.ResponseWriter, d *deprecation) {
	w.Header().Set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
	if !d.Sunset.IsZero() {
		w.Header().Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
	}
	if d.Link != "" {
		w.Header().Add("Link", "<"+d.Link+`>; rel="deprecation"; type="text/html"`)
	}
}

// list answers a page with X-Total-Count.
func list[T any](w http.ResponseWriter, total int, items []T) {
	if items == nil {
		items = []T{}
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, items)
}
