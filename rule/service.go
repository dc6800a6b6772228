package rule

import (
	"context"
	"math"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rulesql"
)

// ActionFailingRowsRead is the activity-log action of every failing-rows SQL read.
const ActionFailingRowsRead = "failing_rows_sql_read"

// Failing-rows limits (GET /rules/{id}/failing-rows.sql).
const (
	DefaultFailingRowsLimit = 100
	MaxFailingRowsLimit     = rulesql.MaxLimit
)

// ReasonReferenceNotVisible is the reason a referential rule has no failing-rows query
// for a reader who cannot see its reference dataset: the query would name it.
const ReasonReferenceNotVisible = "reference_not_visible"

// Datasets is what rules need of the catalog: the visibility-checked dataset, and the
// list of visible datasets an import resolves table names in.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
	DatasetDetails(ctx context.Context, ids []string, historyLimit int) (map[string]catalog.Dataset, error)
}

// Connections is what rules need of the connection service: the source's kind.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
}

// Messages translates reason texts.
type Messages interface {
	Message(lang, key string, params map[string]any) string
}

// Service manages rules for the principal in ctx.
type Service struct {
	store    Store
	datasets Datasets
	conns    Connections
	msgs     Messages
	clock    vigia.Clock
}

// NewService returns the rule service.
func NewService(store Store, datasets Datasets, conns Connections, msgs Messages, clock vigia.Clock) *Service {
	return &Service{store: store, datasets: datasets, conns: conns, msgs: msgs, clock: clock}
}

// CreateInput is a new rule.
type CreateInput struct {
	DatasetID string
	RuleType  string
	Severity  string // default warning
	Name      string
	Params    ParamsIn
	Active    *bool // default true
}

// Update changes a rule; nil fields keep their value. Params replace the whole set.
type Update struct {
	Name     *string
	Severity *string
	Params   *ParamsIn
	Active   *bool
}

// CreateRule adds a rule to a dataset. Only a person's session of a member or an
// administrator may (API tokens get token_read_only, viewers forbidden). Returns
// KindNotFound when the dataset, or a referential rule's reference dataset, does not
// exist or is invisible to the caller, and KindInvalid for bad parameters (a column the
// dataset does not have, a custom SQL that is not one read-only SELECT...).
func (s *Service) CreateRule(ctx context.Context, in CreateInput) (Rule, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Rule{}, err
	}
	var fields []vigia.FieldError
	if !contains(Types(), in.RuleType) {
		fields = append(fields, vigia.Field("enum", nil, "rule_type"))
	}
	if in.Severity == "" {
		in.Severity = SeverityWarning
	}
	fields = append(fields, checkSeverityName(in.Severity, in.Name)...)
	if len(fields) > 0 {
		return Rule{}, vigia.Invalid(fields...)
	}
	d, err := s.datasets.Dataset(ctx, in.DatasetID)
	if err != nil {
		return Rule{}, err
	}
	params, err := s.checkParams(ctx, d, in.RuleType, in.Params)
	if err != nil {
		return Rule{}, err
	}
	now := s.clock.Now()
	r := Rule{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, DatasetID: d.ID, Type: in.RuleType, Name: strings.TrimSpace(in.Name),
		Severity: in.Severity, Params: params, Active: in.Active == nil || *in.Active, CreatedBy: "user:" + p.UserID,
		CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateRule(ctx, r); err != nil {
		return Rule{}, err
	}
	return s.Rule(ctx, r.ID)
}

// UpdateRule changes a rule's name, severity, parameters or active flag; the change
// applies from the next scan. Same callers and errors as CreateRule; KindNotFound for a
// rule of a dataset the caller cannot see; KindConflict (managed_by_config) for a rule
// configuration as code manages, outside apply.
func (s *Service) UpdateRule(ctx context.Context, id string, u Update) (Rule, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Rule{}, err
	}
	if !vigia.ValidID(id) {
		return Rule{}, vigia.NotFound()
	}
	r, err := s.store.RuleByID(ctx, catalog.ViewerOf(p), id)
	if err != nil {
		return Rule{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedRule, r.ID); err != nil {
		return Rule{}, err
	}
	sev, name := r.Severity, r.Name
	if u.Severity != nil {
		sev = *u.Severity
	}
	if u.Name != nil {
		name = strings.TrimSpace(*u.Name)
	}
	if fields := checkSeverityName(sev, name); len(fields) > 0 {
		return Rule{}, vigia.Invalid(fields...)
	}
	r.Severity, r.Name = sev, name
	if u.Params != nil {
		d, err := s.datasets.Dataset(ctx, r.DatasetID)
		if err != nil {
			return Rule{}, err
		}
		if r.Params, err = s.checkParams(ctx, d, r.Type, *u.Params); err != nil {
			return Rule{}, err
		}
	}
	if u.Active != nil {
		r.Active = *u.Active
	}
	r.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateRule(ctx, r); err != nil {
		return Rule{}, err
	}
	return s.Rule(ctx, r.ID)
}

// DeleteRule deletes a rule and its results; its current issue is resolved (event
// rule_deleted). Same callers and errors as UpdateRule.
func (s *Service) DeleteRule(ctx context.Context, id string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return err
	}
	if !vigia.ValidID(id) {
		return vigia.NotFound()
	}
	r, err := s.store.RuleByID(ctx, catalog.ViewerOf(p), id)
	if err != nil {
		return err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedRule, r.ID); err != nil {
		return err
	}
	return s.store.DeleteRule(ctx, p.WorkspaceID, r.ID, "user:"+p.UserID, s.clock.Now())
}

// Rule returns one rule with its last result. Returns KindNotFound when the rule does
// not exist or belongs to a dataset the caller cannot see.
func (s *Service) Rule(ctx context.Context, id string) (Rule, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Rule{}, err
	}
	if !vigia.ValidID(id) {
		return Rule{}, vigia.NotFound()
	}
	v := catalog.ViewerOf(p)
	r, err := s.store.RuleByID(ctx, v, id)
	if err != nil {
		return Rule{}, err
	}
	out := []Rule{r}
	if err := s.forReader(ctx, v, out); err != nil {
		return Rule{}, err
	}
	return out[0], nil
}

// PageDefault is the page size of the rule list when limit is not given.
const PageDefault = 100

// Rules lists the rules of the datasets the caller can see, oldest first, with their
// last results. Returns KindInvalid for a bad filter or page.
func (s *Service) Rules(ctx context.Context, f Filter) (vigia.List[Rule], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Rule]{}, err
	}
	fields := vigia.FieldsOf(f.Page.Validate())
	if f.RuleType != nil && !contains(AllTypes(), *f.RuleType) {
		fields = append(fields, vigia.Field("enum", nil, "rule_type"))
	}
	if f.Severity != nil && !contains([]string{SeverityCritical, SeverityWarning, SeverityInfo}, *f.Severity) {
		fields = append(fields, vigia.Field("enum", nil, "severity"))
	}
	if f.Status != nil && !contains([]string{StatusPassed, StatusFailed, StatusNotEvaluated}, *f.Status) {
		fields = append(fields, vigia.Field("enum", nil, "status"))
	}
	if len(fields) > 0 {
		return vigia.List[Rule]{}, vigia.Invalid(fields...)
	}
	if f.DatasetID != nil && !vigia.ValidID(*f.DatasetID) {
		return vigia.List[Rule]{Items: []Rule{}}, nil
	}
	v := catalog.ViewerOf(p)
	res, err := s.store.Rules(ctx, v, f)
	if err != nil {
		return res, err
	}
	return res, s.forReader(ctx, v, res.Items)
}

// forReader applies read-time visibility to rules: a reference dataset the reader cannot
// see is neither named in the rule nor in its last result's reason, and reasons get
// their message in the reader's language.
func (s *Service) forReader(ctx context.Context, v catalog.Viewer, rules []Rule) error {
	var ids []string
	for _, r := range rules {
		if r.RefDataset != nil {
			ids = append(ids, r.RefDataset.ID)
		}
		if r.LastResult != nil && r.LastResult.Reason != nil {
			if id, ok := r.LastResult.Reason.Params["ref_dataset_id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	visible := map[string]string{}
	if len(ids) > 0 {
		var err error
		if visible, err = s.store.VisibleDatasetNames(ctx, v, ids); err != nil {
			return err
		}
	}
	lang := vigia.Lang(ctx)
	for i := range rules {
		r := &rules[i]
		if r.RefDataset != nil {
			if _, ok := visible[r.RefDataset.ID]; !ok {
				r.RefDataset, r.RefRestricted = nil, true
				r.Params.RefDatasetID = ""
			}
		}
		if r.LastResult == nil || r.LastResult.Reason == nil {
			continue
		}
		reason := r.LastResult.Reason
		params := map[string]any{}
		for k, val := range reason.Params {
			params[k] = val
		}
		if id, ok := params["ref_dataset_id"].(string); ok {
			if name, seen := visible[id]; seen {
				params["ref_dataset"] = name
			} else {
				delete(params, "ref_dataset_id")
				delete(params, "ref_dataset")
			}
		}
		key := "rule.reason." + reason.Code
		if _, named := params["ref_dataset"]; named {
			key += ".named"
		}
		reason.Params = params
		reason.Message = s.msgs.Message(lang, key, params)
	}
	return nil
}

// FailingRows is the failing-rows query of a rule, or why there is none.
type FailingRows struct {
	Dialect string
	// SQL is the query; empty when Reason says why no row-level query exists.
	SQL    string
	Reason string
}

// FailingRowsSQL writes the query that lists up to limit rows failing the rule, in
// dialect (default: the source's own). It never runs it. Every read is recorded in the
// activity log as failing_rows_sql_read. Returns KindNotFound for a rule the caller
// cannot see and KindInvalid for an unknown dialect or a limit outside 1-1000.
func (s *Service) FailingRowsSQL(ctx context.Context, id string, dialect *string, limit int) (FailingRows, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return FailingRows{}, err
	}
	if limit < 1 || limit > MaxFailingRowsLimit {
		return FailingRows{}, vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": MaxFailingRowsLimit}, "limit"))
	}
	var d rulesql.Dialect
	if dialect != nil {
		var ok bool
		if d, ok = rulesql.ParseDialect(*dialect); !ok {
			return FailingRows{}, vigia.Invalid(vigia.Field("enum", nil, "dialect"))
		}
	}
	if !vigia.ValidID(id) {
		return FailingRows{}, vigia.NotFound()
	}
	v := catalog.ViewerOf(p)
	r, err := s.store.RuleByID(ctx, v, id)
	if err != nil {
		return FailingRows{}, err
	}
	source := rulesql.Dialect(r.ConnectionKind)
	if d == "" {
		d = source
	}
	out := FailingRows{Dialect: string(d)}
	spec, refVisible, err := s.sqlRule(ctx, v, r, source)
	if err != nil {
		return FailingRows{}, err
	}
	if !refVisible {
		out.Reason = ReasonReferenceNotVisible
	} else {
		q, ok, reason, err := rulesql.FailingRowsSQL(spec, d, limit)
		if err != nil {
			return FailingRows{}, err
		}
		if ok {
			out.SQL = q
		} else {
			out.Reason = reason
		}
	}
	actor := "user:" + p.UserID
	if p.IsToken() {
		actor = "token:" + p.TokenID
	}
	details := map[string]any{"dialect": out.Dialect, "dataset_id": r.DatasetID, "limit": limit, "produced": out.SQL != ""}
	if out.Reason != "" {
		details["reason"] = out.Reason
	}
	if err := s.store.AddActivity(ctx, event.Activity{WorkspaceID: p.WorkspaceID, Actor: actor, Action: ActionFailingRowsRead,
		SubjectType: "rule", SubjectID: r.ID, Details: details, CreatedAt: s.clock.Now()}); err != nil {
		return FailingRows{}, err
	}
	return out, nil
}

// sqlRule is the rule as rulesql reads it; refVisible is false when the rule names a
// reference dataset the reader cannot see.
func (s *Service) sqlRule(ctx context.Context, v catalog.Viewer, r Rule, source rulesql.Dialect) (rulesql.Rule, bool, error) {
	p := r.Params
	out := rulesql.Rule{Type: r.Type, Table: rulesql.Table{Schema: r.DatasetSchema, Name: r.DatasetTable},
		Columns: p.KeyColumns(), Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max, RefColumn: p.RefColumn,
		SQL: p.SQL, SQLDialect: source}
	if p.MaxAgeHours != nil {
		out.MaxAgeSeconds = int64(math.Max(1, math.Round(*p.MaxAgeHours*3600)))
	}
	if r.Type != TypeReferential {
		return out, true, nil
	}
	if r.RefDataset == nil {
		return out, false, nil
	}
	visible, err := s.store.VisibleDatasetNames(ctx, v, []string{r.RefDataset.ID})
	if err != nil {
		return out, false, err
	}
	if _, ok := visible[r.RefDataset.ID]; !ok {
		return out, false, nil
	}
	out.RefTable = rulesql.Table{Schema: r.RefDataset.Schema, Name: r.RefDataset.Table}
	return out, true, nil
}

// checkParams parses a rule's parameters and checks them against the dataset: its
// columns, the reference dataset (visible, with its column) and, for custom_sql, the
// read-only check in the source's dialect.
func (s *Service) checkParams(ctx context.Context, d catalog.Dataset, ruleType string, in ParamsIn) (Params, error) {
	params, fields := in.Check(ruleType)
	if len(fields) > 0 {
		return Params{}, vigia.Invalid(fields...)
	}
	has := func(cols []catalog.Column, name string) bool {
		for _, c := range cols {
			if c.Name == name {
				return true
			}
		}
		return false
	}
	for _, c := range params.KeyColumns() {
		if !has(d.Columns, c) {
			loc := "column"
			if len(params.Columns) > 0 {
				loc = "columns"
			}
			fields = append(fields, vigia.Field("unknown_column", nil, "params", loc))
			break
		}
	}
	switch ruleType {
	case TypeReferential:
		ref, err := s.datasets.Dataset(ctx, params.RefDatasetID)
		if err != nil {
			return Params{}, err
		}
		params.RefDatasetID = ref.ID
		if !has(ref.Columns, params.RefColumn) {
			fields = append(fields, vigia.Field("unknown_column", nil, "params", "ref_column"))
		}
	case TypeCustomSQL:
		c, err := s.conns.Connection(ctx, d.ConnectionID)
		if err != nil {
			return Params{}, err
		}
		if ok, _ := rulesql.CheckCountQuery(rulesql.Dialect(c.Kind), params.SQL); !ok {
			fields = append(fields, vigia.Field("sql_not_read_only", nil, "params", "sql"))
		}
	}
	if len(fields) > 0 {
		return Params{}, vigia.Invalid(fields...)
	}
	return params, nil
}

func checkSeverityName(severity, name string) []vigia.FieldError {
	var fields []vigia.FieldError
	if !contains([]string{SeverityCritical, SeverityWarning, SeverityInfo}, severity) {
		fields = append(fields, vigia.Field("enum", nil, "severity"))
	}
	if len([]rune(name)) > MaxName {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxName}, "name"))
	}
	return fields
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
