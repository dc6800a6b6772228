package datadiff

import (
	"context"
	"errors"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// Bounds of a reconciliation.
const (
	MaxReconcileGroups  = 10000 // groups one side may answer
	MaxReconcileColumns = 16    // group_by and sum columns each
	MaxReportedGroups   = 100   // differing groups listed
)

// Codes of a reconciliation.
const (
	CodeTooManyGroups = "reconcile_too_many_groups"
	// Group differences.
	GroupOnlyInA    = "only_in_a"
	GroupOnlyInB    = "only_in_b"
	GroupCountDiff  = "count_differs"
	GroupSumDiffers = "sum_differs"
)

// ActionReconciled is the activity-log action of a reconciliation run.
const ActionReconciled = "reconciliation_run"

// ReconcileRequest declares a reconciliation between two datasets: row counts and sums
// of numeric columns per group, compared within a tolerance.
type ReconcileRequest struct {
	GroupBy    []string
	SumColumns []string
	// TolerancePct is the relative difference allowed per count and sum (0: exact).
	TolerancePct float64
	TimeBudget   time.Duration
}

// GroupDiff is one group whose figures differ beyond the tolerance.
type GroupDiff struct {
	// Group is the group's values as canonical text (nil for NULL), in GroupBy order.
	Group  []*string
	Code   string
	CountA int64
	CountB int64
	// Sums are "a" and "b" per sum column that differs (decimal text), only for
	// sum_differs.
	Sums map[string][2]string
}

// ReconcileResult is a reconciliation's answer, as a rule result: passed or failed with
// the groups that differ.
type ReconcileResult struct {
	DatasetID    string
	OtherID      string
	Status       string // passed or failed
	Groups       int    // distinct groups over both sides
	FailedGroups int
	Differing    []GroupDiff
	Statements   int
	Duration     time.Duration
}

// Reconcile compares, per group, the row counts and the sums of sum columns of two
// datasets the caller can see (each aggregated on its own source; only the groups'
// figures travel). Returns KindNotFound for a dataset the caller cannot see,
// KindInvalid for columns missing on a side or bad options, and the diff's budget and
// source codes.
func (s *Service) Reconcile(ctx context.Context, id, otherID string, req ReconcileRequest) (ReconcileResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return ReconcileResult{}, err
	}
	a, err := s.datasets.Dataset(ctx, id)
	if err != nil {
		return ReconcileResult{}, err
	}
	b, err := s.datasets.Dataset(ctx, otherID)
	if err != nil {
		return ReconcileResult{}, err
	}
	if err := checkReconcile(a, b, &req); err != nil {
		return ReconcileResult{}, err
	}
	if err := s.refuse(ctx, p.WorkspaceID, a, b); err != nil {
		return ReconcileResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, req.TimeBudget)
	defer cancel()
	start := time.Now()
	res := ReconcileResult{DatasetID: a.ID, OtherID: b.ID, Differing: []GroupDiff{}}
	var figs [2]map[string]groupFigures
	for i, d := range []catalog.Dataset{a, b} {
		src, err := s.open(ctx, d)
		if err != nil {
			return ReconcileResult{}, budgetOr(ctx, err)
		}
		g := newGen(rulesql.Dialect(src.Dialect()), rulesql.Table{Schema: d.Schema, Name: d.Table})
		rows, err := src.QueryRows(ctx, g.groupFigures(byName(d.Columns), req.GroupBy, req.SumColumns), MaxReconcileGroups+1)
		src.Close()
		res.Statements++
		if err != nil {
			var se *source.Error
			if errors.As(err, &se) && se.Reason == source.ReasonResult {
				return ReconcileResult{}, &vigia.Error{Kind: vigia.KindInvalid, Code: CodeTooManyGroups, Key: "error.reconcile_too_many_groups"}
			}
			return ReconcileResult{}, budgetOr(ctx, sourceFailed())
		}
		figs[i] = map[string]groupFigures{}
		for _, row := range rows {
			k := row[:len(req.GroupBy)]
			f := groupFigures{group: k, count: deref(row[len(req.GroupBy)]), sums: make([]*string, len(req.SumColumns))}
			copy(f.sums, row[len(req.GroupBy)+1:])
			figs[i][keyID(k)] = f
		}
	}
	ids := map[string]bool{}
	for k := range figs[0] {
		ids[k] = true
	}
	for k := range figs[1] {
		ids[k] = true
	}
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	res.Groups = len(keys)
	for _, k := range keys {
		fa, inA := figs[0][k]
		fb, inB := figs[1][k]
		var d *GroupDiff
		switch {
		case !inB:
			d = &GroupDiff{Group: fa.group, Code: GroupOnlyInA, CountA: atoi64(fa.count)}
		case !inA:
			d = &GroupDiff{Group: fb.group, Code: GroupOnlyInB, CountB: atoi64(fb.count)}
		case !within(fa.count, fb.count, req.TolerancePct):
			d = &GroupDiff{Group: fa.group, Code: GroupCountDiff, CountA: atoi64(fa.count), CountB: atoi64(fb.count)}
		default:
			for j, c := range req.SumColumns {
				if !within(deref(fa.sums[j]), deref(fb.sums[j]), req.TolerancePct) {
					if d == nil {
						d = &GroupDiff{Group: fa.group, Code: GroupSumDiffers, CountA: atoi64(fa.count), CountB: atoi64(fb.count), Sums: map[string][2]string{}}
					}
					d.Sums[c] = [2]string{deref(fa.sums[j]), deref(fb.sums[j])}
				}
			}
		}
		if d == nil {
			continue
		}
		res.FailedGroups++
		if len(res.Differing) < MaxReportedGroups {
			for i, v := range d.Group {
				if v != nil && *v == `\N` {
					d.Group[i] = nil
				}
			}
			res.Differing = append(res.Differing, *d)
		}
	}
	res.Status = "passed"
	if res.FailedGroups > 0 {
		res.Status = "failed"
	}
	res.Duration = time.Since(start)
	actor := "user:" + p.UserID
	if p.IsToken() {
		actor = "token:" + p.TokenID
	}
	if err := s.store.AddActivity(context.WithoutCancel(ctx), event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: actor,
		Action: ActionReconciled, SubjectType: "dataset", SubjectID: a.ID, CreatedAt: s.clock.Now(),
		Details: map[string]any{"other_id": b.ID, "status": res.Status, "groups": res.Groups, "failed_groups": res.FailedGroups}}); err != nil {
		return ReconcileResult{}, err
	}
	return res, nil
}

type groupFigures struct {
	group []*string
	count string
	sums  []*string
}

func atoi64(s string) int64 {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || !n.IsInt64() {
		return 0
	}
	return n.Int64()
}

// within reports whether two decimal texts differ by at most pct percent of the larger
// magnitude (exactly equal when pct is 0; two NULL sums are equal).
func within(a, b string, pct float64) bool {
	if a == b {
		return true
	}
	ra, okA := new(big.Rat).SetString(a)
	rb, okB := new(big.Rat).SetString(b)
	if !okA || !okB {
		return false
	}
	diff := new(big.Rat).Sub(ra, rb)
	diff.Abs(diff)
	if diff.Sign() == 0 {
		return true
	}
	m := new(big.Rat).Abs(ra)
	if abs := new(big.Rat).Abs(rb); abs.Cmp(m) > 0 {
		m = abs
	}
	limit := new(big.Rat).Mul(m, new(big.Rat).SetFloat64(pct/100))
	return diff.Cmp(limit) <= 0
}

func checkReconcile(a, b catalog.Dataset, req *ReconcileRequest) error {
	var fields []vigia.FieldError
	ca, cb := byName(a.Columns), byName(b.Columns)
	check := func(list []string, field string, numeric bool) {
		if len(list) > MaxReconcileColumns {
			fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxReconcileColumns}, field))
			return
		}
		for i, c := range list {
			x, inA := ca[c]
			y, inB := cb[c]
			if !inA || !inB || numeric && (x.Class != source.ClassNumeric || y.Class != source.ClassNumeric) {
				fields = append(fields, vigia.Field("value_error", map[string]any{"reason": "not_a_column_of_both"}, field, itoa(i)))
			}
		}
	}
	check(req.GroupBy, "group_by", false)
	check(req.SumColumns, "sum_columns", true)
	if req.TolerancePct < 0 || req.TolerancePct > 100 {
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 0, "le": 100}, "tolerance_pct"))
	}
	switch {
	case req.TimeBudget == 0:
		req.TimeBudget = DefaultTimeBudget
	case req.TimeBudget < time.Second || req.TimeBudget > MaxTimeBudget:
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": int(MaxTimeBudget.Seconds())}, "time_budget_seconds"))
	}
	if len(fields) > 0 {
		return vigia.Invalid(fields...)
	}
	return nil
}

// groupFigures answers, per group, the group's values as canonical text, the rows and
// the sum of each sum column (as text).
func (g gen) groupFigures(cols map[string]catalog.Column, groupBy, sums []string) string {
	var sel, grp []string
	for _, c := range groupBy {
		e := g.colText(cols[c])
		sel = append(sel, e)
		grp = append(grp, e)
	}
	sel = append(sel, "COUNT(*)")
	for _, c := range sums {
		sel = append(sel, "CAST(SUM("+rulesql.QuoteIdent(g.d, c)+") AS "+g.textType()+")")
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + g.table
	if len(grp) > 0 {
		q += " GROUP BY " + strings.Join(grp, ", ")
	}
	return q
}

func (g gen) textType() string {
	switch g.d {
	case rulesql.MySQL:
		return "CHAR"
	case rulesql.SQLite:
		return "TEXT"
	}
	return "text"
}
