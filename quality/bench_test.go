package quality_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia/quality"
)

func BenchmarkComputeScoreWideTable(b *testing.B) {
	in := quality.ScoreInput{RowCount: 10_000_000, Now: scanTime, LatestTimestamp: &scanTime}
	for i := range 500 {
		in.Columns = append(in.Columns, quality.ColumnStats{Name: fmt.Sprintf("c%d", i), NullCount: int64(i),
			Distinct: fp(float64(i * 10)), PrimaryKey: i == 0, SemanticMatches: 100, SemanticValid: 99})
	}
	for i := range 200 {
		in.Rules = append(in.Rules, quality.RuleOutcome{RuleID: fmt.Sprint(i), RuleType: "pattern", Severity: "warning", Status: quality.RulePassed})
	}
	for i := range 50 {
		in.Consistency = append(in.Consistency, quality.ConsistencyIssue{ID: fmt.Sprint(i), Type: "anomaly", Severity: "warning", Status: "open", Age: i % 6})
	}
	for b.Loop() {
		if _, err := quality.ComputeScore(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiffColumnsWithRenames(b *testing.B) {
	var prev, curr []quality.ColumnShape
	for i := range 500 {
		prev = append(prev, quality.ColumnShape{Name: fmt.Sprintf("column_%d", i), Type: "varchar(100)", Position: i + 1})
		curr = append(curr, quality.ColumnShape{Name: fmt.Sprintf("col_%d_renamed", i), Type: "varchar(100)", Position: i + 1})
	}
	for b.Loop() {
		quality.DiffColumns(prev, curr)
	}
}

func BenchmarkDetectAnomaly(b *testing.B) {
	hist := make([]float64, 30)
	for i := range hist {
		hist[i] = 1000 + float64(i%7)
	}
	in := quality.AnomalyInput{Metric: quality.MetricVolume, History: hist, Value: 100}
	for b.Loop() {
		quality.DetectAnomaly(in)
	}
}
