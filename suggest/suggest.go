// Package suggest proposes changes from what scans measured: new rules (a never-null
// column without a not_null rule) and the parsing/standardization of text columns whose
// masks show several formats (signature parse_standardize:<column>). A suggestion is
// accepted (a rule suggestion then creates its rule) or dismissed, and a suggestion that
// implies a change can be rehearsed: Vigia counts on the source, in a read-only
// transaction with a timeout, the rows the change would touch, after the dialect's real
// parser has accepted the count (one SELECT, functions of an allowlist, only the
// dataset's own table). Only counts are kept, never values or the SQL. Every text here
// is deterministic: ai_generated is false and ai_model null.
package suggest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/blackout"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// Categories and statuses of suggestions.
const (
	CategoryRule    = "rule"
	CategoryParsing = "parsing"
	// CategoryDomain proposes a domain for a dataset without one (signature
	// domain:<domain id>), from the domains of its lineage neighbours.
	CategoryDomain = "domain"
	// CategoryOwner proposes an owner for a dataset in a domain where none of its
	// domains has one (signature owner:<domain id>, the domain that would get it), from
	// the owners of its lineage neighbours' domains.
	CategoryOwner = "owner"

	StatusOpen      = "open"
	StatusAccepted  = "accepted"
	StatusDismissed = "dismissed"
)

// Rehearsal statuses and the reason codes of a rehearsal that counted nothing.
const (
	RehearsalOK      = "ok"
	RehearsalBlocked = "blocked"
	RehearsalTimeout = "timeout"
	RehearsalError   = "error"

	ReasonNoDiagnosis        = "no_diagnosis"
	ReasonNotSelect          = "not_select"
	ReasonForbidden          = "forbidden"
	ReasonFunctionNotAllowed = "function_not_allowed"
	ReasonUnknownTable       = "unknown_table"
	ReasonTimeout            = "timeout"
	ReasonSourceError        = "source_error"
	ReasonBlackout           = "blackout"
)

// RowsSourceRehearsal is impact.rows_source after a rehearsal with status ok.
const RowsSourceRehearsal = "rehearsal"

// MaxPredicateLen bounds a rehearsal's own predicate.
const MaxPredicateLen = 2000

// PageDefault is the default page of the list.
const PageDefault = 50

// Suggestion is one proposal on a dataset.
type Suggestion struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	DatasetName string
	Category    string
	Signature   string
	Column      string
	Status      string
	// Params: masks (mask and sample count) and the dominant mask for parsing; rule_type
	// and column for a rule.
	Params map[string]any
	// EstimatedRowsSample is the sample's estimate of the rows the change touches.
	EstimatedRowsSample *int64
	RuleID              *string
	Rehearsal           *Rehearsal
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Rehearsal is the last rehearsal of a suggestion: counts, status and actor only.
type Rehearsal struct {
	Version      int       `json:"version"`
	Status       string    `json:"status"`
	AffectedRows *int64    `json:"affected_rows"`
	TotalRows    *int64    `json:"total_rows"`
	Pct          *float64  `json:"pct"`
	RequestedAt  time.Time `json:"requested_at"`
	RanAt        time.Time `json:"ran_at"`
	DurationMS   int64     `json:"duration_ms"`
	Actor        string    `json:"actor"`
	Reason       *Reason   `json:"reason,omitempty"`
}

// Reason says why a rehearsal counted nothing.
type Reason struct {
	Code   string         `json:"code"`
	Params map[string]any `json:"params"`
}

// Store keeps suggestions.
type Store interface {
	// ScanDatasets lists the datasets the scan profiled, with their columns and declared
	// foreign keys, and the rules of each that exist already as "<rule type>:<column>"
	// (not_null and referential).
	ScanDatasets(ctx context.Context, workspaceID, scanID string) ([]catalog.Dataset, map[string]map[string]bool, error)
	// SaveScanSuggestions writes a scan's proposals for all its datasets at once: it
	// adds each dataset's new suggestions (by signature) and refreshes the open ones
	// (accepted and dismissed ones are left as they are), then deletes each dataset's
	// open suggestions of the retired categories whose signature is not among its
	// proposals of that category (the proposal no longer holds).
	SaveScanSuggestions(ctx context.Context, workspaceID string, sets []DatasetSuggestions, retire []string, at time.Time) error
	// Suggestions lists, newest first, filtered by category, dataset and status (nil: any).
	Suggestions(ctx context.Context, v catalog.Viewer, category, datasetID *string, page vigia.Page, status *string) (vigia.List[Suggestion], error)
	// OpenOf lists a dataset's open suggestions, newest first, at most limit, without
	// counting them (the dataset detail's array).
	OpenOf(ctx context.Context, v catalog.Viewer, datasetID string, limit int) ([]Suggestion, error)
	Suggestion(ctx context.Context, v catalog.Viewer, id string) (Suggestion, error)
	SetStatus(ctx context.Context, workspaceID, id, status string, ruleID *string, at time.Time) error
	SaveRehearsal(ctx context.Context, workspaceID, id string, r Rehearsal) error
}

// DatasetSuggestions are a dataset's proposals from one scan.
type DatasetSuggestions struct {
	DatasetID   string
	Suggestions []Suggestion
}

// Blackouts answers the blackout window of a connection in force at a time, if any.
type Blackouts interface {
	Active(ctx context.Context, workspaceID, connectionID string, at time.Time) (*blackout.Window, error)
}

// Domains proposes domains for datasets without one (product.Service.SuggestDomains)
// and adds an accepted one's dataset to its domain.
type Domains interface {
	SuggestDomains(ctx context.Context) (product.DomainSuggestions, error)
	SuggestOwners(ctx context.Context) ([]product.OwnerSuggestion, error)
	Domain(ctx context.Context, id string) (product.Domain, error)
	UpdateDomain(ctx context.Context, id string, patch product.DomainPatch) (product.Domain, error)
}

// Checker checks a rehearsal's count with the dialect's real parser and answers the
// reason code that blocks it ("" when it may run).
type Checker interface {
	CheckCount(dialect, sql string, table source.Table, allowed map[string]bool) (code string, err error)
}

// Rules creates the rule of an accepted rule suggestion.
type Rules interface {
	CreateRule(ctx context.Context, in rule.CreateInput) (rule.Rule, error)
}

// Connections opens the dataset's source.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// Datasets reads a dataset the caller can see.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Service generates, lists, accepts, dismisses and rehearses suggestions.
type Service struct {
	store    Store
	datasets Datasets
	conns    Connections
	rules    Rules
	checker  Checker
	domains  Domains
	blackout Blackouts
	clock    vigia.Clock
	timeout  time.Duration

	// tuningFacts, tuner and ruleUpdater: the tuning proposals (WithTuning); nil: none.
	tuningFacts TuningFacts
	tuner       Tuner
	ruleUpdater RuleUpdater
}

// NewService returns the suggestion service; timeout bounds a rehearsal (30 s when 0).
func NewService(store Store, datasets Datasets, conns Connections, rules Rules, checker Checker, domains Domains, blackouts Blackouts, clock vigia.Clock, timeout time.Duration) *Service {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Service{store: store, datasets: datasets, conns: conns, rules: rules, checker: checker, domains: domains, blackout: blackouts,
		clock: clock, timeout: timeout}
}

// AfterScan is the after-scan consumer "suggestions": proposals from the profiles of
// the datasets the scan profiled.
func (s *Service) AfterScan(ctx context.Context, workspaceID, _, scanID string) error {
	list, notNull, err := s.store.ScanDatasets(ctx, workspaceID, scanID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	byDataset := map[string][]Suggestion{}
	if s.domains != nil && len(list) > 0 {
		ds, err := s.domains.SuggestDomains(ctx)
		if err != nil {
			return err
		}
		for _, x := range ds.Suggestions {
			byDataset[x.DatasetID] = append(byDataset[x.DatasetID], DomainSuggestion(x))
		}
		os, err := s.domains.SuggestOwners(ctx)
		if err != nil {
			return err
		}
		for _, x := range os {
			byDataset[x.DatasetID] = append(byDataset[x.DatasetID], OwnerSuggestion(x))
		}
	}
	retire := []string{CategoryDomain, CategoryOwner}
	if s.tuningFacts != nil && len(list) > 0 {
		ids := make([]string, 0, len(list))
		for _, d := range list {
			ids = append(ids, d.ID)
		}
		anomalies, rules, err := s.tuningFacts.TuningFacts(ctx, workspaceID, ids, now.AddDate(0, 0, -TuningWindowDays))
		if err != nil {
			return err
		}
		for id, ss := range TuningProposals(anomalies, rules) {
			byDataset[id] = append(byDataset[id], ss...)
		}
		retire = append(retire, CategoryTuning)
	}
	// One write for the whole scan, not a few round trips per dataset. The retired
	// categories' proposals all come from byDataset, so the kept signatures are those.
	sets := make([]DatasetSuggestions, 0, len(list))
	for _, d := range list {
		sets = append(sets, DatasetSuggestions{DatasetID: d.ID, Suggestions: append(Generate(d, notNull[d.ID]), byDataset[d.ID]...)})
	}
	return s.store.SaveScanSuggestions(ctx, workspaceID, sets, retire, now)
}

// OwnerSuggestion is the suggestion of an owner for a dataset in a domain where none
// of its domains has one (product's rule: the owner of its lineage neighbours'
// domains, at least half of the links, no tie). Accepting sets the owner on the
// target domain (through the domain's update, with its permissions); an open one
// whose proposal no longer holds is withdrawn at the next scan.
func OwnerSuggestion(x product.OwnerSuggestion) Suggestion {
	from := make([]map[string]any, 0, len(x.FromDomains))
	for _, f := range x.FromDomains {
		from = append(from, map[string]any{"domain_id": f.DomainID, "domain_name": f.DomainName, "votes": f.Votes})
	}
	return Suggestion{Category: CategoryOwner, Signature: "owner:" + x.TargetDomainID,
		Params: map[string]any{"owner_name": x.OwnerName, "domain_id": x.TargetDomainID, "domain_name": x.TargetDomainName,
			"votes": x.Votes, "total_links": x.TotalLinks, "from_domains": from}}
}

// DomainSuggestion is the suggestion of a domain for a dataset without one: the
// domain most of its lineage neighbours belong to (product's rule: at least half of the
// links, no tie), with the votes behind it. Accepting adds the dataset to the domain
// (through the domain's update, with its permissions).
func DomainSuggestion(x product.DomainSuggestion) Suggestion {
	kinds := make([]string, 0, len(x.EdgeKinds))
	for _, k := range x.EdgeKinds {
		kinds = append(kinds, string(k))
	}
	return Suggestion{Category: CategoryDomain, Signature: "domain:" + x.DomainID,
		Params: map[string]any{"domain_id": x.DomainID, "domain_name": x.DomainName, "votes": x.Votes, "total_links": x.TotalLinks,
			"edge_kinds": kinds, "inferred_only": x.InferredOnly}}
}

// Generate proposes, for one profiled dataset: parse_standardize:<column> for a text
// column whose masks show two formats or more (a semantic type recognised, or every
// mask holding digits), not_null:<column> for a column without nulls in an exact
// profile of rows that has no not_null rule yet, and referential:<column> for a
// single-column declared foreign key to a dataset Vigia knows that has no referential
// rule on that column yet. hasRule holds "<rule type>:<column>" of the existing rules.
func Generate(d catalog.Dataset, hasRule map[string]bool) []Suggestion {
	var out []Suggestion
	for _, fk := range d.ForeignKeys {
		if len(fk.Columns) != 1 || fk.RefDatasetID == nil || hasRule["referential:"+fk.Columns[0]] {
			continue
		}
		col := fk.Columns[0]
		out = append(out, Suggestion{Category: CategoryRule, Signature: "referential:" + col, Column: col,
			Params: map[string]any{"rule_type": "referential", "column": col, "ref_dataset_id": *fk.RefDatasetID,
				"ref_column": fk.RefColumns[0], "constraint": fk.Name, "origin": "declared_foreign_key"}})
	}
	for _, c := range d.Columns {
		p := c.Profile
		if p == nil {
			continue
		}
		if c.Class == "text" && len(p.Masks) >= 2 && formats(p) {
			masks := make([]map[string]any, 0, len(p.Masks))
			var others int64
			for i, m := range p.Masks {
				masks = append(masks, map[string]any{"mask": m.Mask, "count": m.Count})
				if i > 0 {
					others += int64(m.Count)
				}
			}
			est := others
			out = append(out, Suggestion{Category: CategoryParsing, Signature: "parse_standardize:" + c.Name, Column: c.Name,
				Params: map[string]any{"masks": masks, "target_mask": p.Masks[0].Mask}, EstimatedRowsSample: &est})
		}
		exact := d.RowCountExact != nil && *d.RowCountExact
		if !c.PrimaryKey && !hasRule["not_null:"+c.Name] && exact && d.RowCount != nil && *d.RowCount > 0 && !p.Estimated && p.NullCount == 0 {
			zero := int64(0)
			out = append(out, Suggestion{Category: CategoryRule, Signature: "not_null:" + c.Name, Column: c.Name,
				Params: map[string]any{"rule_type": "not_null", "column": c.Name}, EstimatedRowsSample: &zero})
		}
	}
	return out
}

// formats reports whether a column's masks are several formats of one kind of value.
func formats(p *catalog.ColumnProfile) bool {
	for _, m := range p.Masks {
		if strings.HasSuffix(m.Mask, "…") || m.Mask == "" {
			return false
		}
	}
	if p.Semantic != nil && p.Semantic.Type != "" {
		return true
	}
	for _, m := range p.Masks {
		if !strings.Contains(m.Mask, "9") {
			return false
		}
	}
	return true
}

func viewer(ctx context.Context) (catalog.Viewer, error) {
	p, err := vigia.MustPrincipal(ctx)
	return catalog.ViewerOf(p), err
}

// List lists the suggestions of the datasets the caller can see, newest first; category
// filters (rule, parsing; enrichment exists in the contract and is created only on
// request, so it lists nothing here).
func (s *Service) List(ctx context.Context, category, datasetID *string, page vigia.Page) (vigia.List[Suggestion], error) {
	v, err := viewer(ctx)
	if err != nil {
		return vigia.List[Suggestion]{}, err
	}
	if datasetID != nil {
		if _, err := s.datasets.Dataset(ctx, *datasetID); err != nil {
			return vigia.List[Suggestion]{}, err
		}
	}
	return s.store.Suggestions(ctx, v, category, datasetID, page, nil)
}

// MaxOpenOnDetail bounds the open suggestions a dataset's detail carries.
const MaxOpenOnDetail = 100

// Open lists a dataset's open suggestions, newest first (at most MaxOpenOnDetail), for
// the dataset detail; a dataset the caller cannot see is not found.
func (s *Service) Open(ctx context.Context, datasetID string) ([]Suggestion, error) {
	v, err := viewer(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.OpenOf(ctx, v, datasetID, MaxOpenOnDetail)
}

// Get returns one suggestion; another workspace's, or one of a dataset the caller
// cannot see, is not found.
func (s *Service) Get(ctx context.Context, id string) (Suggestion, error) {
	v, err := viewer(ctx)
	if err != nil {
		return Suggestion{}, err
	}
	return s.store.Suggestion(ctx, v, id)
}

// CodeNotOpen is a decision on a suggestion already accepted or dismissed.
const CodeNotOpen = "suggestion_not_open"

// CodeNoLongerHolds is the acceptance of a suggestion whose proposal stopped being
// true before the next scan withdrew it (an owner suggestion on a domain that got an
// owner meanwhile).
const CodeNoLongerHolds = "suggestion_no_longer_holds"

func (s *Service) open(ctx context.Context, id string) (vigia.Principal, Suggestion, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return p, Suggestion{}, err
	}
	sg, err := s.Get(ctx, id)
	if err != nil {
		return p, Suggestion{}, err
	}
	if sg.Status != StatusOpen {
		return p, Suggestion{}, &vigia.Error{Kind: vigia.KindConflict, Code: CodeNotOpen, Key: "error.suggestion_not_open"}
	}
	return p, sg, nil
}

// Accept accepts an open suggestion (member or admin session); a rule suggestion
// creates its rule, a tuning suggestion raises the metric's anomaly threshold (through
// the issues' tuning) or the rule's tolerance (through the rule's update);
// suggestion_no_longer_holds when the proposal stopped being true meanwhile.
func (s *Service) Accept(ctx context.Context, id string) (Suggestion, error) {
	p, sg, err := s.open(ctx, id)
	if err != nil {
		return Suggestion{}, err
	}
	var ruleID *string
	if sg.Category == CategoryRule {
		col := sg.Column
		in := rule.CreateInput{DatasetID: sg.DatasetID, RuleType: fmt.Sprint(sg.Params["rule_type"]), Params: rule.ParamsIn{Column: &col}}
		if ref, ok := sg.Params["ref_dataset_id"].(string); ok {
			refCol, _ := sg.Params["ref_column"].(string)
			in.Params.RefDatasetID, in.Params.RefColumn = &ref, &refCol
		}
		r, err := s.rules.CreateRule(ctx, in)
		if err != nil {
			return Suggestion{}, err
		}
		ruleID = &r.ID
	}
	if sg.Category == CategoryDomain && s.domains != nil {
		// The dataset joins the domain, with the domain's own permission (its managers
		// or an admin).
		id, _ := sg.Params["domain_id"].(string)
		d, err := s.domains.Domain(ctx, id)
		if err != nil {
			return Suggestion{}, err
		}
		ids := append(append([]string{}, d.DatasetIDs...), sg.DatasetID)
		if _, err := s.domains.UpdateDomain(ctx, id, product.DomainPatch{DatasetIDs: &ids}); err != nil {
			return Suggestion{}, err
		}
	}
	if sg.Category == CategoryOwner && s.domains != nil {
		// The owner goes on the target domain, with the domain's own permission; a
		// domain that got an owner meanwhile keeps it.
		id, _ := sg.Params["domain_id"].(string)
		owner, _ := sg.Params["owner_name"].(string)
		d, err := s.domains.Domain(ctx, id)
		if err != nil {
			return Suggestion{}, err
		}
		if d.OwnerName != nil && strings.TrimSpace(*d.OwnerName) != "" {
			return Suggestion{}, &vigia.Error{Kind: vigia.KindConflict, Code: CodeNoLongerHolds, Key: "error.suggestion_no_longer_holds"}
		}
		if _, err := s.domains.UpdateDomain(ctx, id, product.DomainPatch{OwnerName: product.Some(owner)}); err != nil {
			return Suggestion{}, err
		}
	}
	if sg.Category == CategoryTuning {
		if err := s.acceptTuning(ctx, sg); err != nil {
			return Suggestion{}, err
		}
	}
	if err := s.store.SetStatus(ctx, p.WorkspaceID, id, StatusAccepted, ruleID, s.clock.Now()); err != nil {
		return Suggestion{}, err
	}
	return s.Get(ctx, id)
}

// Dismiss dismisses an open suggestion (member or admin session).
func (s *Service) Dismiss(ctx context.Context, id string) (Suggestion, error) {
	p, _, err := s.open(ctx, id)
	if err != nil {
		return Suggestion{}, err
	}
	if err := s.store.SetStatus(ctx, p.WorkspaceID, id, StatusDismissed, nil, s.clock.Now()); err != nil {
		return Suggestion{}, err
	}
	return s.Get(ctx, id)
}

// allowed are the functions a rehearsal's count may call.
var allowed = map[string]bool{
	"count": true, "regexp": true, "regexp_like": true, "lower": true, "upper": true, "trim": true, "ltrim": true, "rtrim": true,
	"length": true, "char_length": true, "character_length": true, "coalesce": true, "nullif": true, "substr": true,
	"substring": true, "replace": true, "regexp_replace": true, "regexp_matches": true, "abs": true, "round": true, "concat": true,
}

// maskRegex is the anchored regular expression of a mask: 9 a digit, A a letter,
// anything else itself.
func maskRegex(mask string) string {
	var b strings.Builder
	b.WriteByte('^')
	for _, r := range mask {
		switch r {
		case '9':
			b.WriteString("[0-9]")
		case 'A':
			b.WriteString("[[:alpha:]]")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteByte('$')
	return b.String()
}

// predicate is the rows a suggestion's change would touch, in the dialect: for
// parse_standardize, the values not already in the dominant format.
func predicate(sg Suggestion, d rulesql.Dialect) (string, bool) {
	if sg.Category != CategoryParsing {
		return "", false
	}
	target, _ := sg.Params["target_mask"].(string)
	if target == "" {
		return "", false
	}
	col := rulesql.QuoteIdent(d, sg.Column)
	re := rulesql.QuoteString(d, maskRegex(target))
	switch d {
	case rulesql.Postgres:
		return fmt.Sprintf("%s IS NOT NULL AND NOT (%s ~ %s)", col, col, re), true
	case rulesql.SQLite:
		return fmt.Sprintf("%s IS NOT NULL AND NOT regexp(%s, %s)", col, re, col), true
	case rulesql.DuckDB:
		// DuckDB's ~ matches the whole value; regexp_matches searches, as ~ does in Postgres.
		return fmt.Sprintf("%s IS NOT NULL AND NOT regexp_matches(%s, %s)", col, col, re), true
	default:
		return fmt.Sprintf("%s IS NOT NULL AND NOT (%s REGEXP %s)", col, col, re), true
	}
}

// Rehearse counts on the source the rows the suggestion's change would touch (member
// or admin session): the predicate Vigia derives from the suggestion, or the caller's
// own (a filter to try), in SELECT count(*) FROM <the dataset's table> WHERE
// <predicate>. The parser's verdict blocks it (not_select, forbidden,
// function_not_allowed, unknown_table); it runs in a read-only transaction under the
// timeout (timeout, source_error). Only the counts, status, duration and actor are
// kept.
func (s *Service) Rehearse(ctx context.Context, id string, own *string) (Suggestion, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Suggestion{}, err
	}
	sg, err := s.Get(ctx, id)
	if err != nil {
		return Suggestion{}, err
	}
	if own != nil && (strings.TrimSpace(*own) == "" || len(*own) > MaxPredicateLen) {
		return Suggestion{}, vigia.Invalid(vigia.Field("predicate_length", nil, "predicate"))
	}
	d, err := s.datasets.Dataset(ctx, sg.DatasetID)
	if err != nil {
		return Suggestion{}, err
	}
	version := 1
	if sg.Rehearsal != nil {
		version = sg.Rehearsal.Version + 1
	}
	start := s.clock.Now()
	reh := Rehearsal{Version: version, RequestedAt: start, Actor: "user:" + p.UserID}
	params := map[string]any{}
	finish := func(status, code string) (Suggestion, error) {
		reh.Status, reh.RanAt = status, s.clock.Now()
		reh.DurationMS = reh.RanAt.Sub(start).Milliseconds()
		if code != "" {
			reh.Reason = &Reason{Code: code, Params: params}
		}
		if err := s.store.SaveRehearsal(context.WithoutCancel(ctx), p.WorkspaceID, id, reh); err != nil {
			return Suggestion{}, err
		}
		return s.Get(ctx, id)
	}
	c, err := s.conns.Connection(ctx, d.ConnectionID)
	if err != nil {
		return Suggestion{}, err
	}
	dialect := rulesql.Dialect(c.Kind)
	pred, ok := predicate(sg, dialect)
	if own != nil {
		pred, ok = *own, true
	}
	if !ok {
		return finish(RehearsalBlocked, ReasonNoDiagnosis)
	}
	table := rulesql.QuoteIdent(dialect, d.Table)
	if dialect != rulesql.SQLite && d.Schema != "" {
		table = rulesql.QuoteIdent(dialect, d.Schema) + "." + table
	}
	count := "SELECT count(*) FROM " + table + " WHERE " + pred
	code, err := s.checker.CheckCount(string(dialect), count, source.Table{Schema: d.Schema, Name: d.Table}, allowed)
	if err != nil {
		return Suggestion{}, err
	}
	if code != "" {
		return finish(RehearsalBlocked, code)
	}
	if s.blackout != nil {
		w, err := s.blackout.Active(ctx, p.WorkspaceID, c.ID, start)
		if err != nil {
			return Suggestion{}, err
		}
		if w != nil {
			params["ends_at"] = w.EndsAt.UTC().Format(time.RFC3339)
			return finish(RehearsalBlocked, ReasonBlackout)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	src, err := s.conns.Open(rctx, c, nil, "vigia rehearsal")
	if err != nil {
		return finish(RehearsalError, ReasonSourceError)
	}
	defer src.Close()
	affected, _, err := src.QueryInt(rctx, count)
	if err == nil {
		var total int64
		total, _, err = src.QueryInt(rctx, "SELECT count(*) FROM "+table)
		if err == nil {
			reh.AffectedRows, reh.TotalRows = &affected, &total
			pct := 0.0
			if total > 0 {
				pct = float64(affected) * 100 / float64(total)
			}
			reh.Pct = &pct
			return finish(RehearsalOK, "")
		}
	}
	var se *source.Error
	if rctx.Err() != nil || (errors.As(err, &se) && se.Reason == source.ReasonTimeout) {
		return finish(RehearsalTimeout, ReasonTimeout)
	}
	return finish(RehearsalError, ReasonSourceError)
}
