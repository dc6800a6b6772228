package quality

import (
	"fmt"
	"sort"
)

// DefaultDecayScans is K, the number of scans over which an issue's deduction fades to 0.
const DefaultDecayScans = 5

// Points deducted from consistencia by an issue detected in this scan, before decay.
const (
	PointsWarning  = 15.0
	PointsCritical = 30.0
)

// ConsistencyModelID names the consistencia model (and its K) a score was computed with,
// so that an explanation can tell when two scores were not computed alike.
func ConsistencyModelID(decayScans int) string {
	return fmt.Sprintf("decay_v1_k%d", normDecay(decayScans))
}

func normDecay(k int) int {
	if k <= 0 {
		return DefaultDecayScans
	}
	return k
}

// Changes of an issue's deduction between the previous scan and this one, as the
// consistency_issue explain driver reports them.
const (
	ChangeOpened        = "opened"         // first seen in this scan
	ChangeDecaying      = "decaying"       // not detected again: one scan older, fewer points
	ChangeDetectedAgain = "detected_again" // seen again: age back to 0, full points
	ChangeGone          = "gone"           // deducted at the previous scan, not any more
)

// ConsistencyIssue is the state of one schema_drift or anomaly issue of the dataset as
// of this scan, with what the caller knows of it at the previous scan.
type ConsistencyIssue struct {
	ID       string
	Type     string // schema_drift or anomaly; empty means the caller already filtered; other types are ignored
	Severity Severity
	Status   IssueStatus // status now; only open and acknowledged deduct
	// Structural is true for drift that removed a column or changed a type: it counts
	// only in the scan that detects it.
	Structural bool
	// DetectedNow is true when this scan detected the issue (again); Age is then 0.
	DetectedNow bool
	// Age is the number of scans since the last detection, as of this scan.
	Age int
	// PrevAge is Age as of the previous scan of the dataset; nil when the issue did not
	// exist then.
	PrevAge *int
	// PrevStatus is the status at the previous scan; empty means it was open or
	// acknowledged (the usual case: it was deducting).
	PrevStatus IssueStatus
	// PrevSeverity is the severity at the previous scan; empty means the same as Severity.
	PrevSeverity Severity
}

// IssueDeduction is what one issue took from consistencia in this scan and in the
// previous one. It is stored with the score and becomes a consistency_issue driver.
type IssueDeduction struct {
	IssueID      string   `json:"issue_id"`
	Severity     Severity `json:"severity"`
	Structural   bool     `json:"structural"`
	Change       string   `json:"change"`
	AgeBefore    *int     `json:"age_before"`
	AgeAfter     int      `json:"age_after"`
	PointsBefore float64  `json:"points_before"`
	PointsAfter  float64  `json:"points_after"`
	DecayScans   int      `json:"decay_scans"`
}

// Consistency is the consistencia dimension of one scan with its deductions.
type Consistency struct {
	Score      float64          `json:"score"`     // 100 minus Deduction, floored at 0
	Deduction  float64          `json:"deduction"` // sum of PointsAfter
	DecayScans int              `json:"decay_scans"`
	Model      string           `json:"model"`
	Issues     []IssueDeduction `json:"issues"`
	// Saturated is true when the deductions add up to more than 100: consistencia sits
	// at its floor of 0 and cannot show them all. HiddenPoints is Deduction − 100, and
	// BeyondFloor the issues whose points, counted oldest detection first, fall past
	// the floor (the newest problems, which the score cannot show).
	Saturated    bool     `json:"saturated,omitempty"`
	HiddenPoints float64  `json:"hidden_points,omitempty"`
	BeyondFloor  []string `json:"beyond_floor,omitempty"`
}

// IssuePoints is the deduction of one issue at one scan:
//
//	points = base × (K − age) / K   for 0 ≤ age < K, else 0
//
// with base 15 for a warning (or an issue without severity), 30 for a critical issue and
// 0 for info. Only open or acknowledged
// issues deduct. Structural drift deducts only at age 0, the scan that detects it.
func IssuePoints(sev Severity, status IssueStatus, structural bool, age, decayScans int) float64 {
	k := normDecay(decayScans)
	if !status.unresolved() || age < 0 || age >= k {
		return 0
	}
	if structural && age != 0 {
		return 0
	}
	base := PointsWarning
	switch sev {
	case SeverityCritical:
		base = PointsCritical
	case SeverityInfo:
		// info issues inform; they are not problems of the data.
		return 0
	}
	// Integer arithmetic before the one division keeps 15×3/5 exactly 9.
	return base * float64(k-age) / float64(k)
}

// DeductConsistency computes consistencia for this scan from the dataset's
// schema_drift and anomaly issues: 100 minus the sum of IssuePoints, floored at 0.
// decayScans ≤ 0 means DefaultDecayScans. Issues that deduct nothing now and deducted
// nothing at the previous scan are left out of Issues. Issues come back with the
// largest change in points first, ties by issue id.
func DeductConsistency(issues []ConsistencyIssue, decayScans int) Consistency {
	k := normDecay(decayScans)
	out := Consistency{DecayScans: k, Model: ConsistencyModelID(k), Issues: []IssueDeduction{}}
	for _, is := range issues {
		if is.Type != "" && is.Type != IssueTypeSchemaDrift && is.Type != IssueTypeAnomaly {
			continue
		}
		age := is.Age
		if is.DetectedNow || age < 0 {
			age = 0
		}
		after := IssuePoints(is.Severity, is.Status, is.Structural, age, k)

		var before float64
		var ageBefore *int
		if is.PrevAge != nil {
			pa := max(*is.PrevAge, 0)
			ageBefore = &pa
			ps := is.PrevStatus
			if ps == "" {
				ps = IssueOpen
			}
			psev := is.PrevSeverity
			if psev == "" {
				psev = is.Severity
			}
			before = IssuePoints(psev, ps, is.Structural, pa, k)
		}
		if before == 0 && after == 0 {
			continue
		}
		var change string
		switch {
		case is.PrevAge == nil:
			change = ChangeOpened
		case is.DetectedNow && after > 0:
			change = ChangeDetectedAgain
		case after == 0:
			change = ChangeGone
		default:
			change = ChangeDecaying
		}
		out.Issues = append(out.Issues, IssueDeduction{
			IssueID: is.ID, Severity: is.Severity, Structural: is.Structural, Change: change,
			AgeBefore: ageBefore, AgeAfter: age, PointsBefore: before, PointsAfter: after, DecayScans: k,
		})
		out.Deduction += after
	}
	sort.SliceStable(out.Issues, func(i, j int) bool {
		a, b := out.Issues[i], out.Issues[j]
		da, db := abs(a.PointsAfter-a.PointsBefore), abs(b.PointsAfter-b.PointsBefore)
		if da != db {
			return da > db
		}
		return a.IssueID < b.IssueID
	})
	out.Score = max(0, 100-out.Deduction)
	if out.Deduction > 100 {
		out.Saturated, out.HiddenPoints = true, out.Deduction-100
		order := make([]IssueDeduction, 0, len(out.Issues))
		for _, is := range out.Issues {
			if is.PointsAfter > 0 {
				order = append(order, is)
			}
		}
		sort.SliceStable(order, func(i, j int) bool {
			if order[i].AgeAfter != order[j].AgeAfter {
				return order[i].AgeAfter > order[j].AgeAfter
			}
			return order[i].IssueID < order[j].IssueID
		})
		sum := 0.0
		for _, is := range order {
			sum += is.PointsAfter
			if sum > 100 {
				out.BeyondFloor = append(out.BeyondFloor, is.IssueID)
			}
		}
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
