package quality_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia/quality"
)

func TestIssuePointsDecaysLinearlyOverK(t *testing.T) {
	tests := []struct {
		name       string
		sev        quality.Severity
		status     quality.IssueStatus
		structural bool
		age, k     int
		want       float64
	}{
		{"WarningAge0Is15", quality.SeverityWarning, quality.IssueOpen, false, 0, 0, 15},
		{"WarningAge1Is12", quality.SeverityWarning, quality.IssueOpen, false, 1, 0, 12},
		{"WarningAge2Is9", quality.SeverityWarning, quality.IssueOpen, false, 2, 0, 9},
		{"WarningAge4Is3", quality.SeverityWarning, quality.IssueOpen, false, 4, 0, 3},
		{"WarningAge5Is0", quality.SeverityWarning, quality.IssueOpen, false, 5, 0, 0},
		{"WarningAge9Is0", quality.SeverityWarning, quality.IssueOpen, false, 9, 0, 0},
		{"CriticalAge0Is30", quality.SeverityCritical, quality.IssueOpen, false, 0, 0, 30},
		{"CriticalAge1Is24", quality.SeverityCritical, quality.IssueOpen, false, 1, 0, 24},
		{"CriticalAge3Is12", quality.SeverityCritical, quality.IssueAcknowledged, false, 3, 5, 12},
		{"AcknowledgedStillDeducts", quality.SeverityWarning, quality.IssueAcknowledged, false, 0, 0, 15},
		{"ResolvedDeductsNothing", quality.SeverityCritical, quality.IssueResolved, false, 0, 0, 0},
		{"IgnoredDeductsNothing", quality.SeverityCritical, quality.IssueIgnored, false, 0, 0, 0},
		{"StructuralCountsInDetectingScan", quality.SeverityCritical, quality.IssueOpen, true, 0, 0, 30},
		{"StructuralGoneOneScanLater", quality.SeverityCritical, quality.IssueOpen, true, 1, 0, 0},
		{"InfoDeductsNothing", quality.SeverityInfo, quality.IssueOpen, false, 0, 0, 0},
		{"NoSeverityCountsAsWarning", "", quality.IssueOpen, false, 0, 0, 15},
		{"KTenHalvesAtFive", quality.SeverityWarning, quality.IssueOpen, false, 5, 10, 7.5},
		{"NegativeAgeDeductsNothing", quality.SeverityWarning, quality.IssueOpen, false, -1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.IssuePoints(tt.sev, tt.status, tt.structural, tt.age, tt.k)
			if got != tt.want {
				t.Fatalf("IssuePoints = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeductConsistencyReportsEachIssueChange(t *testing.T) {
	ip := func(v int) *int { return &v }
	tests := []struct {
		name      string
		issues    []quality.ConsistencyIssue
		wantScore float64
		want      []quality.IssueDeduction
	}{
		{
			name:      "NoIssuesIs100",
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "NewWarningOpened",
			issues: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, DetectedNow: true},
			},
			wantScore: 85,
			want: []quality.IssueDeduction{
				{IssueID: "a", Severity: "warning", Change: "opened", AgeAfter: 0, PointsAfter: 15, DecayScans: 5},
			},
		},
		{
			name: "WarningDecaysFromAge1To2",
			issues: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, Age: 2, PrevAge: ip(1)},
			},
			wantScore: 91,
			want: []quality.IssueDeduction{
				{IssueID: "a", Severity: "warning", Change: "decaying", AgeBefore: ip(1), AgeAfter: 2, PointsBefore: 12, PointsAfter: 9, DecayScans: 5},
			},
		},
		{
			name: "WarningGoneAtAge5",
			issues: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, Age: 5, PrevAge: ip(4)},
			},
			wantScore: 100,
			want: []quality.IssueDeduction{
				{IssueID: "a", Severity: "warning", Change: "gone", AgeBefore: ip(4), AgeAfter: 5, PointsBefore: 3, PointsAfter: 0, DecayScans: 5},
			},
		},
		{
			name: "FullyDecayedIssueLeftOut",
			issues: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, Age: 7, PrevAge: ip(6)},
			},
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "CriticalDetectedAgainResetsAge",
			issues: []quality.ConsistencyIssue{
				{ID: "c", Type: "anomaly", Severity: quality.SeverityCritical, Status: quality.IssueOpen, DetectedNow: true, Age: 3, PrevAge: ip(2)},
			},
			wantScore: 70,
			want: []quality.IssueDeduction{
				{IssueID: "c", Severity: "critical", Change: "detected_again", AgeBefore: ip(2), AgeAfter: 0, PointsBefore: 18, PointsAfter: 30, DecayScans: 5},
			},
		},
		{
			name: "CriticalAtAge1Is24",
			issues: []quality.ConsistencyIssue{
				{ID: "c", Type: "schema_drift", Severity: quality.SeverityCritical, Status: quality.IssueAcknowledged, Age: 1, PrevAge: ip(0)},
			},
			wantScore: 76,
			want: []quality.IssueDeduction{
				{IssueID: "c", Severity: "critical", Change: "decaying", AgeBefore: ip(0), AgeAfter: 1, PointsBefore: 30, PointsAfter: 24, DecayScans: 5},
			},
		},
		{
			name: "StructuralDriftCountsInDetectingScan",
			issues: []quality.ConsistencyIssue{
				{ID: "s", Type: "schema_drift", Severity: quality.SeverityCritical, Status: quality.IssueOpen, Structural: true, DetectedNow: true},
			},
			wantScore: 70,
			want: []quality.IssueDeduction{
				{IssueID: "s", Severity: "critical", Structural: true, Change: "opened", PointsAfter: 30, DecayScans: 5},
			},
		},
		{
			name: "StructuralDriftGoneAtNextScan",
			issues: []quality.ConsistencyIssue{
				{ID: "s", Type: "schema_drift", Severity: quality.SeverityCritical, Status: quality.IssueOpen, Structural: true, Age: 1, PrevAge: ip(0)},
			},
			wantScore: 100,
			want: []quality.IssueDeduction{
				{IssueID: "s", Severity: "critical", Structural: true, Change: "gone", AgeBefore: ip(0), AgeAfter: 1, PointsBefore: 30, DecayScans: 5},
			},
		},
		{
			name: "StructuralDriftTwoScansLaterLeftOut",
			issues: []quality.ConsistencyIssue{
				{ID: "s", Type: "schema_drift", Severity: quality.SeverityCritical, Status: quality.IssueOpen, Structural: true, Age: 2, PrevAge: ip(1)},
			},
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "ResolvedIssueStopsAtNextScan",
			issues: []quality.ConsistencyIssue{
				{ID: "r", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueResolved, Age: 1, PrevAge: ip(0), PrevStatus: quality.IssueOpen},
			},
			wantScore: 100,
			want: []quality.IssueDeduction{
				{IssueID: "r", Severity: "warning", Change: "gone", AgeBefore: ip(0), AgeAfter: 1, PointsBefore: 15, DecayScans: 5},
			},
		},
		{
			name: "IssueResolvedBeforePreviousScanLeftOut",
			issues: []quality.ConsistencyIssue{
				{ID: "r", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueResolved, Age: 2, PrevAge: ip(1), PrevStatus: quality.IssueResolved},
			},
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "IgnoredIssueDetectedAgainDeductsNothing",
			issues: []quality.ConsistencyIssue{
				{ID: "i", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueIgnored, DetectedNow: true, Age: 0, PrevAge: ip(1), PrevStatus: quality.IssueIgnored},
			},
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "SeverityRaisedSincePreviousScan",
			issues: []quality.ConsistencyIssue{
				{ID: "a", Type: "anomaly", Severity: quality.SeverityCritical, PrevSeverity: quality.SeverityWarning, Status: quality.IssueOpen, DetectedNow: true, PrevAge: ip(0)},
			},
			wantScore: 70,
			want: []quality.IssueDeduction{
				{IssueID: "a", Severity: "critical", Change: "detected_again", AgeBefore: ip(0), PointsBefore: 15, PointsAfter: 30, DecayScans: 5},
			},
		},
		{
			name: "OtherIssueTypesIgnored",
			issues: []quality.ConsistencyIssue{
				{ID: "m", Type: "modeling", Severity: quality.SeverityCritical, Status: quality.IssueOpen, DetectedNow: true},
			},
			wantScore: 100,
			want:      []quality.IssueDeduction{},
		},
		{
			name: "FloorAtZeroAndLargestChangeFirst",
			issues: []quality.ConsistencyIssue{
				{ID: "w1", Type: "anomaly", Severity: quality.SeverityWarning, Status: quality.IssueOpen, DetectedNow: true},
				{ID: "c1", Type: "anomaly", Severity: quality.SeverityCritical, Status: quality.IssueOpen, DetectedNow: true},
				{ID: "c2", Type: "anomaly", Severity: quality.SeverityCritical, Status: quality.IssueOpen, DetectedNow: true},
				{ID: "c3", Type: "schema_drift", Severity: quality.SeverityCritical, Status: quality.IssueOpen, DetectedNow: true},
			},
			wantScore: 0,
			want: []quality.IssueDeduction{
				{IssueID: "c1", Severity: "critical", Change: "opened", PointsAfter: 30, DecayScans: 5},
				{IssueID: "c2", Severity: "critical", Change: "opened", PointsAfter: 30, DecayScans: 5},
				{IssueID: "c3", Severity: "critical", Change: "opened", PointsAfter: 30, DecayScans: 5},
				{IssueID: "w1", Severity: "warning", Change: "opened", PointsAfter: 15, DecayScans: 5},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.DeductConsistency(tt.issues, 0)
			if got.Score != tt.wantScore {
				t.Errorf("Score = %v, want %v", got.Score, tt.wantScore)
			}
			if diff := cmp.Diff(tt.want, got.Issues); diff != "" {
				t.Errorf("Issues (-want +got):\n%s", diff)
			}
			if got.Model != "decay_v1_k5" || got.DecayScans != 5 {
				t.Errorf("Model = %q, DecayScans = %d", got.Model, got.DecayScans)
			}
		})
	}
}

// TestConsistencyAcrossScansFollowsTheDecayModel follows one warning anomaly over
// seven scans, as the pipeline would feed them, and checks each scan's own deduction.
func TestConsistencyAcrossScansFollowsTheDecayModel(t *testing.T) {
	want := []float64{85, 88, 91, 94, 97, 100, 100}
	var prevAge *int
	for scan, w := range want {
		age := scan
		issue := quality.ConsistencyIssue{ID: "a", Type: "anomaly", Severity: quality.SeverityWarning,
			Status: quality.IssueOpen, DetectedNow: scan == 0, Age: age, PrevAge: prevAge}
		got := quality.DeductConsistency([]quality.ConsistencyIssue{issue}, 0)
		if got.Score != w {
			t.Fatalf("scan %d: consistencia = %v, want %v", scan, got.Score, w)
		}
		prevAge = &age
	}
}
