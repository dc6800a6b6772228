package rule

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rulesql"
)

// A rule pack is a named, versioned set of rules for a kind of data, applied to the
// columns whose semantic type (measured by scans) each item names. Packs ship with
// Vigia; applying one creates ordinary rules, which the rules API then manages.

// Pack is a rule pack.
type Pack struct {
	Name        string
	Version     string
	Title       string
	Description string
	Items       []PackItem
}

// PackItem is one rule of a pack, for the columns of one semantic type.
type PackItem struct {
	// Key names the item within its pack (stable across versions).
	Key          string
	SemanticType string
	RuleType     string
	// Title names the rule created (with the pack's name and version).
	Title    string
	Severity string
	// Pattern is the regular expression of a pattern rule.
	Pattern string
	// CheckDigit names the check a custom_sql rule counts failures of, written in the
	// source's dialect when applied (nif_pt).
	CheckDigit string
}

// ActionRulePackApplied is the activity-log action of an applied pack.
const ActionRulePackApplied = "rule_pack_applied"

// PackPTCustomerMaster is the Portuguese customer master data pack.
const PackPTCustomerMaster = "pt_customer_master"

// nifShape is a Portuguese NIF/NIPC: nine digits with a first digit (or pair) in use.
const nifShape = `^([123568][0-9]|45|7[0124579]|9[0189])[0-9]{7}$`

// Packs lists the packs Vigia ships.
func Packs() []Pack {
	return []Pack{{
		Name: PackPTCustomerMaster, Version: "1.0.0", Title: "Dados mestre de clientes (Portugal)",
		Description: "Portuguese customer master data: NIF with its check digit, postal code, IBAN shape, Portuguese phone numbers " +
			"and e-mail addresses, on the columns scans recognised as nif_pt, postal_code_pt, iban, phone_pt and email. The IBAN's " +
			"mod-97 check digits are not counted by SQL; scans measure them in the column's semantic profile.",
		Items: []PackItem{
			{Key: "nif_format", SemanticType: "nif_pt", RuleType: TypePattern, Title: "NIF: formato", Severity: SeverityWarning, Pattern: nifShape},
			{Key: "nif_check_digit", SemanticType: "nif_pt", RuleType: TypeCustomSQL, Title: "NIF: dígito de controlo", Severity: SeverityCritical,
				CheckDigit: "nif_pt"},
			{Key: "postal_code", SemanticType: "postal_code_pt", RuleType: TypePattern, Title: "Código postal: formato 0000-000",
				Severity: SeverityWarning, Pattern: `^[0-9]{4}-[0-9]{3}$`},
			{Key: "iban_format", SemanticType: "iban", RuleType: TypePattern, Title: "IBAN: formato", Severity: SeverityWarning,
				Pattern: `^[A-Z]{2}[0-9]{2}( ?[A-Z0-9]){11,30}$`},
			{Key: "phone_pt", SemanticType: "phone_pt", RuleType: TypePattern, Title: "Telefone português", Severity: SeverityWarning,
				Pattern: `^(\+351|00351)?[ .()/-]*[239]([ .()/-]*[0-9]){8}$`},
			{Key: "email", SemanticType: "email", RuleType: TypePattern, Title: "E-mail: formato", Severity: SeverityWarning,
				Pattern: `^[^@ ]+@[^@ ]+\.[A-Za-z]{2,}$`},
		},
	}}
}

// packByName returns a shipped pack; KindNotFound otherwise.
func packByName(name string) (Pack, error) {
	for _, p := range Packs() {
		if p.Name == name {
			return p, nil
		}
	}
	return Pack{}, vigia.NotFound()
}

// RulePacks lists the packs Vigia ships. Any credential may read them.
func (s *Service) RulePacks(ctx context.Context) ([]Pack, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return nil, err
	}
	return Packs(), nil
}

// RulePack returns one pack; KindNotFound for an unknown name.
func (s *Service) RulePack(ctx context.Context, name string) (Pack, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return Pack{}, err
	}
	return packByName(name)
}

// PackScope selects the datasets a pack applies to: one dataset, one connection's, or
// (neither) every dataset the caller can see.
type PackScope struct {
	DatasetID    *string
	ConnectionID *string
}

// PackMatch is one rule a pack gives one column: new, or already there.
type PackMatch struct {
	Dataset      catalog.Dataset
	Column       string
	SemanticType string
	Item         PackItem
	Rule         Rule
	// ExistingRuleID is the equivalent rule the dataset already has; empty for a new one.
	ExistingRuleID string
	// RuleID is the rule an apply created.
	RuleID string
}

// PackPlan is what a pack does (preview) or did (apply) on its scope.
type PackPlan struct {
	Pack     Pack
	Matches  []PackMatch
	New      int
	Existing int
	// Datasets is how many datasets of the scope were looked at.
	Datasets int
}

// PreviewRulePack answers which columns of the scope would get which of the pack's
// rules, by their semantic type, and which of those rules exist already. Any
// credential may preview. Returns KindNotFound for an unknown pack, or a dataset or
// connection the caller cannot see.
func (s *Service) PreviewRulePack(ctx context.Context, name string, scope PackScope) (PackPlan, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return PackPlan{}, err
	}
	return s.planPack(ctx, catalog.ViewerOf(p), name, scope)
}

// ApplyRulePack creates the pack's new rules on the scope, in one transaction, and
// returns the plan with the rules created; rules that exist are left as they are. Only
// a member's or admin's session may apply. Errors as PreviewRulePack.
func (s *Service) ApplyRulePack(ctx context.Context, name string, scope PackScope) (PackPlan, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return PackPlan{}, err
	}
	plan, err := s.planPack(ctx, catalog.ViewerOf(p), name, scope)
	if err != nil {
		return plan, err
	}
	now := s.clock.Now()
	var rules []Rule
	for i := range plan.Matches {
		m := &plan.Matches[i]
		if m.ExistingRuleID != "" {
			continue
		}
		m.Rule.ID, m.Rule.WorkspaceID, m.Rule.CreatedBy, m.Rule.CreatedAt, m.Rule.UpdatedAt, m.Rule.Active =
			vigia.NewID(), p.WorkspaceID, "user:"+p.UserID, now, now, true
		m.RuleID = m.Rule.ID
		rules = append(rules, m.Rule)
	}
	if len(rules) == 0 {
		return plan, nil
	}
	act := event.Activity{WorkspaceID: p.WorkspaceID, Actor: "user:" + p.UserID, Action: ActionRulePackApplied, SubjectType: "rule_pack",
		SubjectID: plan.Pack.Name, CreatedAt: now, Details: map[string]any{"version": plan.Pack.Version, "created": len(rules),
			"existing": plan.Existing, "datasets": plan.Datasets}}
	if err := s.store.CreateRules(ctx, rules, act); err != nil {
		return PackPlan{}, err
	}
	return plan, nil
}

func (s *Service) planPack(ctx context.Context, v catalog.Viewer, name string, scope PackScope) (PackPlan, error) {
	pack, err := packByName(name)
	if err != nil {
		return PackPlan{}, err
	}
	plan := PackPlan{Pack: pack, Matches: []PackMatch{}}
	var datasets []catalog.Dataset
	switch {
	case scope.DatasetID != nil:
		d, err := s.datasets.Dataset(ctx, *scope.DatasetID)
		if err != nil {
			return plan, err
		}
		datasets = []catalog.Dataset{d}
	default:
		if scope.ConnectionID != nil {
			if !vigia.ValidID(*scope.ConnectionID) {
				return plan, vigia.NotFound()
			}
			if _, err := s.conns.Connection(ctx, *scope.ConnectionID); err != nil {
				return plan, err
			}
		}
		var ids []string
		for offset := 0; ; offset += vigia.MaxLimit {
			page, err := s.datasets.FindDatasets(ctx, catalog.DatasetFilter{ConnectionID: scope.ConnectionID,
				Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
			if err != nil {
				return plan, err
			}
			for _, d := range page.Items {
				ids = append(ids, d.ID)
			}
			if len(page.Items) < vigia.MaxLimit {
				break
			}
		}
		for start := 0; start < len(ids); start += vigia.MaxLimit {
			batch := ids[start:min(start+vigia.MaxLimit, len(ids))]
			details, err := s.datasets.DatasetDetails(ctx, batch, 1)
			if err != nil {
				return plan, err
			}
			for _, id := range batch {
				if d, ok := details[id]; ok {
					datasets = append(datasets, d)
				}
			}
		}
	}
	plan.Datasets = len(datasets)
	kinds := map[string]string{}
	for _, d := range datasets {
		var existing []Rule
		loaded := false
		for _, c := range d.Columns {
			if c.Profile == nil || c.Profile.Semantic == nil {
				continue
			}
			for _, item := range pack.Items {
				if item.SemanticType != c.Profile.Semantic.Type {
					continue
				}
				if !loaded {
					id := d.ID
					if existing, err = s.allRules(ctx, v, Filter{DatasetID: &id}); err != nil {
						return plan, err
					}
					loaded = true
				}
				kind, ok := kinds[d.ConnectionID]
				if !ok {
					conn, err := s.conns.Connection(ctx, d.ConnectionID)
					if err != nil {
						return plan, err
					}
					kind, kinds[d.ConnectionID] = conn.Kind, conn.Kind
				}
				r, err := s.packRule(ctx, pack, item, d, c.Name, rulesql.Dialect(kind))
				if err != nil {
					return plan, err
				}
				m := PackMatch{Dataset: d, Column: c.Name, SemanticType: item.SemanticType, Item: item, Rule: r}
				if j := slices.IndexFunc(existing, func(e Rule) bool { return equivalent(e, r) }); j >= 0 {
					m.ExistingRuleID = existing[j].ID
					plan.Existing++
				} else {
					plan.New++
				}
				plan.Matches = append(plan.Matches, m)
			}
		}
	}
	return plan, nil
}

// packRule is the rule an item gives a column, checked like any rule.
func (s *Service) packRule(ctx context.Context, pack Pack, item PackItem, d catalog.Dataset, column string, dialect rulesql.Dialect) (Rule, error) {
	in := ParamsIn{}
	switch item.RuleType {
	case TypePattern:
		in.Column, in.Pattern = &column, &item.Pattern
	case TypeCustomSQL:
		q := nifCheckDigitSQL(dialect, rulesql.Table{Schema: d.Schema, Name: d.Table}, column)
		in.SQL = &q
	}
	params, err := s.checkParams(ctx, d, item.RuleType, in)
	if err != nil {
		return Rule{}, err
	}
	title := item.Title + " (" + column + ") — " + pack.Name + " " + pack.Version
	if r := []rune(title); len(r) > MaxName {
		title = string(r[:MaxName])
	}
	return Rule{DatasetID: d.ID, DatasetSchema: d.Schema, DatasetTable: d.Table, ConnectionID: d.ConnectionID, Type: item.RuleType,
		Name: title, Severity: item.Severity, Params: params}, nil
}

// nifCheckDigitSQL counts the rows whose column has a NIF's nine digits but the wrong
// check digit: the weighted sum of the first eight digits (9 down to 2) modulo 11 gives
// the ninth ((11 - sum % 11) % 11 % 10). Values of another shape are the format rule's.
func nifCheckDigitSQL(d rulesql.Dialect, t rulesql.Table, column string) string {
	text, num := "TEXT", "INTEGER"
	match := func(e string) string { return e + " REGEXP '^[0-9]{9}$'" }
	switch d {
	case rulesql.Postgres:
		match = func(e string) string { return e + " ~ '^[0-9]{9}$'" }
	case rulesql.MySQL:
		text, num = "CHAR", "UNSIGNED"
	}
	c := "CAST(" + rulesql.QuoteIdent(d, column) + " AS " + text + ")"
	digit := func(i int) string { return "CAST(SUBSTR(" + c + ", " + strconv.Itoa(i) + ", 1) AS " + num + ")" }
	var sum []string
	for i := 1; i <= 8; i++ {
		sum = append(sum, digit(i)+" * "+strconv.Itoa(10-i))
	}
	return "SELECT COUNT(*) FROM " + rulesql.TableRef(d, t) + " WHERE " + match(c) + " AND (11 - (" + strings.Join(sum, " + ") +
		") % 11) % 11 % 10 <> " + digit(9)
}
