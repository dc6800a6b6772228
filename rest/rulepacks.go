package rest

import (
	"net/http"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rule"
)

// RulePackOut is a rule pack Vigia ships.
type RulePackOut struct {
	Name        string            `json:"name" doc:"Stable name, e.g. pt_customer_master"`
	Version     string            `json:"version" doc:"Semantic version of the pack"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Items       []RulePackItemOut `json:"items"`
}

// RulePackItemOut is one rule of a pack, for the columns of one semantic type.
type RulePackItemOut struct {
	Key          string  `json:"key" doc:"Names the item within its pack"`
	SemanticType string  `json:"semantic_type" doc:"The columns it applies to: those scans recognised as this type (e.g. nif_pt, postal_code_pt, iban, phone_pt, email)"`
	RuleType     string  `json:"rule_type" enum:"not_null,unique,accepted_values,pattern,range,referential,freshness,row_count_min,custom_sql"`
	Title        string  `json:"title"`
	Severity     string  `json:"severity" enum:"critical,warning,info"`
	Pattern      *string `json:"pattern" doc:"pattern rules: the regular expression"`
	CheckDigit   *string `json:"check_digit" doc:"custom_sql rules: the check whose failures the query counts, written in the source's dialect (nif_pt)"`
}

// RulePackApplyIn is the scope of an apply: one dataset, one connection's datasets, or
// (empty body) every dataset the caller can see.
type RulePackApplyIn struct {
	DatasetID    *string `json:"dataset_id,omitempty" maxLength:"64"`
	ConnectionID *string `json:"connection_id,omitempty" maxLength:"64"`
}

// RulePackPlanOut is what a pack would do (preview) or did (apply).
type RulePackPlanOut struct {
	Pack     string             `json:"pack"`
	Version  string             `json:"version"`
	Applied  bool               `json:"applied" doc:"false for a preview"`
	Datasets int                `json:"datasets" doc:"Datasets of the scope looked at"`
	New      int                `json:"new" doc:"Rules the pack adds (applied: created)"`
	Existing int                `json:"existing" doc:"Rules the datasets already have (equivalent: same type and parameters)"`
	Matches  []RulePackMatchOut `json:"matches"`
}

// RulePackMatchOut is one rule the pack gives one column.
type RulePackMatchOut struct {
	DatasetID    string        `json:"dataset_id"`
	DatasetName  string        `json:"dataset_name"`
	Column       string        `json:"column"`
	SemanticType string        `json:"semantic_type"`
	Item         string        `json:"item" doc:"The pack item's key"`
	RuleType     string        `json:"rule_type" enum:"not_null,unique,accepted_values,pattern,range,referential,freshness,row_count_min,custom_sql"`
	RuleName     string        `json:"rule_name"`
	Severity     string        `json:"severity" enum:"critical,warning,info"`
	Params       RuleParamsOut `json:"params"`
	Status       string        `json:"status" enum:"new,created,existing" doc:"new (preview), created (apply) or existing"`
	RuleID       *string       `json:"rule_id" doc:"The rule created, or the existing equivalent one; null for a new rule in a preview"`
}

var packNameParam = param{Name: "pack_name", In: "path", Type: "string", Required: true, MaxLen: 100}

func (s *Server) rulePackRoutes() {
	s.register(operation{ID: "listRulePacks", Method: http.MethodGet, Path: "/api/v1/rule-packs", Tag: "rule-packs", List: true,
		Summary: "The rule packs Vigia ships", Response: []RulePackOut{}}, s.handleRulePackList)
	s.register(operation{ID: "getRulePack", Method: http.MethodGet, Path: "/api/v1/rule-packs/{pack_name}", Tag: "rule-packs",
		Summary: "One rule pack", Params: []param{packNameParam}, Response: RulePackOut{}}, s.handleRulePackGet)
	scope := []param{packNameParam,
		{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64, Desc: "Only this dataset"},
		{Name: "connection_id", In: "query", Type: "string", MaxLen: 64, Desc: "Only this connection's datasets"}}
	s.register(operation{ID: "previewRulePack", Method: http.MethodGet, Path: "/api/v1/rule-packs/{pack_name}/preview", Tag: "rule-packs",
		Summary: "Which columns would get which of the pack's rules", Params: scope, Response: RulePackPlanOut{},
		Desc: "Columns match an item by the semantic type the last scan measured. Scope: dataset_id, connection_id, or every dataset " +
			"the caller can see. A rule equivalent to one the dataset has (same type and parameters) is existing, with its id. Nothing changes."},
		s.handleRulePackPreview)
	s.register(operation{ID: "applyRulePack", Method: http.MethodPost, Path: "/api/v1/rule-packs/{pack_name}/apply", Tag: "rule-packs",
		Summary: "Create the pack's rules on the matching columns (member or admin session)", Params: []param{packNameParam},
		Body: RulePackApplyIn{}, OptionalBody: true, Response: RulePackPlanOut{},
		Desc: "Creates, in one transaction, the rules a preview of the same scope calls new; existing equivalent rules are left as they " +
			"are, so applying twice creates nothing the second time. The rules are ordinary rules from then on (named after the pack " +
			"and its version). Give at most one of dataset_id and connection_id."}, s.handleRulePackApply)
}

func toRulePackOut(p rule.Pack) RulePackOut {
	out := RulePackOut{Name: p.Name, Version: p.Version, Title: p.Title, Description: p.Description, Items: make([]RulePackItemOut, 0, len(p.Items))}
	for _, it := range p.Items {
		out.Items = append(out.Items, RulePackItemOut{Key: it.Key, SemanticType: it.SemanticType, RuleType: it.RuleType, Title: it.Title,
			Severity: it.Severity, Pattern: optStr(it.Pattern), CheckDigit: optStr(it.CheckDigit)})
	}
	return out
}

func toRulePackPlanOut(plan rule.PackPlan, applied bool) RulePackPlanOut {
	out := RulePackPlanOut{Pack: plan.Pack.Name, Version: plan.Pack.Version, Applied: applied, Datasets: plan.Datasets, New: plan.New,
		Existing: plan.Existing, Matches: make([]RulePackMatchOut, 0, len(plan.Matches))}
	for _, m := range plan.Matches {
		ro := toRuleOut(m.Rule)
		mo := RulePackMatchOut{DatasetID: m.Dataset.ID, DatasetName: m.Rule.DatasetName(), Column: m.Column, SemanticType: m.SemanticType,
			Item: m.Item.Key, RuleType: m.Rule.Type, RuleName: m.Rule.Name, Severity: m.Rule.Severity, Params: ro.Params, Status: "new"}
		switch {
		case m.ExistingRuleID != "":
			mo.Status, mo.RuleID = "existing", optStr(m.ExistingRuleID)
		case m.RuleID != "":
			mo.Status, mo.RuleID = "created", optStr(m.RuleID)
		}
		out.Matches = append(out.Matches, mo)
	}
	return out
}

func (s *Server) handleRulePackList(w http.ResponseWriter, r *http.Request, in *input) {
	packs, err := s.deps.Workflow.Rules.RulePacks(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page := in.Page()
	out := []RulePackOut{}
	for i, p := range packs {
		if i >= page.Offset && len(out) < page.Limit {
			out = append(out, toRulePackOut(p))
		}
	}
	list(w, len(packs), out)
}

func (s *Server) handleRulePackGet(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := s.deps.Workflow.Rules.RulePack(r.Context(), in.Path("pack_name"))
	s.reply(w, r, err, func() any { return toRulePackOut(p) })
}

func (s *Server) handleRulePackPreview(w http.ResponseWriter, r *http.Request, in *input) {
	plan, err := s.deps.Workflow.Rules.PreviewRulePack(r.Context(), in.Path("pack_name"),
		rule.PackScope{DatasetID: in.String("dataset_id"), ConnectionID: in.String("connection_id")})
	s.reply(w, r, err, func() any { return toRulePackPlanOut(plan, false) })
}

func (s *Server) handleRulePackApply(w http.ResponseWriter, r *http.Request, in *input) {
	var body RulePackApplyIn
	if err := decodeOptional(r, in, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.DatasetID != nil && body.ConnectionID != nil {
		s.writeError(w, r, vigia.Invalid(vigia.Field("value_error", nil, "connection_id")))
		return
	}
	plan, err := s.deps.Workflow.Rules.ApplyRulePack(r.Context(), in.Path("pack_name"),
		rule.PackScope{DatasetID: body.DatasetID, ConnectionID: body.ConnectionID})
	s.reply(w, r, err, func() any { return toRulePackPlanOut(plan, true) })
}
