package quality_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
)

var scanTime = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

func fp(v float64) *float64 { return &v }

func dimOf(t *testing.T, s quality.Score, d quality.Dimension) *float64 {
	t.Helper()
	return s.Dimensions.Get(d)
}

func mustScore(t *testing.T, in quality.ScoreInput) quality.Score {
	t.Helper()
	s, err := quality.ComputeScore(in)
	if err != nil {
		t.Fatalf("ComputeScore: %v", err)
	}
	return s
}

func TestComputeScoreDimensions(t *testing.T) {
	latest := func(ago time.Duration) *time.Time { v := scanTime.Add(-ago); return &v }
	tests := []struct {
		name string
		in   quality.ScoreInput
		dim  quality.Dimension
		want *float64
		// wantReason is the meta reason when want is nil.
		wantReason string
	}{
		{
			name: "CompletudeIsNonNullCellShare",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "a", NullCount: 0}, {Name: "b", NullCount: 10}, {Name: "c", NullCount: 30}, {Name: "d", NullCount: 0},
			}},
			dim: quality.Completude, want: fp(90),
		},
		{
			name: "CompletudeUsesProfiledRowsOfSampledColumns",
			in: quality.ScoreInput{RowCount: 1_000_000, Columns: []quality.ColumnStats{
				{Name: "a", ProfiledRows: 1000, NullCount: 100}, {Name: "b", ProfiledRows: 1000, NullCount: 0},
			}},
			dim: quality.Completude, want: fp(95),
		},
		{
			name: "CompletudeClampsNullsAboveRows",
			in:   quality.ScoreInput{RowCount: 10, Columns: []quality.ColumnStats{{Name: "a", NullCount: 50}}},
			dim:  quality.Completude, want: fp(0),
		},
		{
			name:       "CompletudeNullOnEmptyTable",
			in:         quality.ScoreInput{RowCount: 0, Columns: []quality.ColumnStats{{Name: "a"}}},
			dim:        quality.Completude,
			wantReason: quality.ReasonEmptyTable,
		},
		{
			name:       "CompletudeNullWithoutColumns",
			in:         quality.ScoreInput{RowCount: 10},
			dim:        quality.Completude,
			wantReason: quality.ReasonNoColumns,
		},
		{
			name: "CompletudeCountsFailedRowCountMin",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{{Name: "a"}},
				Rules: []quality.RuleOutcome{{RuleID: "r", RuleType: "row_count_min", Severity: quality.SeverityWarning, Status: quality.RuleFailed}}},
			dim: quality.Completude, want: fp(50),
		},
		{
			name: "UnicidadeFromPrimaryKeyDistinct",
			in: quality.ScoreInput{RowCount: 1000, Columns: []quality.ColumnStats{
				{Name: "id", PrimaryKey: true, Distinct: fp(990)}, {Name: "city", Distinct: fp(3)},
			}},
			dim: quality.Unicidade, want: fp(99),
		},
		{
			name: "UnicidadeIgnoresCompositeKeyColumns",
			in: quality.ScoreInput{RowCount: 1000, Columns: []quality.ColumnStats{
				{Name: "order_id", PrimaryKey: true, Distinct: fp(200)}, {Name: "line", PrimaryKey: true, Distinct: fp(5)},
			}},
			dim: quality.Unicidade, wantReason: quality.ReasonNoKeyCandidates,
		},
		{
			name: "UnicidadeFromIDLikeColumnWithoutDeclaredKey",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "ID", Distinct: fp(80)}, {Name: "customer_id", Distinct: fp(10)},
			}},
			dim: quality.Unicidade, want: fp(80),
		},
		{
			name: "UnicidadeUsesNonNullRowsOfUniqueColumn",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "email", Unique: true, NullCount: 50, Distinct: fp(50)},
			}},
			dim: quality.Unicidade, want: fp(100),
		},
		{
			name: "UnicidadeCapsEstimateAboveRows",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "id", PrimaryKey: true, Distinct: fp(103), DistinctEstimated: true},
			}},
			dim: quality.Unicidade, want: fp(100),
		},
		{
			name: "UnicidadeAveragesKeyAndFailedCriticalUniqueRule",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{{Name: "id", PrimaryKey: true, Distinct: fp(100)}},
				Rules: []quality.RuleOutcome{{RuleID: "u", RuleType: "unique", Severity: quality.SeverityCritical, Status: quality.RuleFailed}}},
			dim: quality.Unicidade, want: fp(33.33),
		},
		{
			name: "UnicidadeNullWhenDistinctNotCounted",
			in:   quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{{Name: "id", PrimaryKey: true}}},
			dim:  quality.Unicidade, wantReason: quality.ReasonDistinctNotCounted,
		},
		{
			name: "UnicidadeFromRulesOnly",
			in: quality.ScoreInput{RowCount: 100, Rules: []quality.RuleOutcome{
				{RuleID: "u1", RuleType: "unique", Severity: quality.SeverityWarning, Status: quality.RulePassed},
				{RuleID: "u2", RuleType: "unique", Severity: quality.SeverityWarning, Status: quality.RuleFailed},
			}},
			dim: quality.Unicidade, want: fp(50),
		},
		{
			name: "ValidadeFromSemanticChecks",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "nif", SemanticType: "nif", SemanticMatches: 100, SemanticValid: 96},
				{Name: "iban", SemanticType: "iban", SemanticMatches: 50, SemanticValid: 50},
			}},
			dim: quality.Validade, want: fp(98),
		},
		{
			name: "ValidadeWeighsCriticalRuleTwice",
			in: quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{
				{Name: "nif", SemanticType: "nif", SemanticMatches: 10, SemanticValid: 10},
			}, Rules: []quality.RuleOutcome{
				{RuleID: "p", RuleType: "pattern", Severity: quality.SeverityCritical, Status: quality.RuleFailed},
				{RuleID: "n", RuleType: "not_null", Severity: quality.SeverityWarning, Status: quality.RulePassed},
			}},
			dim: quality.Validade, want: fp(50),
		},
		{
			name: "NotEvaluatedRulesNeverCount",
			in: quality.ScoreInput{RowCount: 100, Rules: []quality.RuleOutcome{
				{RuleID: "ref", RuleType: "referential", Severity: quality.SeverityCritical, Status: quality.RuleNotEvaluated},
			}},
			dim: quality.Validade, wantReason: quality.ReasonNoChecks,
		},
		{
			name: "ValidadeNullWithoutChecks",
			in:   quality.ScoreInput{RowCount: 100, Columns: []quality.ColumnStats{{Name: "a"}}},
			dim:  quality.Validade, wantReason: quality.ReasonNoChecks,
		},
		{
			name: "AtualidadeFullWithinSLA",
			in:   quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(23 * time.Hour)},
			dim:  quality.Atualidade, want: fp(100),
		},
		{
			name: "AtualidadeHalfWayToDoubleSLA",
			in:   quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(36 * time.Hour)},
			dim:  quality.Atualidade, want: fp(50),
		},
		{
			name: "AtualidadeZeroAtDoubleSLA",
			in:   quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(72 * time.Hour)},
			dim:  quality.Atualidade, want: fp(0),
		},
		{
			name: "AtualidadeUsesOwnSLA",
			in:   quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(90 * time.Minute), FreshnessSLA: time.Hour},
			dim:  quality.Atualidade, want: fp(50),
		},
		{
			name: "AtualidadeFutureTimestampIsFresh",
			in:   quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(-2 * time.Hour)},
			dim:  quality.Atualidade, want: fp(100),
		},
		{
			name: "AtualidadeCountsFreshnessRule",
			in: quality.ScoreInput{Now: scanTime, LatestTimestamp: latest(time.Hour), Rules: []quality.RuleOutcome{
				{RuleID: "f", RuleType: "freshness", Severity: quality.SeverityWarning, Status: quality.RuleFailed}}},
			dim: quality.Atualidade, want: fp(50),
		},
		{
			name: "AtualidadeNullWithoutTimestamp",
			in:   quality.ScoreInput{Now: scanTime, RowCount: 5},
			dim:  quality.Atualidade, wantReason: quality.ReasonNoTimestamp,
		},
		{
			name: "ConsistenciaDeductsOpenIssues",
			in: quality.ScoreInput{Consistency: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, Age: 2, PrevAge: vigia.Ptr(1)},
			}},
			dim: quality.Consistencia, want: fp(91),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustScore(t, tt.in)
			got := dimOf(t, s, tt.dim)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("%s (-want +got):\n%s", tt.dim, diff)
			}
			if tt.want == nil && s.Meta[tt.dim].Reason != tt.wantReason {
				t.Fatalf("reason = %q, want %q", s.Meta[tt.dim].Reason, tt.wantReason)
			}
		})
	}
}

func TestComputeScoreCarriesUnicidadeCI95FromEstimate(t *testing.T) {
	s := mustScore(t, quality.ScoreInput{RowCount: 1000, Columns: []quality.ColumnStats{
		{Name: "id", PrimaryKey: true, Distinct: fp(980), DistinctCI95: &[2]float64{960, 1010}, DistinctEstimated: true},
	}})
	m := s.Meta[quality.Unicidade]
	if !m.Estimated || m.CI95 == nil {
		t.Fatalf("meta = %+v, want estimated with ci95", m)
	}
	if *m.CI95 != [2]float64{96, 100} {
		t.Fatalf("ci95 = %v, want [96 100]", *m.CI95)
	}
	if got := *s.Dimensions.Unicidade; got != 98 {
		t.Fatalf("unicidade = %v, want 98", got)
	}
}

func TestComputeScoreLeavesCI95OutForExactCounts(t *testing.T) {
	s := mustScore(t, quality.ScoreInput{RowCount: 10, Columns: []quality.ColumnStats{{Name: "id", PrimaryKey: true, Distinct: fp(10)}}})
	if m := s.Meta[quality.Unicidade]; m.Estimated || m.CI95 != nil {
		t.Fatalf("meta = %+v, want exact", m)
	}
}

func TestComputeScoreOverall(t *testing.T) {
	// completude 90, unicidade 100, validade 80, atualidade null, consistencia 85.
	base := quality.ScoreInput{
		RowCount: 100, Now: scanTime,
		Columns: []quality.ColumnStats{
			{Name: "id", PrimaryKey: true, Distinct: fp(100), NullCount: 0},
			{Name: "nif", NullCount: 20, SemanticType: "nif", SemanticMatches: 80, SemanticValid: 64},
		},
		Consistency: []quality.ConsistencyIssue{{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, DetectedNow: true}},
	}
	withWeights := func(w quality.Weights) quality.ScoreInput { in := base; in.Weights = w; return in }
	tests := []struct {
		name string
		in   quality.ScoreInput
		want *float64
	}{
		{"EqualWeightsOverComputedDimensions", base, fp(88.75)},
		{"Weights60_40_0_0_0", withWeights(quality.Weights{quality.Completude: 60, quality.Unicidade: 40}), fp(94)},
		{"WeightOnlyOnNullDimensionGivesNull", withWeights(quality.Weights{quality.Atualidade: 100}), nil},
		{"WeightsRenormaliseWithoutNullDimension", withWeights(quality.Weights{quality.Atualidade: 50, quality.Validade: 50}), fp(80)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustScore(t, tt.in)
			if diff := cmp.Diff(tt.want, s.Score); diff != "" {
				t.Fatalf("score (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeScoreRejectsInvalidWeights(t *testing.T) {
	tests := []struct {
		name string
		w    quality.Weights
	}{
		{"UnknownDimension", quality.Weights{"frescura": 100}},
		{"SumNot100", quality.Weights{quality.Completude: 60, quality.Unicidade: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := quality.ComputeScore(quality.ScoreInput{Weights: tt.w})
			if !vigia.IsKind(err, vigia.KindInvalid) {
				t.Fatalf("err = %v, want KindInvalid", err)
			}
		})
	}
}

func TestComputeScoreRecordsWeightsAndModel(t *testing.T) {
	s := mustScore(t, quality.ScoreInput{Weights: quality.Weights{quality.Completude: 60, quality.Unicidade: 40}, DecayScans: 7})
	want := quality.Weights{quality.Completude: 60, quality.Unicidade: 40, quality.Validade: 0, quality.Atualidade: 0, quality.Consistencia: 0}
	if diff := cmp.Diff(want, s.Weights); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	if s.Consistency.Model != "decay_v1_k7" {
		t.Errorf("model = %q", s.Consistency.Model)
	}
}

func TestScoreJSONCarriesContractNames(t *testing.T) {
	s := mustScore(t, quality.ScoreInput{RowCount: 1000, Columns: []quality.ColumnStats{
		{Name: "id", PrimaryKey: true, Distinct: fp(990), DistinctCI95: &[2]float64{970, 1000}, DistinctEstimated: true},
	}})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Score      *float64                  `json:"score"`
		Dimensions map[string]*float64       `json:"dimensions"`
		Meta       map[string]map[string]any `json:"dimensions_meta"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta["unicidade"]["ci95"] == nil {
		t.Errorf("dimensions_meta.unicidade.ci95 missing in %s", b)
	}
	for _, d := range []string{"completude", "unicidade", "validade", "atualidade", "consistencia"} {
		if _, ok := got.Dimensions[d]; !ok {
			t.Errorf("dimensions.%s missing in %s", d, b)
		}
	}
	if got.Dimensions["atualidade"] != nil {
		t.Errorf("atualidade = %v, want null", *got.Dimensions["atualidade"])
	}
}

// completude averages every cell; its meta names the column with the largest share of
// nulls, which the average hides.
func TestCompletudeNamesItsWorstColumn(t *testing.T) {
	cols := []quality.ColumnStats{{Name: "id"}, {Name: "email", NullCount: 200}, {Name: "nome", NullCount: 10}, {Name: "pais", NullCount: 200}}
	sc := mustScore(t, quality.ScoreInput{RowCount: 1000, Columns: cols})
	w := sc.Meta[quality.Completude].WorstColumn
	if *sc.Dimensions.Completude != 89.75 || w == nil || *w != (quality.ColumnCompletude{Column: "email", Completude: 80, NullCount: 200, Rows: 1000}) {
		t.Fatalf("completude %v, worst %+v", *sc.Dimensions.Completude, w)
	}
	clean := mustScore(t, quality.ScoreInput{RowCount: 1000, Columns: []quality.ColumnStats{{Name: "id"}}})
	if clean.Meta[quality.Completude].WorstColumn != nil {
		t.Fatalf("a table without nulls has no worst column: %+v", clean.Meta[quality.Completude])
	}
}
