package distinct

import "math"

// A small dense linear program solver (two-phase simplex), enough for the few dozen
// constraints and few hundred variables of the interval's confidence set.

// The sense of a constraint row.
const (
	le = iota // a·x ≤ b
	ge        // a·x ≥ b
	eq        // a·x = b
)

type lpRow struct {
	a     []float64
	sense int
	b     float64
}

const lpEps = 1e-9

// lpMaxPivots bounds the work of one solve; with Bland's rule as the fallback the
// simplex never cycles, so it is only a guard against numerical trouble.
const lpMaxPivots = 20000

// tableau is a simplex tableau in canonical form: rows[i] holds the coefficients of the
// constraint whose basic variable is basis[i], and the right-hand side in its last cell.
type tableau struct {
	rows    [][]float64
	basis   []int
	nVars   int // structural variables
	nCols   int // every column but the right-hand side
	artFrom int // columns at and after artFrom are artificial
}

// newFeasible builds the tableau for rows over n non-negative variables and runs phase 1.
// It reports false when the constraints have no solution.
func newFeasible(n int, rows []lpRow) (*tableau, bool) {
	slacks, arts := 0, 0
	for _, r := range rows {
		s := r.sense
		if r.b < 0 {
			s = flip(s)
		}
		switch s {
		case le:
			slacks++
		case ge:
			slacks++
			arts++
		case eq:
			arts++
		}
	}
	t := &tableau{nVars: n, nCols: n + slacks + arts, artFrom: n + slacks}
	t.rows = make([][]float64, len(rows))
	t.basis = make([]int, len(rows))
	slack, art := n, n+slacks
	for i, r := range rows {
		row := make([]float64, t.nCols+1)
		sign, s := 1.0, r.sense
		if r.b < 0 {
			sign, s = -1, flip(s)
		}
		for j, v := range r.a {
			row[j] = sign * v
		}
		row[t.nCols] = sign * r.b
		switch s {
		case le:
			row[slack] = 1
			t.basis[i] = slack
			slack++
		case ge:
			row[slack] = -1
			slack++
			row[art] = 1
			t.basis[i] = art
			art++
		case eq:
			row[art] = 1
			t.basis[i] = art
			art++
		}
		t.rows[i] = row
	}
	if arts == 0 {
		return t, true
	}
	// Phase 1: maximize −Σ artificials.
	cost := make([]float64, t.nCols)
	for j := t.artFrom; j < t.nCols; j++ {
		cost[j] = -1
	}
	v, ok := t.optimize(cost, t.nCols)
	if !ok || v < -1e-7 {
		return nil, false
	}
	// Pivot artificials still basic at zero out of the basis where possible.
	for i, b := range t.basis {
		if b < t.artFrom {
			continue
		}
		for j := 0; j < t.artFrom; j++ {
			if math.Abs(t.rows[i][j]) > lpEps {
				t.pivot(i, j)
				break
			}
		}
	}
	return t, true
}

func flip(s int) int {
	switch s {
	case le:
		return ge
	case ge:
		return le
	}
	return s
}

func (t *tableau) clone() *tableau {
	c := *t
	c.rows = make([][]float64, len(t.rows))
	for i, r := range t.rows {
		c.rows[i] = append([]float64(nil), r...)
	}
	c.basis = append([]int(nil), t.basis...)
	return &c
}

func (t *tableau) pivot(r, c int) {
	pr := t.rows[r]
	inv := 1 / pr[c]
	for j := range pr {
		pr[j] *= inv
	}
	pr[c] = 1
	for i, row := range t.rows {
		if i == r {
			continue
		}
		f := row[c]
		if f == 0 {
			continue
		}
		for j, v := range pr {
			if v != 0 {
				row[j] -= f * v
			}
		}
		row[c] = 0
	}
	t.basis[r] = c
}

// optimize maximizes cost·x over the columns before limit (later columns never enter)
// and returns the optimum, or false when unbounded or out of pivots. It prices by the
// largest reduced cost (Dantzig) and falls back to Bland's rule, which cannot cycle, after
// a run of pivots that did not improve the objective.
func (t *tableau) optimize(cost []float64, limit int) (float64, bool) {
	rhs := t.nCols
	// rc[j] = cost[j] − Σ_i cost[basis[i]]·rows[i][j]; rc[rhs] = −objective.
	rc := make([]float64, t.nCols+1)
	copy(rc, cost)
	for i, b := range t.basis {
		if cb := cost[b]; cb != 0 {
			for j, v := range t.rows[i] {
				rc[j] -= cb * v
			}
		}
	}
	stalled := 0
	for range lpMaxPivots {
		enter := -1
		if stalled < 50 {
			best := lpEps
			for j := 0; j < limit; j++ {
				if rc[j] > best {
					enter, best = j, rc[j]
				}
			}
		} else {
			for j := 0; j < limit; j++ {
				if rc[j] > lpEps {
					enter = j
					break
				}
			}
		}
		if enter < 0 {
			return -rc[rhs], true
		}
		leave, best := -1, math.Inf(1)
		for i, row := range t.rows {
			if a := row[enter]; a > lpEps {
				ratio := row[rhs] / a
				if ratio < best-lpEps || (ratio < best+lpEps && leave >= 0 && t.basis[i] < t.basis[leave]) {
					leave, best = i, ratio
				}
			}
		}
		if leave < 0 {
			return 0, false
		}
		if best > lpEps {
			stalled = 0
		} else {
			stalled++
		}
		t.pivot(leave, enter)
		if f := rc[enter]; f != 0 {
			for j, v := range t.rows[leave] {
				if v != 0 {
					rc[j] -= f * v
				}
			}
			rc[enter] = 0
		}
	}
	return 0, false
}

// maximize returns the maximum of c·x over the feasible set of t (c over the structural
// variables), leaving t unchanged.
func (t *tableau) maximize(c []float64) (float64, bool) {
	w := t.clone()
	cost := make([]float64, w.nCols)
	copy(cost, c)
	return w.optimize(cost, w.artFrom)
}
