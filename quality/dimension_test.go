package quality_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
)

func TestValidateWeights(t *testing.T) {
	tests := []struct {
		name       string
		raw        map[string]float64
		want       quality.Weights
		wantFields []vigia.FieldError
	}{
		{
			name: "OmittedDimensionWeighsZero",
			raw:  map[string]float64{"completude": 60, "unicidade": 40},
			want: quality.Weights{"completude": 60, "unicidade": 40, "validade": 0, "atualidade": 0, "consistencia": 0},
		},
		{
			name: "ThirdsWithinTolerance",
			raw:  map[string]float64{"completude": 33.33, "unicidade": 33.33, "validade": 33.34},
			want: quality.Weights{"completude": 33.33, "unicidade": 33.33, "validade": 33.34, "atualidade": 0, "consistencia": 0},
		},
		{
			name:       "UnknownDimensionNotEchoed",
			raw:        map[string]float64{"completude": 50, "frescura": 50},
			wantFields: []vigia.FieldError{{Type: "extra_forbidden", Loc: []string{"sla", "dimension_weights"}}},
		},
		{
			name:       "SumBelow100",
			raw:        map[string]float64{"completude": 60, "unicidade": 30},
			wantFields: []vigia.FieldError{{Type: "weights_sum", Loc: []string{"sla", "dimension_weights"}, Ctx: map[string]any{"eq": 100}}},
		},
		{
			name:       "EmptyDoesNotSumTo100",
			raw:        map[string]float64{},
			wantFields: []vigia.FieldError{{Type: "weights_sum", Loc: []string{"sla", "dimension_weights"}, Ctx: map[string]any{"eq": 100}}},
		},
		{
			name: "NegativeAndAbove100",
			raw:  map[string]float64{"completude": -10, "unicidade": 110},
			wantFields: []vigia.FieldError{
				{Type: "greater_than_equal", Loc: []string{"sla", "dimension_weights", "completude"}, Ctx: map[string]any{"ge": 0}},
				{Type: "less_than_equal", Loc: []string{"sla", "dimension_weights", "unicidade"}, Ctx: map[string]any{"le": 100}},
			},
		},
		{
			name:       "NaNRejected",
			raw:        map[string]float64{"completude": math.NaN(), "unicidade": 100},
			wantFields: []vigia.FieldError{{Type: "finite_number", Loc: []string{"sla", "dimension_weights", "completude"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quality.ValidateWeights(tt.raw, "sla")
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("weights (-want +got):\n%s", diff)
				}
				return
			}
			e := vigia.AsError(err)
			if e.Kind != vigia.KindInvalid {
				t.Fatalf("err = %v, want KindInvalid", err)
			}
			if diff := cmp.Diff(tt.wantFields, e.Fields); diff != "" {
				t.Fatalf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEffectiveWeights(t *testing.T) {
	sixty := quality.Weights{"completude": 60, "unicidade": 40, "validade": 0, "atualidade": 0, "consistencia": 0}
	other := quality.Weights{"completude": 50, "unicidade": 50, "validade": 0, "atualidade": 0, "consistencia": 0}
	tests := []struct {
		name       string
		in         []quality.Weights
		want       quality.Weights
		wantDomain bool
	}{
		{"NoDomainKeepsDefault", nil, quality.DefaultWeights(), false},
		{"OneDomainApplies", []quality.Weights{sixty}, sixty, true},
		{"DomainWithoutWeightsHasNoSay", []quality.Weights{nil, sixty}, sixty, true},
		{"SameWeightsTwiceApply", []quality.Weights{sixty, sixty}, sixty, true},
		{"DifferentWeightsKeepDefault", []quality.Weights{sixty, other}, quality.DefaultWeights(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := quality.EffectiveWeights(tt.in)
			if ok != tt.wantDomain {
				t.Errorf("domain weights = %v, want %v", ok, tt.wantDomain)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDimensionForRuleType(t *testing.T) {
	tests := map[string]quality.Dimension{
		"unique": quality.Unicidade, "freshness": quality.Atualidade, "row_count_min": quality.Completude,
		"not_null": quality.Validade, "accepted_values": quality.Validade, "pattern": quality.Validade,
		"range": quality.Validade, "referential": quality.Validade, "custom_sql": quality.Validade,
		"something_new": quality.Validade,
	}
	for rt, want := range tests {
		t.Run(rt, func(t *testing.T) {
			if got := quality.DimensionForRuleType(rt); got != want {
				t.Fatalf("DimensionForRuleType(%q) = %q, want %q", rt, got, want)
			}
		})
	}
}
