package rule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

// Evaluator evaluates a dataset's active rules on its source during a scan; it
// implements scan.RuleEvaluator.
type Evaluator struct {
	store Store
}

// NewEvaluator returns the evaluator scans use.
func NewEvaluator(store Store) *Evaluator { return &Evaluator{store: store} }

var _ scan.RuleEvaluator = (*Evaluator)(nil)

// EvaluateRules runs each active rule of the dataset on src with QueryInt (one read-only
// statement per count, with the statement timeout and the query log) and returns its
// result. A rule that cannot be checked (a column or the reference gone, the reference
// on another connection, a timeout, a source error) is not_evaluated with a reason. It
// returns an error only when the rules cannot be read or ctx ends.
func (e *Evaluator) EvaluateRules(ctx context.Context, src source.Source, in scan.RuleInput) ([]scan.RuleResult, error) {
	rules, err := e.store.ActiveRulesOf(ctx, in.Dataset.ID)
	if err != nil {
		return nil, err
	}
	out := make([]scan.RuleResult, 0, len(rules))
	for _, r := range rules {
		res := evaluate(ctx, src, in, r)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

var _ scan.ReportedRules = (*Evaluator)(nil)

// ReportedOutcomes returns the last passed or failed results of the dataset's active
// dbt test rules, so that a scan counts them in the score and the verdict.
func (e *Evaluator) ReportedOutcomes(ctx context.Context, datasetID string) ([]quality.RuleOutcome, error) {
	return e.store.ReportedRuleOutcomes(ctx, datasetID)
}

// measure is what one evaluation found.
type measure struct {
	observed, threshold *float64
	failed              bool
	reason              string
	params              map[string]any
}

func notEvaluated(reason string, params map[string]any) measure {
	return measure{reason: reason, params: params}
}

func evaluate(ctx context.Context, src source.Source, in scan.RuleInput, r ScanRule) scan.RuleResult {
	p := r.Params
	res := scan.RuleResult{RuleID: r.ID, RuleType: r.Type, Severity: r.Severity}
	if cols := p.KeyColumns(); len(cols) > 0 {
		res.Column = cols[0]
	}
	m := measureRule(ctx, src, in, r)
	res.Observed, res.Threshold, res.ReasonCode, res.ReasonParams = m.observed, m.threshold, m.reason, m.params
	if res.Threshold == nil {
		res.Threshold = thresholdOf(r.Rule)
	}
	switch {
	case m.observed == nil:
		res.Status = quality.RuleNotEvaluated
	case m.failed:
		res.Status = quality.RuleFailed
		res.Title, res.TitleKey, res.TitleParams = issueTitle(in.Dataset.Name(), r, *m.observed, m.threshold)
	default:
		res.Status = quality.RulePassed
	}
	return res
}

func measureRule(ctx context.Context, src source.Source, in scan.RuleInput, r ScanRule) measure {
	p := r.Params
	d := rulesql.Dialect(src.Dialect())
	own := rulesql.Table{Schema: in.Dataset.Schema, Name: in.Dataset.Table}
	have := map[string]bool{}
	for _, c := range in.Table.Columns {
		have[c.Name] = true
	}
	for _, c := range p.KeyColumns() {
		if !have[c] {
			return notEvaluated(ReasonColumnMissing, map[string]any{"column": c})
		}
	}
	maxFailing := func() *float64 {
		f := 0.0
		if p.MaxFailing != nil {
			f = float64(*p.MaxFailing)
		}
		return &f
	}
	count := func(stmt string) (measure, bool) {
		n, ok, err := src.QueryInt(ctx, stmt)
		if err != nil {
			return sourceFailure(err), false
		}
		if !ok {
			return notEvaluated(ReasonBadResult, nil), false
		}
		f := float64(n)
		return measure{observed: &f}, true
	}
	spec := rulesql.Rule{Type: r.Type, Table: own, Columns: p.KeyColumns(), Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max}

	switch r.Type {
	case TypeNotNull, TypeUnique, TypeAcceptedValues, TypePattern, TypeRange:
		stmt, ok, reason, err := rulesql.CountSQL(spec, d)
		if err != nil {
			return notEvaluated(ReasonSourceError, map[string]any{"reason": "invalid_rule"})
		}
		if !ok {
			if reason == rulesql.ReasonPatternUnsupported {
				return notEvaluated(ReasonPatternUnsupported, nil)
			}
			return notEvaluated(ReasonSourceError, map[string]any{"reason": reason})
		}
		m, good := count(stmt)
		if !good {
			return m
		}
		m.threshold = maxFailing()
		m.failed = *m.observed > *m.threshold
		return m

	case TypeReferential:
		ref := r.Ref
		refParams := map[string]any{}
		if ref == nil {
			return notEvaluated(ReasonReferenceMissing, nil)
		}
		refParams["ref_dataset_id"] = ref.ID
		refParams["ref_dataset"] = qualified(ref.Schema, ref.Table)
		switch {
		case ref.ConnectionID != in.ConnectionID:
			return notEvaluated(ReasonReferenceOtherConnection, refParams)
		case ref.Dropped:
			return notEvaluated(ReasonReferenceUnreachable, refParams)
		case len(ref.Columns) > 0 && !contains(ref.Columns, p.RefColumn):
			return notEvaluated(ReasonReferenceColumnMissing, refParams)
		}
		spec.RefTable, spec.RefColumn = rulesql.Table{Schema: ref.Schema, Name: ref.Table}, p.RefColumn
		stmt, ok, _, err := rulesql.CountSQL(spec, d)
		if err != nil || !ok {
			return notEvaluated(ReasonSourceError, map[string]any{"reason": "invalid_rule"})
		}
		orphans, good := count(stmt)
		if !good {
			if orphans.reason == ReasonSourceError && orphans.params["reason"] == source.ReasonNotFound {
				// The rule's own table was just profiled: the missing table is the reference.
				return notEvaluated(ReasonReferenceUnreachable, refParams)
			}
			return orphans
		}
		rows, good := count("SELECT COUNT(" + rulesql.QuoteIdent(d, p.Column) + ") FROM " + rulesql.TableRef(d, own))
		if !good {
			return rows
		}
		pct := 0.0
		if *rows.observed > 0 {
			pct = round2(100 * *orphans.observed / *rows.observed)
		}
		threshold := 0.0
		if p.MaxOrphanPct != nil {
			threshold = *p.MaxOrphanPct
		}
		return measure{observed: &pct, threshold: &threshold, failed: pct > threshold}

	case TypeFreshness:
		epoch, ok, err := src.QueryInt(ctx, newestEpochSQL(d, own, p.Column))
		if err != nil {
			return sourceFailure(err)
		}
		threshold := *p.MaxAgeHours
		if !ok {
			return notEvaluated(ReasonNoValues, nil)
		}
		age := round2(math.Max(0, in.Now.Sub(time.Unix(epoch, 0)).Hours()))
		return measure{observed: &age, threshold: &threshold, failed: age > threshold}

	case TypeRowCountMin:
		var m measure
		if in.Profile != nil && !in.Profile.Truncated {
			rows := float64(in.Profile.RowCount)
			m.observed = &rows
		} else {
			var good bool
			if m, good = count("SELECT COUNT(*) FROM " + rulesql.TableRef(d, own)); !good {
				return m
			}
		}
		threshold := float64(*p.MinRows)
		m.threshold = &threshold
		m.failed = *m.observed < threshold
		return m

	case TypeCustomSQL:
		if ok, _ := rulesql.CheckCountQuery(d, p.SQL); !ok {
			return notEvaluated(ReasonSQLNotReadOnly, nil)
		}
		m, good := count(p.SQL)
		if !good {
			return m
		}
		m.threshold = maxFailing()
		m.failed = *m.observed > *m.threshold
		return m
	}
	return notEvaluated(ReasonSourceError, map[string]any{"reason": "unsupported_rule"})
}

// thresholdOf is a rule's limit as its results show it.
func thresholdOf(r Rule) *float64 {
	p := r.Params
	var f float64
	switch {
	case r.Type == TypeReferential && p.MaxOrphanPct != nil:
		f = *p.MaxOrphanPct
	case r.Type == TypeFreshness && p.MaxAgeHours != nil:
		f = *p.MaxAgeHours
	case r.Type == TypeRowCountMin && p.MinRows != nil:
		f = float64(*p.MinRows)
	case p.MaxFailing != nil:
		f = float64(*p.MaxFailing)
	}
	return &f
}

// newestEpochSQL is the Unix time of the column's newest value, as the source reads its
// timestamps: a value without a zone is taken as UTC, as profiles take it.
func newestEpochSQL(d rulesql.Dialect, t rulesql.Table, column string) string {
	c, tbl := rulesql.QuoteIdent(d, column), rulesql.TableRef(d, t)
	switch d {
	case rulesql.MySQL:
		return "SELECT FLOOR(UNIX_TIMESTAMP(MAX(" + c + "))) FROM " + tbl
	case rulesql.SQLite:
		return "SELECT CAST(strftime('%s', MAX(" + c + ")) AS INTEGER) FROM " + tbl
	}
	return "SELECT CAST(floor(EXTRACT(EPOCH FROM MAX(" + c + ") FILTER (WHERE isfinite(" + c + ")))) AS bigint) FROM " + tbl
}

// sourceFailure turns a source error into a not_evaluated reason: only the stable
// reason and the driver's code are kept, never a message.
func sourceFailure(err error) measure {
	var se *source.Error
	if !errors.As(err, &se) {
		return notEvaluated(ReasonSourceError, map[string]any{"reason": source.ReasonInternalError})
	}
	switch se.Reason {
	case source.ReasonTimeout:
		return notEvaluated(ReasonTimeout, nil)
	case source.ReasonResult:
		return notEvaluated(ReasonBadResult, nil)
	}
	params := map[string]any{"reason": se.Reason}
	if se.Code != "" {
		params["code"] = se.Code
	}
	return notEvaluated(ReasonSourceError, params)
}

// issueTitle describes a failed rule for the issue it opens (pt-PT, as issue titles
// are), with names and the rule's measure, never a value of the data.
func issueTitle(dataset string, r ScanRule, observed float64, threshold *float64) (string, string, map[string]any) {
	p := r.Params
	col := ""
	if cols := p.KeyColumns(); len(cols) > 0 {
		col = cols[0]
		for _, c := range cols[1:] {
			col += ", " + c
		}
	}
	thr := 0.0
	if threshold != nil {
		thr = *threshold
	}
	params := map[string]any{"dataset": dataset, "rule_type": r.Type, "column": col, "observed": observed, "threshold": thr}
	if r.Name != "" {
		params["name"] = r.Name
	}
	obs, lim := formatNumber(observed), formatNumber(thr)
	var title string
	switch r.Type {
	case TypeNotNull:
		title = fmt.Sprintf("%s.%s: %s linha(s) com nulos (máximo %s)", dataset, col, obs, lim)
	case TypeUnique:
		title = fmt.Sprintf("%s: %s linha(s) com chave repetida em (%s) (máximo %s)", dataset, obs, col, lim)
	case TypeAcceptedValues:
		title = fmt.Sprintf("%s.%s: %s linha(s) fora dos valores aceites (máximo %s)", dataset, col, obs, lim)
	case TypePattern:
		title = fmt.Sprintf("%s.%s: %s linha(s) fora do padrão (máximo %s)", dataset, col, obs, lim)
	case TypeRange:
		title = fmt.Sprintf("%s.%s: %s linha(s) fora do intervalo (máximo %s)", dataset, col, obs, lim)
	case TypeReferential:
		title = fmt.Sprintf("%s.%s: %s%% de órfãos (máximo %s%%)", dataset, col, obs, lim)
	case TypeFreshness:
		title = fmt.Sprintf("%s.%s: dados com %s h (máximo %s h)", dataset, col, obs, lim)
	case TypeRowCountMin:
		title = fmt.Sprintf("%s: %s linha(s) (mínimo %s)", dataset, obs, lim)
	case TypeDBTTest:
		title = fmt.Sprintf("%s: o teste dbt conta %s linha(s) em falha (máximo %s)", dataset, obs, lim)
	default:
		title = fmt.Sprintf("%s: a consulta da regra conta %s linha(s) (máximo %s)", dataset, obs, lim)
	}
	prefix := "Regra " + r.Type
	if r.Name != "" {
		prefix = "Regra " + r.Name
	}
	return prefix + " falhou em " + title, "issue.rule." + r.Type, params
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// formatNumber writes a number without a needless fraction: 3, 2.5, 0.01.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
