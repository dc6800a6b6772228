package quality

import (
	"math"
	"sort"
)

// Kinds of score explanation drivers.
const (
	// DriverConsistencyIssue is an issue whose consistencia deduction changed; params
	// change, age_before, age_after, points_before, points_after, decay_scans, severity.
	DriverConsistencyIssue = "consistency_issue"
	// DriverWeightChanged is a dimension whose weight in the overall score changed;
	// params dimension, weight_before, weight_after (percent).
	DriverWeightChanged = "weight_changed"
	// DriverDimensionChanged is a dimension whose score moved; params dimension,
	// before, after (either may be null), delta. Vigia's own addition to the contract's
	// kinds: clients ignore kinds they do not know.
	DriverDimensionChanged = "dimension_changed"
)

// Codes of score explanation notes.
const (
	// NoteConsistencyModelChanged: the two scores were not computed with the same
	// consistencia model (one predates it, or K changed); params from (null when the
	// previous score predates the model), to.
	NoteConsistencyModelChanged = "consistency_model_changed"
	// NoteWeightsChanged: the two scores used different dimension weights, so their
	// overall values are not directly comparable; params before, after.
	NoteWeightsChanged = "weights_changed"
	// NoteDimensionSaturated: a dimension sits at its floor and cannot show everything
	// that deducts from it (consistencia, when its deductions add up to more than 100);
	// params dimension, deduction, floor, hidden_points, issues_beyond_floor (issue ids,
	// the newest problems). Vigia's addition.
	NoteDimensionSaturated = "dimension_saturated"
	// NoteCompletudeWorstColumn: completude averages all cells, so one mostly empty
	// column moves it little; params column, column_completude, cell_average. Vigia's
	// addition.
	NoteCompletudeWorstColumn = "completude_worst_column"
)

// Driver is one reason a score differs from the previous scan's.
type Driver struct {
	Kind    string         `json:"kind"`
	IssueID string         `json:"issue_id,omitempty"`
	Params  map[string]any `json:"params"`
}

// Note is a caveat about comparing two scores.
type Note struct {
	Code   string         `json:"code"`
	Params map[string]any `json:"params,omitempty"`
}

// Explanation is the answer of /score/explain.
type Explanation struct {
	Score         *float64 `json:"score"`
	PreviousScore *float64 `json:"previous_score"`
	Drivers       []Driver `json:"drivers"`
	Notes         []Note   `json:"notes"`
}

// Explain says why curr differs from prev, the dataset's previous stored score (nil for
// the first scan). Drivers come in this order: consistency_issue (largest change in
// points first; present even without a previous score, as they are part of curr),
// weight_changed (contract order of dimensions), dimension_changed (largest move first).
// A previous score stored without weights is read as computed with the default weights.
//
// Notes say when the two scores are not comparable, then what the formulas cannot show,
// whatever the previous score: a saturated consistencia (dimension_saturated, naming the
// issues beyond its floor) and the emptiest column next to completude's cell average
// (completude_worst_column).
func Explain(curr Score, prev *Score) Explanation {
	out := Explanation{Score: curr.Score, Drivers: []Driver{}, Notes: []Note{}}
	for _, is := range curr.Consistency.Issues {
		var ageBefore any
		if is.AgeBefore != nil {
			ageBefore = *is.AgeBefore
		}
		out.Drivers = append(out.Drivers, Driver{Kind: DriverConsistencyIssue, IssueID: is.IssueID, Params: map[string]any{
			"change": is.Change, "age_before": ageBefore, "age_after": is.AgeAfter,
			"points_before": is.PointsBefore, "points_after": is.PointsAfter,
			"decay_scans": is.DecayScans, "severity": string(is.Severity),
		}})
	}
	if prev == nil {
		out.Notes = append(out.Notes, blindSpots(curr)...)
		return out
	}
	out.PreviousScore = prev.Score

	if prev.Consistency.Model != curr.Consistency.Model {
		var from any
		if prev.Consistency.Model != "" {
			from = prev.Consistency.Model
		}
		out.Notes = append(out.Notes, Note{Code: NoteConsistencyModelChanged,
			Params: map[string]any{"from": from, "to": curr.Consistency.Model}})
	}

	before, after := prev.Weights.orDefault(), curr.Weights.orDefault()
	if !before.Equal(after) {
		out.Notes = append(out.Notes, Note{Code: NoteWeightsChanged, Params: map[string]any{
			"before": weightsParam(before), "after": weightsParam(after)}})
		for _, d := range AllDimensions() {
			if math.Abs(before[d]-after[d]) > weightSumTolerance {
				out.Drivers = append(out.Drivers, Driver{Kind: DriverWeightChanged, Params: map[string]any{
					"dimension": string(d), "weight_before": before[d], "weight_after": after[d]}})
			}
		}
	}

	var moved []Driver
	var deltas []float64
	for _, d := range AllDimensions() {
		b, a := prev.Dimensions.Get(d), curr.Dimensions.Get(d)
		switch {
		case b == nil && a == nil:
			continue
		case b != nil && a != nil && *a == *b:
			continue
		}
		params := map[string]any{"dimension": string(d), "before": nilOr(b), "after": nilOr(a), "delta": nil}
		delta := math.Inf(1) // a dimension appearing or vanishing outranks any move
		if a != nil && b != nil {
			delta = round2(*a - *b)
			params["delta"] = delta
		}
		moved = append(moved, Driver{Kind: DriverDimensionChanged, Params: params})
		deltas = append(deltas, math.Abs(delta))
	}
	idx := make([]int, len(moved))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return deltas[idx[i]] > deltas[idx[j]] })
	for _, i := range idx {
		out.Drivers = append(out.Drivers, moved[i])
	}
	out.Notes = append(out.Notes, blindSpots(curr)...)
	return out
}

// blindSpots are the notes of what the score's formulas cannot show: a saturated
// consistencia and the emptiest column behind completude's cell average.
func blindSpots(curr Score) []Note {
	var out []Note
	if c := curr.Consistency; c.Saturated {
		out = append(out, Note{Code: NoteDimensionSaturated, Params: map[string]any{
			"dimension": string(Consistencia), "deduction": round2(c.Deduction), "floor": 0.0,
			"hidden_points": round2(c.HiddenPoints), "issues_beyond_floor": append([]string{}, c.BeyondFloor...)}})
	}
	if w := curr.Meta[Completude].WorstColumn; w != nil && curr.Dimensions.Completude != nil {
		out = append(out, Note{Code: NoteCompletudeWorstColumn, Params: map[string]any{
			"column": w.Column, "column_completude": w.Completude, "cell_average": *curr.Dimensions.Completude}})
	}
	return out
}

func weightsParam(w Weights) map[string]any {
	out := make(map[string]any, 5)
	for _, d := range AllDimensions() {
		out[string(d)] = w[d]
	}
	return out
}

func nilOr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
