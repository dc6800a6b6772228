package quality

import (
	"math"
	"strings"
	"time"
)

// DefaultFreshnessSLA is the freshness SLA of a dataset that has none of its own.
const DefaultFreshnessSLA = 24 * time.Hour

// ColumnStats is what the profile of one column tells the score. Only counts and
// statistics: never a value of the column.
type ColumnStats struct {
	Name string
	// ProfiledRows is the number of rows NullCount was measured over (a sampled or
	// cost-guarded profile); 0 means ScoreInput.RowCount.
	ProfiledRows int64
	NullCount    int64
	// Distinct is the number of distinct non-null values; nil when not counted
	// (cost-guarded datasets do not count distinct values).
	Distinct *float64
	// DistinctCI95 is the 95% interval of Distinct when it is an estimate.
	DistinctCI95      *[2]float64
	DistinctEstimated bool
	PrimaryKey        bool // declared by the source
	Unique            bool // a unique constraint declared by the source
	// SemanticType is the detected semantic type (nif, iban, email, phone_pt, ...);
	// SemanticMatches values looked like it and SemanticValid of those passed its
	// check (check digits, numbering plan).
	SemanticType    string
	SemanticMatches int
	SemanticValid   int
}

// ScoreInput is everything one scan knows about a dataset's quality.
type ScoreInput struct {
	RowCount int64
	Columns  []ColumnStats
	// Now is the scan's time; LatestTimestamp the newest value of the dataset's
	// measuring timestamp column (nil without one).
	Now             time.Time
	LatestTimestamp *time.Time
	// FreshnessSLA is how old the newest row may be; 0 means DefaultFreshnessSLA.
	FreshnessSLA time.Duration
	// Rules are the results of the dataset's rules in this scan.
	Rules []RuleOutcome
	// Consistency are the dataset's schema_drift and anomaly issues (see
	// DeductConsistency); DecayScans is K (0 means DefaultDecayScans).
	Consistency []ConsistencyIssue
	DecayScans  int
	// Weights are the effective dimension weights in percent (see EffectiveWeights);
	// nil means DefaultWeights.
	Weights Weights
}

// Dimensions holds the five dimension scores, 0-100; nil when a dimension could not be
// computed (DimensionMeta.Reason says why).
type Dimensions struct {
	Completude   *float64 `json:"completude"`
	Unicidade    *float64 `json:"unicidade"`
	Validade     *float64 `json:"validade"`
	Atualidade   *float64 `json:"atualidade"`
	Consistencia *float64 `json:"consistencia"`
}

// Get returns the score of dimension d, nil when absent or d is unknown.
func (ds Dimensions) Get(d Dimension) *float64 {
	switch d {
	case Completude:
		return ds.Completude
	case Unicidade:
		return ds.Unicidade
	case Validade:
		return ds.Validade
	case Atualidade:
		return ds.Atualidade
	case Consistencia:
		return ds.Consistencia
	}
	return nil
}

func (ds *Dimensions) set(d Dimension, v *float64) {
	switch d {
	case Completude:
		ds.Completude = v
	case Unicidade:
		ds.Unicidade = v
	case Validade:
		ds.Validade = v
	case Atualidade:
		ds.Atualidade = v
	case Consistencia:
		ds.Consistencia = v
	}
}

// Reasons a dimension could not be computed (DimensionMeta.Reason).
const (
	ReasonNoColumns          = "no_columns"           // completude: the profile has no column
	ReasonEmptyTable         = "empty_table"          // no rows to measure
	ReasonNoKeyCandidates    = "no_key_candidates"    // unicidade: no key or unique-looking column and no unique rule
	ReasonDistinctNotCounted = "distinct_not_counted" // unicidade: key columns exist but distinct values were not counted
	ReasonNoChecks           = "no_checks"            // validade: no semantic type and no evaluated validity rule
	ReasonNoTimestamp        = "no_timestamp"         // atualidade: no measuring timestamp and no evaluated freshness rule
)

// DimensionMeta says how a dimension was computed (dimensions_meta in the contract).
type DimensionMeta struct {
	Checks      int  `json:"checks"`                 // measurements and evaluated rules averaged
	FailedRules int  `json:"failed_rules,omitempty"` // failed rules among them
	Estimated   bool `json:"estimated,omitempty"`    // part of it comes from an estimate
	// CI95 is the 95% interval of the dimension when it comes from an estimate
	// (dimensions_meta.unicidade.ci95).
	CI95     *[2]float64 `json:"ci95,omitempty"`
	Reason   string      `json:"reason,omitempty"` // why the dimension is null
	AgeHours *float64    `json:"age_hours,omitempty"`
	SLAHours *float64    `json:"sla_hours,omitempty"`
	// WorstColumn is, for completude, the column with the largest share of nulls (nil
	// when no column has one): the average over all cells hides a column that is mostly
	// empty.
	WorstColumn *ColumnCompletude `json:"worst_column,omitempty"`
}

// ColumnCompletude is one column's completude: 100 × (1 − nulls / rows measured).
type ColumnCompletude struct {
	Column     string  `json:"column"`
	Completude float64 `json:"completude"`
	NullCount  int64   `json:"null_count"`
	Rows       int64   `json:"rows"`
}

// Score is one scan's quality score of a dataset.
type Score struct {
	// Score is the overall score, 0-100: the weighted mean of the dimensions that could
	// be computed; nil when none with a positive weight could.
	Score       *float64                    `json:"score"`
	Dimensions  Dimensions                  `json:"dimensions"`
	Meta        map[Dimension]DimensionMeta `json:"dimensions_meta"`
	Weights     Weights                     `json:"weights"`
	Consistency Consistency                 `json:"consistency"`
}

// Rule weights inside a dimension: a critical rule counts twice a warning one, an info
// rule half.
const (
	ruleWeightCritical = 2.0
	ruleWeightWarning  = 1.0
	ruleWeightInfo     = 0.5
)

func ruleWeight(s Severity) float64 {
	switch s {
	case SeverityCritical:
		return ruleWeightCritical
	case SeverityInfo:
		return ruleWeightInfo
	}
	return ruleWeightWarning
}

// checks averages the checks of one dimension: each has a weight and a score in [0,1]
// with an interval [lo, hi] (equal to the score unless it comes from an estimate).
type checks struct {
	w, s, lo, hi float64
	n, failed    int
	estimated    bool
}

func (c *checks) add(w, s, lo, hi float64) {
	c.w += w
	c.s += w * s
	c.lo += w * lo
	c.hi += w * hi
	c.n++
}

func (c *checks) addRule(r RuleOutcome) {
	w := ruleWeight(r.Severity)
	if r.Status == RuleFailed {
		c.failed++
		c.add(w, 0, 0, 0)
		return
	}
	c.add(w, 1, 1, 1)
}

// ComputeScore scores one scan of a dataset. Every dimension is a weighted mean of
// checks, each scored 0-1 and multiplied by 100:
//
//   - completude: one check, 1 − nulls/cells over all profiled columns; plus
//     row_count_min rules.
//   - unicidade: per key column (the single-column primary key, a declared unique
//     column, or, in a table without a declared key, a column named id, uuid or guid)
//     min(1, distinct/non-null rows), with its ci95 when distinct is estimated; plus
//     unique rules.
//   - validade: per column with a semantic type, valid/matching values; plus validity
//     rules (not_null, accepted_values, pattern, range, referential, custom_sql, ...).
//   - atualidade: one check from the age of LatestTimestamp: 1 within the SLA, falling
//     linearly to 0 at twice the SLA; plus freshness rules.
//   - consistencia: DeductConsistency.
//
// A rule check scores 1 when passed and 0 when failed, with weight 2 (critical),
// 1 (warning) or 0.5 (info); a measured check weighs 1. not_evaluated rules never count.
// A dimension without any check is nil, with the reason in Meta, and the overall
// score is the weighted mean over the dimensions that are not nil (their weights
// renormalised). Scores are rounded to two decimals; the overall score is computed from
// the rounded dimensions so that readers can redo the sum.
//
// It returns a KindInvalid error when Weights name an unknown dimension or do not sum
// to 100.
func ComputeScore(in ScoreInput) (Score, error) {
	weights := DefaultWeights()
	if in.Weights != nil {
		raw := make(map[string]float64, len(in.Weights))
		for d, v := range in.Weights {
			raw[string(d)] = v
		}
		w, err := ValidateWeights(raw, "weights")
		if err != nil {
			return Score{}, err
		}
		weights = w
	}

	acc := map[Dimension]*checks{Completude: {}, Unicidade: {}, Validade: {}, Atualidade: {}}
	meta := make(map[Dimension]DimensionMeta, 5)
	reasons := map[Dimension]string{}

	// completude
	var cells, nulls float64
	var worst *ColumnCompletude
	worstShare := 0.0
	for _, c := range in.Columns {
		rows := columnRows(c, in.RowCount)
		if rows <= 0 {
			continue
		}
		n := clamp64(c.NullCount, 0, rows)
		cells += float64(rows)
		nulls += float64(n)
		if share := float64(n) / float64(rows); n > 0 && share > worstShare {
			worstShare = share
			worst = &ColumnCompletude{Column: c.Name, Completude: round2(100 * (1 - share)), NullCount: n, Rows: rows}
		}
	}
	switch {
	case cells > 0:
		v := 1 - nulls/cells
		acc[Completude].add(1, v, v, v)
	case len(in.Columns) == 0:
		reasons[Completude] = ReasonNoColumns
	default:
		reasons[Completude] = ReasonEmptyTable
	}

	// unicidade
	pkCols := 0
	for _, c := range in.Columns {
		if c.PrimaryKey {
			pkCols++
		}
	}
	candidates, counted := 0, 0
	for _, c := range in.Columns {
		// A column of a composite key is not unique on its own: it is not a candidate.
		key := (c.PrimaryKey && pkCols == 1) || c.Unique || (pkCols == 0 && looksLikeID(c.Name))
		if !key {
			continue
		}
		candidates++
		if c.Distinct == nil {
			continue
		}
		counted++
		nonNull := float64(columnRows(c, in.RowCount) - clamp64(c.NullCount, 0, columnRows(c, in.RowCount)))
		if nonNull <= 0 {
			continue
		}
		ratio := clampF(*c.Distinct/nonNull, 0, 1)
		lo, hi := ratio, ratio
		if c.DistinctCI95 != nil {
			lo = math.Min(clampF(c.DistinctCI95[0]/nonNull, 0, 1), ratio)
			hi = math.Max(clampF(c.DistinctCI95[1]/nonNull, 0, 1), ratio)
		}
		if c.DistinctEstimated || c.DistinctCI95 != nil {
			acc[Unicidade].estimated = true
		}
		acc[Unicidade].add(1, ratio, lo, hi)
	}
	switch {
	case in.RowCount <= 0 && candidates > 0:
		reasons[Unicidade] = ReasonEmptyTable
	case candidates == 0:
		reasons[Unicidade] = ReasonNoKeyCandidates
	case counted == 0:
		reasons[Unicidade] = ReasonDistinctNotCounted
	default:
		reasons[Unicidade] = ReasonEmptyTable
	}

	// validade
	for _, c := range in.Columns {
		if c.SemanticMatches <= 0 {
			continue
		}
		v := float64(min(max(c.SemanticValid, 0), c.SemanticMatches)) / float64(c.SemanticMatches)
		acc[Validade].add(1, v, v, v)
	}
	reasons[Validade] = ReasonNoChecks

	// atualidade
	sla := in.FreshnessSLA
	if sla <= 0 {
		sla = DefaultFreshnessSLA
	}
	var ageHours *float64
	if in.LatestTimestamp != nil && !in.Now.IsZero() {
		v := FreshnessScore(in.Now.Sub(*in.LatestTimestamp), sla)
		acc[Atualidade].add(1, v, v, v)
		h := round2(math.Max(0, in.Now.Sub(*in.LatestTimestamp).Hours()))
		ageHours = &h
	}
	reasons[Atualidade] = ReasonNoTimestamp

	for _, r := range in.Rules {
		if r.Status != RulePassed && r.Status != RuleFailed {
			continue
		}
		if c, ok := acc[r.dimension()]; ok {
			c.addRule(r)
		}
	}

	var dims Dimensions
	for _, d := range []Dimension{Completude, Unicidade, Validade, Atualidade} {
		c := acc[d]
		m := DimensionMeta{Checks: c.n, FailedRules: c.failed, Estimated: c.estimated}
		if c.w > 0 {
			v := round2(100 * c.s / c.w)
			dims.set(d, &v)
			if c.estimated {
				m.CI95 = &[2]float64{round2(100 * c.lo / c.w), round2(100 * c.hi / c.w)}
			}
		} else {
			m.Reason = reasons[d]
		}
		if d == Atualidade {
			slaH := round2(sla.Hours())
			m.AgeHours, m.SLAHours = ageHours, &slaH
		}
		if d == Completude && m.Reason == "" {
			m.WorstColumn = worst
		}
		meta[d] = m
	}

	cons := DeductConsistency(in.Consistency, in.DecayScans)
	cv := round2(cons.Score)
	dims.Consistencia = &cv
	deducting := 0
	for _, is := range cons.Issues {
		if is.PointsAfter > 0 {
			deducting++
		}
	}
	meta[Consistencia] = DimensionMeta{Checks: deducting}

	var sumW, sum float64
	for _, d := range AllDimensions() {
		v := dims.Get(d)
		if v == nil || weights[d] <= 0 {
			continue
		}
		sumW += weights[d]
		sum += weights[d] * *v
	}
	out := Score{Dimensions: dims, Meta: meta, Weights: weights, Consistency: cons}
	if sumW > 0 {
		s := round2(sum / sumW)
		out.Score = &s
	}
	return out, nil
}

// FreshnessScore maps the age of a dataset's newest row to [0,1]: 1 up to the SLA,
// then linearly down to 0 at twice the SLA. A negative age (a timestamp in the future,
// from clock skew or a zone mistake) counts as fresh. sla ≤ 0 means DefaultFreshnessSLA.
func FreshnessScore(age, sla time.Duration) float64 {
	if sla <= 0 {
		sla = DefaultFreshnessSLA
	}
	if age <= sla {
		return 1
	}
	return clampF(2-float64(age)/float64(sla), 0, 1)
}

// looksLikeID reports whether a column name is a conventional surrogate key name.
func looksLikeID(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "id", "uuid", "guid":
		return true
	}
	return false
}

func columnRows(c ColumnStats, rowCount int64) int64 {
	if c.ProfiledRows > 0 {
		return c.ProfiledRows
	}
	return max(rowCount, 0)
}

func clamp64(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

func clampF(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Min(math.Max(v, lo), hi)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
