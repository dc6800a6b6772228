package quality

import (
	"math"
	"sort"

	"github.com/vigia-data/vigia"
)

// Dimension is one of the five quality dimensions of a score. The values are the
// contract's words and stay Portuguese.
type Dimension string

// The five dimensions, in the order the contract lists them.
const (
	Completude   Dimension = "completude"
	Unicidade    Dimension = "unicidade"
	Validade     Dimension = "validade"
	Atualidade   Dimension = "atualidade"
	Consistencia Dimension = "consistencia"
)

// AllDimensions returns the five dimensions in contract order. It returns a new slice
// each time so callers may modify it.
func AllDimensions() []Dimension {
	return []Dimension{Completude, Unicidade, Validade, Atualidade, Consistencia}
}

// Valid reports whether d is one of the five dimensions.
func (d Dimension) Valid() bool {
	switch d {
	case Completude, Unicidade, Validade, Atualidade, Consistencia:
		return true
	}
	return false
}

// Weights are the percent weight of each dimension in the overall score. A validated
// Weights holds all five dimensions (an omitted one weighs 0) and sums to 100.
type Weights map[Dimension]float64

// DefaultWeights returns equal weights: 20 percent per dimension.
func DefaultWeights() Weights {
	w := make(Weights, 5)
	for _, d := range AllDimensions() {
		w[d] = 20
	}
	return w
}

// weightSumTolerance absorbs the rounding of weights such as 33.33/33.33/33.34 sent as
// binary floats; anything further from 100 is the caller's mistake.
const weightSumTolerance = 1e-6

// ValidateWeights checks a domain SLA's dimension_weights and returns them with every
// dimension present (an omitted dimension weighs 0). loc is the location prefix of the
// field, e.g. "sla"; items end in "dimension_weights".
//
// It returns a KindInvalid error when a key is not a dimension (type extra_forbidden;
// the key itself is not echoed), a weight is not finite (finite_number), below 0
// (greater_than_equal) or above 100 (less_than_equal), or the weights do not sum to 100
// (weights_sum, ctx eq=100).
func ValidateWeights(raw map[string]float64, loc ...string) (Weights, error) {
	at := func(extra ...string) []string {
		out := append(append(make([]string, 0, len(loc)+2), loc...), "dimension_weights")
		return append(out, extra...)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var fields []vigia.FieldError
	w := make(Weights, 5)
	for _, d := range AllDimensions() {
		w[d] = 0
	}
	sum := 0.0
	unknown := false
	for _, k := range keys {
		d := Dimension(k)
		v := raw[k]
		if !d.Valid() {
			unknown = true
			continue
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			fields = append(fields, vigia.FieldError{Type: "finite_number", Loc: at(k)})
			continue
		case v < 0:
			fields = append(fields, vigia.FieldError{Type: "greater_than_equal", Loc: at(k), Ctx: map[string]any{"ge": 0}})
			continue
		case v > 100:
			fields = append(fields, vigia.FieldError{Type: "less_than_equal", Loc: at(k), Ctx: map[string]any{"le": 100}})
			continue
		}
		w[d] = v
		sum += v
	}
	if unknown {
		// The unknown key is user text: say where, never what.
		fields = append(fields, vigia.FieldError{Type: "extra_forbidden", Loc: at()})
	}
	if len(fields) == 0 && math.Abs(sum-100) > weightSumTolerance {
		fields = append(fields, vigia.FieldError{Type: "weights_sum", Loc: at(), Ctx: map[string]any{"eq": 100}})
	}
	if len(fields) > 0 {
		return nil, vigia.Invalid(fields...)
	}
	return w, nil
}

// Equal reports whether w and o give every dimension the same weight; a missing
// dimension counts as 0 and a nil Weights as the default weights.
func (w Weights) Equal(o Weights) bool {
	a, b := w.orDefault(), o.orDefault()
	for _, d := range AllDimensions() {
		if math.Abs(a[d]-b[d]) > weightSumTolerance {
			return false
		}
	}
	return true
}

func (w Weights) orDefault() Weights {
	if w == nil {
		return DefaultWeights()
	}
	return w
}

// EffectiveWeights returns the weights a dataset's next score uses, given the
// dimension_weights of each domain it belongs to (nil entries are domains without
// weights and are skipped). A dataset in no weighted domain, or in several domains whose
// weights differ, keeps the default weights, as the contract says; the boolean is true
// when domain weights apply.
func EffectiveWeights(domainWeights []Weights) (Weights, bool) {
	var chosen Weights
	for _, w := range domainWeights {
		if w == nil {
			continue
		}
		if chosen == nil {
			chosen = w
			continue
		}
		if !chosen.Equal(w) {
			return DefaultWeights(), false
		}
	}
	if chosen == nil {
		return DefaultWeights(), false
	}
	out := make(Weights, 5)
	for _, d := range AllDimensions() {
		out[d] = chosen[d]
	}
	return out, true
}
