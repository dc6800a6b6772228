package rest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/vigia-data/vigia"
)

// OpenAPI returns the OpenAPI 3.1 document of every registered operation, generated
// from the same declarations that route and validate requests.
func (s *Server) OpenAPI() ([]byte, error) {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	doc := &huma.OpenAPI{
		OpenAPI: "3.1.0",
		Info: &huma.Info{Title: "Vigia API", Version: APIVersion,
			Description: "Data-quality and lineage service. API tokens (Authorization: Bearer svc_…) are read-only " +
				"except the operations marked x-token-write. Every 4xx body is {detail, code, request_id}; 422 detail is a " +
				"list of {type, loc, msg, ctx} where ctx holds only the rule's bounds. Every response carries X-Request-ID; every " +
				"response under /api/ carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.",
			License: &huma.License{Name: "Proprietary"}},
		Servers: []*huma.Server{{URL: "/", Description: "The server this document is read from (paths carry /api/v1)"}},
		Paths:   map[string]*huma.PathItem{},
		Components: &huma.Components{Schemas: reg, SecuritySchemes: map[string]*huma.SecurityScheme{
			"bearer": {Type: "http", Scheme: "bearer", Description: "API token svc_<48 hex> or a session token"},
		}},
	}
	errSchema := s.errorSchemas(reg)
	tags := map[string]bool{}
	for _, op := range s.ops {
		tags[op.Tag] = true
		doc.AddOperation(s.openAPIOperation(reg, op, errSchema))
	}
	names := make([]string, 0, len(tags))
	for t := range tags {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		doc.Tags = append(doc.Tags, &huma.Tag{Name: t, Description: tagDescriptions[t]})
	}
	for _, sc := range reg.Map() {
		nullableEnums(sc, map[*huma.Schema]bool{})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, vigia.Internal(err)
	}
	return b, nil
}

// tagDescriptions says what each area of the API is for.
var tagDescriptions = map[string]string{
	"health":            "Liveness, readiness, version and this document; public, and exempt from the per-IP limit (they have their own)",
	"datasets":          "Datasets found by scans: columns, profiles, scores, verdicts and their history",
	"catalog":           "Reading the catalog: dataset context, trust facts, query log, search and usage",
	"connections":       "Sources Vigia reads: create, test, list; credentials are encrypted and never returned",
	"scans":             "Scans that discover and profile a connection's datasets",
	"issues":            "Issues raised by scans and rules: list, acknowledge, resolve, mute, assign",
	"incidents":         "Incidents: issues with their downstream impact",
	"rules":             "Quality rules on datasets and columns, and their results; rules as code (dbt, SodaCL, Great Expectations)",
	"rule-packs":        "Named, versioned sets of rules applied to columns by their semantic type",
	"signals":           "Signals: what changed in the data scan after scan",
	"lineage":           "Lineage: edges between datasets and columns, imports (dbt, OpenLineage), impact and paths",
	"knowledge":         "The knowledge graph built over datasets, lineage, owners and consumers",
	"governance":        "Data products (domains): owners, SLAs, readiness, public pages and trust decisions",
	"consumers":         "Consumers of datasets and domains (dashboards, models, jobs) and their recorded reads",
	"tickets":           "Ticket integrations (Jira, Linear, GitHub): targets, links and inbound events",
	"orchestrators":     "Orchestrator runs reported to Vigia",
	"record-validation": "Records checked against a dataset's rules before they are loaded",
	"rag-gate":          "The gate of AI retrieval: allow, warn or block per dataset, recording the read",
	"reconcile":         "Reconciliations between two datasets: counts and sums per group within a tolerance",
	"ide":               "Editor extensions: table references resolved to datasets, column metadata (never values)",
	"workspace":         "Workspace and account settings: default locale and time zone, currency, the person's locale; the egress addresses",
	"synthetic":         "Synthetic data generated from profiles, never from stored values, with a utility and privacy scorecard",
	"bi":                "BI tools' dataset refreshes (the warehouse datasets they read, their dashboards, failed and late refreshes) and the chargeback of Vigia's work",
	"dashboard":         "Dashboard reads for executive, management and finops audiences, with costs in the workspace currency",
	"compliance":        "Compliance dossiers from Vigia's facts: the EU AI Act Article 10 dossier, the AI-system register, sector verticals (saude_pt)",
	"suggestions":       "Suggestions from scans (rules, parsing), accepted, dismissed or rehearsed with counts only",
	"duplicates":        "Clusters of duplicate records of one entity within and across datasets, with confidence and its band",
	"reports":           "Reports Vigia writes from its own facts (no language model), and their HTML, PDF and slide-deck exports",
	"routines":          "The catalog of scheduled routines (weekly executive report, daily SLA-breach digest): schedule, switch, last run",
}

type errorRefs struct{ plain, validation *huma.Schema }

// errorSchemas registers the error envelope twice: with a string detail and with the
// 422 list.
func (s *Server) errorSchemas(reg huma.Registry) errorRefs {
	item := reg.Schema(reflect.TypeOf(ValidationItem{}), true, "ValidationItem")
	str := func(doc string) *huma.Schema { return &huma.Schema{Type: "string", Description: doc} }
	retry := &huma.Schema{Type: "integer", Description: "Seconds to wait (429 only)"}
	// detail is a string, or {code, message, ...} when structured (a refused dbt import
	// lists unmatched_names there).
	structured := &huma.Schema{Type: "object", Required: []string{"code", "message"}, Properties: map[string]*huma.Schema{
		"code": str("Stable code"), "message": str("Human-readable reason in the response language"),
	}, Description: "Structured detail; other members name what the caller needs to act (e.g. unmatched_names)"}
	// The contract's envelope: code is a string or null; detail a string, a structured
	// object, or (422) a list of items.
	plain := &huma.Schema{Type: "object", Required: []string{"detail", "code", "request_id"}, Properties: map[string]*huma.Schema{
		"detail": {OneOf: []*huma.Schema{str("Human-readable reason in the response language"), structured,
			{Type: "array", Items: item, Description: "One item per invalid parameter or field (422)"}}},
		"code":       {Type: "string", Nullable: true, Description: "Stable code; decide on it, not on detail. May be null"},
		"request_id": str("Equals the X-Request-ID header"), "retry_after": retry,
		"plan":          {Type: "string", Enum: []any{"free", "team", "business"}, Description: "402 only: the workspace's plan"},
		"limit":         {Type: "integer", Description: "402 only: the limit reached (0 when the plan does not include the feature)"},
		"required_plan": {Type: "string", Enum: []any{"team", "business"}, Description: "402 plan_limit only: the smallest plan that includes the feature"},
		"quota":         {Type: "string", Enum: []any{"datasets", "scans_per_day"}, Description: "402 org_quota only: the quota used up"},
	}}
	validation := &huma.Schema{Type: "object", Required: []string{"detail", "code", "request_id"}, Properties: map[string]*huma.Schema{
		"detail":     {Type: "array", Items: item, Description: "One item per invalid parameter or field"},
		"code":       {Type: "string", Enum: []any{vigia.CodeValidation}},
		"request_id": str("Equals the X-Request-ID header"),
	}}
	reg.Map()["Error"] = plain
	reg.Map()["ValidationError"] = validation
	return errorRefs{plain: &huma.Schema{Ref: "#/components/schemas/Error"}, validation: &huma.Schema{Ref: "#/components/schemas/ValidationError"}}
}

func (s *Server) openAPIOperation(reg huma.Registry, op *operation, errs errorRefs) *huma.Operation {
	o := &huma.Operation{Method: op.Method, Path: op.Path, OperationID: op.ID, Summary: op.Summary,
		Description: op.description(), Tags: []string{op.Tag}, Responses: map[string]*huma.Response{}, Deprecated: op.Deprecated != nil}
	if op.Public {
		o.Security = []map[string][]string{}
	} else {
		o.Security = []map[string][]string{{"bearer": {}}}
	}
	if op.TokenWrite {
		o.Extensions = map[string]any{"x-token-write": true}
	}
	for _, p := range op.allParams() {
		o.Parameters = append(o.Parameters, &huma.Param{Name: p.Name, In: p.In, Required: p.Required || p.In == "path",
			Description: p.Desc, Schema: paramSchema(p)})
	}
	if op.Body != nil {
		o.RequestBody = &huma.RequestBody{Required: !op.OptionalBody, Content: map[string]*huma.MediaType{
			"application/json": {Schema: reg.Schema(reflect.TypeOf(op.Body), true, op.ID+"Request")}}}
	}
	if len(op.BodyMedia) > 0 {
		o.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{}}
		for _, m := range op.BodyMedia {
			sc := &huma.Schema{Type: "string", Description: "The file"}
			if m == "multipart/form-data" {
				sc = &huma.Schema{Type: "object", Required: []string{"file"}, Properties: map[string]*huma.Schema{
					"file":   {Type: "string", Format: "binary", Description: "The file (one)"},
					"format": {Type: "string", Description: "As the format parameter, when that is not given"},
				}}
			}
			o.RequestBody.Content[m] = &huma.MediaType{Schema: sc}
		}
	}
	// Headers every answer under /api/ carries, errors included.
	always := func() map[string]*huma.Param {
		h := map[string]*huma.Param{"X-Request-ID": {Schema: &huma.Schema{Type: "string", Pattern: "^[A-Za-z0-9._-]{1,64}$"},
			Required: true, Description: "The caller's X-Request-ID when valid, otherwise a UUID"}}
		for name, desc := range map[string]string{"X-RateLimit-Limit": "Requests allowed in the window",
			"X-RateLimit-Remaining": "Requests left in the window", "X-RateLimit-Reset": "When the window resets (Unix seconds)"} {
			h[name] = &huma.Param{Schema: &huma.Schema{Type: "integer", Minimum: &zero}, Required: true, Description: desc}
		}
		if op.Deprecated != nil {
			h["Deprecation"] = &huma.Param{Schema: &huma.Schema{Type: "string", Pattern: "^@[0-9]+$"}, Required: true,
				Description: "RFC 9745: since when (Unix seconds)"}
			h["Sunset"] = &huma.Param{Schema: &huma.Schema{Type: "string"}, Description: "RFC 8594: the end of the operation"}
		}
		return h
	}
	headers := always()
	if op.List {
		headers["X-Total-Count"] = &huma.Param{Schema: &huma.Schema{Type: "integer", Minimum: &zero}, Required: true,
			Description: "Items the caller can see"}
	}
	for name, desc := range op.Headers {
		headers[name] = &huma.Param{Schema: &huma.Schema{Type: "string"}, Description: desc}
	}
	ok := &huma.Response{Description: http.StatusText(op.Status), Headers: headers}
	if op.NoContent != "" {
		o.Responses["204"] = &huma.Response{Description: op.NoContent, Headers: headers}
	}
	switch {
	case op.ContentType != "":
		ok.Content = map[string]*huma.MediaType{op.ContentType: {Schema: fileSchema(op.ContentType)}}
		for _, ct := range op.MoreContentTypes {
			ok.Content[ct] = &huma.MediaType{Schema: fileSchema(ct)}
		}
		if op.Response != nil {
			ok.Content["application/json"] = &huma.MediaType{Schema: reg.Schema(reflect.TypeOf(op.Response), true, op.ID+"Response")}
			allowNullStructs(reg, reflect.TypeOf(op.Response), map[reflect.Type]bool{})
		}
	case op.Response != nil:
		ok.Content = map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeOf(op.Response), true, op.ID+"Response")}}
		allowNullStructs(reg, reflect.TypeOf(op.Response), map[reflect.Type]bool{})
	}
	o.Responses[strconv.Itoa(op.Status)] = ok
	for status, alt := range op.Also {
		r := &huma.Response{Description: alt.Desc, Headers: always()}
		if alt.Body != nil {
			r.Content = map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeOf(alt.Body), true, op.ID+"Response")}}
			allowNullStructs(reg, reflect.TypeOf(alt.Body), map[reflect.Type]bool{})
		}
		o.Responses[strconv.Itoa(status)] = r
	}
	errResp := func(desc string, schema *huma.Schema) *huma.Response {
		return &huma.Response{Description: desc, Headers: always(), Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}}
	}
	if !op.Public {
		o.Responses["401"] = errResp("auth_required or token_invalid", errs.plain)
		o.Responses["403"] = errResp("token_read_only, workspace_suspended or forbidden", errs.plain)
	}
	if strings.Contains(op.Path, "{") || op.Body != nil {
		// A write's body names other objects (datasets, channels, teams ...): one that is
		// missing or in another workspace is 404 too.
		o.Responses["404"] = errResp("Not found, in another workspace, or invisible to the caller (in the path or the body)", errs.plain)
	}
	if len(op.allParams()) > 0 || op.Body != nil {
		o.Responses["422"] = errResp("validation_error", errs.validation)
	}
	if op.Body != nil || len(op.BodyMedia) > 0 {
		o.Responses["413"] = errResp("payload_too_large: the body is over "+strconv.FormatInt(op.bodyLimit(), 10)+" bytes", errs.plain)
	}
	for code, desc := range op.Errors {
		o.Responses[strconv.Itoa(code)] = errResp(desc, errs.plain)
	}
	rl := errResp("rate_limited; Retry-After header and retry_after in the body", errs.plain)
	rl.Headers["Retry-After"] = &huma.Param{Schema: &huma.Schema{Type: "integer", Minimum: &one}, Required: true, Description: "Seconds to wait"}
	o.Responses["429"] = rl
	return o
}

// fileSchema describes a file answer: a YAML file is a mapping (its schema describes the
// parsed document, so a client that reads YAML gets a map, not a failed string); other
// media types (CSV, SVG, plain text) are text, described as a string.
func fileSchema(contentType string) *huma.Schema {
	if strings.Contains(contentType, "yaml") {
		return &huma.Schema{Type: "object", Description: "A YAML document (a mapping)"}
	}
	if contentType == "application/pdf" || strings.Contains(contentType, "officedocument") {
		return &huma.Schema{Type: "string", Format: "binary"}
	}
	return &huma.Schema{Type: "string"}
}

func paramSchema(p param) *huma.Schema {
	sc := &huma.Schema{Type: p.Type, Default: p.Default}
	if sc.Type == "" {
		sc.Type = "string"
	}
	if sc.Type == "number" {
		// A double, as the handlers parse it (generated clients otherwise pick float32).
		sc.Format = "double"
	}
	if p.Min != nil {
		v := float64(*p.Min)
		sc.Minimum = &v
	}
	if p.Max != nil {
		v := float64(*p.Max)
		sc.Maximum = &v
	}
	if p.MaxLen > 0 {
		sc.MaxLength = &p.MaxLen
	}
	for _, e := range p.Enum {
		sc.Enum = append(sc.Enum, e)
	}
	return sc
}

// allowNullStructs makes every pointer-to-struct field without omitempty nullable in
// the registered schemas: the JSON carries null there, and huma only marks scalar
// pointers nullable.
func allowNullStructs(reg huma.Registry, t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	schema := reg.Map()[huma.DefaultSchemaNamer(t, "")]
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			allowNullStructs(reg, f.Type, seen)
			if embedded := reg.Map()[huma.DefaultSchemaNamer(f.Type, "")]; embedded != nil && schema != nil {
				for name, p := range embedded.Properties {
					if q, ok := schema.Properties[name]; ok && q.AnyOf == nil && p.AnyOf != nil {
						schema.Properties[name] = p
					}
				}
			}
			continue
		}
		allowNullStructs(reg, f.Type, seen)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if schema == nil || name == "-" || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct ||
			strings.Contains(opts, "omitempty") || f.Type.Elem() == reflect.TypeOf(time.Time{}) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if p, ok := schema.Properties[name]; ok && p.AnyOf == nil {
			schema.Properties[name] = &huma.Schema{AnyOf: []*huma.Schema{p, {Type: "null"}}}
		}
	}
}

var zero, one = 0.0, 1.0

// nullableEnums lets every nullable enum hold null: the JSON carries null there (e.g.
// layer, last_delivery_status), and JSON Schema checks enum apart from type.
func nullableEnums(sc *huma.Schema, seen map[*huma.Schema]bool) {
	if sc == nil || seen[sc] {
		return
	}
	seen[sc] = true
	if sc.Nullable && len(sc.Enum) > 0 && !slices.Contains(sc.Enum, nil) {
		sc.Enum = append(sc.Enum, nil)
	}
	for _, p := range sc.Properties {
		nullableEnums(p, seen)
	}
	nullableEnums(sc.Items, seen)
	for _, list := range [][]*huma.Schema{sc.AnyOf, sc.OneOf, sc.AllOf} {
		for _, x := range list {
			nullableEnums(x, seen)
		}
	}
	if ap, ok := sc.AdditionalProperties.(*huma.Schema); ok {
		nullableEnums(ap, seen)
	}
}

// description is the operation's documented text: its own, else its summary, with who
// may call it.
func (op *operation) description() string {
	d := op.Desc
	if d == "" {
		d = op.Summary + "."
	}
	switch {
	case op.Public:
		d += " Public: no credential."
	case op.TokenWrite:
		d += " Needs a bearer credential; API tokens may call this write."
	case op.Method == http.MethodGet:
		d += " Needs a bearer credential; API tokens may call it."
	default:
		d += " Needs a person's session; API tokens answer 403 token_read_only."
	}
	if op.List {
		d += " A page of at most limit items; X-Total-Count is the total."
	}
	return d
}
