package product

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
)

// Domain statuses (contract part 3).
const (
	StatusDraft      = "draft"
	StatusPublished  = "published"
	StatusDeprecated = "deprecated"
)

// Grant roles of a team on a domain.
const (
	RoleMember  = "member"
	RoleManager = "manager"
)

// Version is a domain version MAJOR.MINOR; 0.0 is a draft never published.
type Version struct {
	Major int
	Minor int
}

// String is MAJOR.MINOR.
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// IsZero reports whether v is 0.0 (never published).
func (v Version) IsZero() bool { return v.Major == 0 && v.Minor == 0 }

// Less orders versions.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || v.Major == o.Major && v.Minor < o.Minor
}

var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$`)

// ParseVersion reads MAJOR.MINOR.
func ParseVersion(s string) (Version, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return Version{Major: major, Minor: minor}, true
}

// SLA is a domain's service level: availability objective (50-100 percent of days),
// retention (1-36500 days), per-dimension targets (0-100) and per-dimension weights of
// the score (percent, sum 100; nil means the default weights).
type SLA struct {
	AvailabilityObjectivePct *float64           `json:"availability_objective_pct"`
	RetentionDays            *int               `json:"retention_days"`
	DimensionTargets         map[string]float64 `json:"dimension_targets"`
	DimensionWeights         map[string]float64 `json:"dimension_weights"`
}

// Clone returns a deep copy.
func (s SLA) Clone() SLA {
	out := SLA{}
	if s.AvailabilityObjectivePct != nil {
		v := *s.AvailabilityObjectivePct
		out.AvailabilityObjectivePct = &v
	}
	if s.RetentionDays != nil {
		v := *s.RetentionDays
		out.RetentionDays = &v
	}
	out.DimensionTargets = cloneMap(s.DimensionTargets)
	if s.DimensionWeights != nil {
		out.DimensionWeights = cloneMap(s.DimensionWeights)
	}
	return out
}

// Weights returns the SLA's dimension weights for scoring, nil when it has none.
func (s SLA) Weights() quality.Weights {
	if s.DimensionWeights == nil {
		return nil
	}
	w := make(quality.Weights, 5)
	for _, d := range quality.AllDimensions() {
		w[d] = s.DimensionWeights[string(d)]
	}
	return w
}

func cloneMap(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TeamGrant is a team's grant on a domain.
type TeamGrant struct {
	TeamID   string
	TeamName string
	Role     string
}

// Domain is a data product.
type Domain struct {
	ID          string
	WorkspaceID string
	Name        string
	Description string
	Restricted  bool
	Status      string
	// Version is the last published version (0.0 for a draft never published).
	Version     Version
	PublishedAt *time.Time
	OwnerName   *string
	SLA         SLA
	Teams       []TeamGrant
	// DatasetIDs are the member datasets the caller can see, by name.
	DatasetIDs []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// CallerRole is the caller's best team grant on the domain ("" without one).
	CallerRole string
}

// Opt is an optional field of a patch: unset keeps the current value; set with a nil
// Value clears it.
type Opt[T any] struct {
	Set   bool
	Value *T
}

// Some returns a set Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, Value: &v} }

// SLAPatch changes some SLA fields; unset ones keep their value.
type SLAPatch struct {
	AvailabilityObjectivePct Opt[float64]
	RetentionDays            Opt[int]
	DimensionTargets         Opt[map[string]float64]
	DimensionWeights         Opt[map[string]float64]
}

// apply returns sla with the patch applied, after validating it; loc prefixes 422 items.
func (p SLAPatch) apply(sla SLA, loc ...string) (SLA, error) {
	at := func(extra ...string) []string { return append(append([]string{}, loc...), extra...) }
	out := sla.Clone()
	var fields []vigia.FieldError
	if p.AvailabilityObjectivePct.Set {
		out.AvailabilityObjectivePct = nil
		if v := p.AvailabilityObjectivePct.Value; v != nil {
			switch {
			case math.IsNaN(*v) || *v < 50:
				fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 50}, at("availability_objective_pct")...))
			case *v > 100:
				fields = append(fields, vigia.Field("less_than_equal", map[string]any{"le": 100}, at("availability_objective_pct")...))
			default:
				x := *v
				out.AvailabilityObjectivePct = &x
			}
		}
	}
	if p.RetentionDays.Set {
		out.RetentionDays = nil
		if v := p.RetentionDays.Value; v != nil {
			switch {
			case *v < 1:
				fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 1}, at("retention_days")...))
			case *v > 36500:
				fields = append(fields, vigia.Field("less_than_equal", map[string]any{"le": 36500}, at("retention_days")...))
			default:
				x := *v
				out.RetentionDays = &x
			}
		}
	}
	if p.DimensionTargets.Set {
		out.DimensionTargets = map[string]float64{}
		if m := p.DimensionTargets.Value; m != nil {
			unknown := false
			for _, k := range sortedKeys(*m) {
				v := (*m)[k]
				switch {
				case !quality.Dimension(k).Valid():
					unknown = true
				case math.IsNaN(v) || v < 0:
					fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 0}, at("dimension_targets", k)...))
				case v > 100:
					fields = append(fields, vigia.Field("less_than_equal", map[string]any{"le": 100}, at("dimension_targets", k)...))
				default:
					out.DimensionTargets[k] = v
				}
			}
			if unknown {
				// The unknown key is user text: say where, never what.
				fields = append(fields, vigia.Field("extra_forbidden", nil, at("dimension_targets")...))
			}
		}
	}
	if p.DimensionWeights.Set {
		out.DimensionWeights = nil
		if m := p.DimensionWeights.Value; m != nil {
			w, err := quality.ValidateWeights(*m, loc...)
			if err != nil {
				fields = append(fields, vigia.AsError(err).Fields...)
			} else {
				out.DimensionWeights = map[string]float64{}
				for d, v := range w {
					out.DimensionWeights[string(d)] = v
				}
			}
		}
	}
	if len(fields) > 0 {
		return sla, vigia.Invalid(fields...)
	}
	return out, nil
}

// maxText bounds names (200) and descriptions (2000).
const (
	maxDomainName   = 200
	maxDescription  = 2000
	maxOwnerName    = 200
	maxDatasetsEdit = 1000
)

// emailRE finds email-like text; an owner name must not be one, and public text is
// scrubbed of them.
var emailRE = regexp.MustCompile(`[^\s@<>()"',;:]+@[^\s@<>()"',;:]+`)

func validText(s string, max int) bool {
	if utf8.RuneCountInString(s) > max {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scrub removes email addresses from public text.
func scrub(s string) string { return emailRE.ReplaceAllString(s, "[email]") }

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
