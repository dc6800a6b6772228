// Package modeling raises the issues of a dataset's design and of its domains' SLOs
// after each succeeded scan: modeling issues (the schema design checks: the subtype
// is the check, at most one open per dataset and check, a fix in the source's
// dialect checked by that dialect's parser) and slo_breach issues (a dimension of the
// scan's score under a domain's dimension target). Both are the after-scan consumer
// "modeling"; neither stands against the dataset's verdict.
package modeling

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rulesql"
)

// Issue types this package opens.
const (
	IssueTypeModeling  = "modeling"
	IssueTypeSLOBreach = "slo_breach"
	// SubtypeDimensionTarget is the subtype of slo_breach issues.
	SubtypeDimensionTarget = "dimension_target"
)

// ScanDataset is a dataset profiled by a scan, with its columns and the scan's
// dimensions, and the dimension targets of its domains.
type ScanDataset struct {
	Dataset    catalog.Dataset
	Dimensions map[string]*float64
	// Targets are the domains' dimension targets: per dimension, the highest target
	// and the domains that set it (sorted).
	Targets map[string]Target
}

// Target is the strictest target of a dimension over a dataset's domains.
type Target struct {
	Value     float64
	DomainIDs []string
}

// Breach is a dimension of the scan's score under its target.
type Breach struct {
	Dimension string
	Target    float64
	Observed  float64
	DomainIDs []string
}

// Store reads the scan's datasets and keeps the issues.
type Store interface {
	// ScanDatasets lists the datasets the scan profiled on the connection (not dropped)
	// with their columns, and the connection's kind.
	ScanDatasets(ctx context.Context, workspaceID, connectionID, scanID string) ([]ScanDataset, string, error)
	// SaveOutcomes writes the scan's outcomes of all its datasets (a few statements
	// per scan, not per dataset). Per dataset with Modeling: a modeling issue opens per
	// finding whose check has none open on the dataset (nor one ignored: an ignored
	// check stays ignored), the open ones are updated and those of checks that found
	// nothing resolve. The same for the dataset's slo_breach issues, one per dimension;
	// the other open ones resolve (target met or gone) except those of the unknown
	// dimensions (a target but no value in this scan).
	SaveOutcomes(ctx context.Context, workspaceID, connectionID, scanID, dialect string, outs []DatasetOutcome, at time.Time) error
}

// DatasetOutcome is what the checks of one scan found on one dataset.
type DatasetOutcome struct {
	Dataset catalog.Dataset
	// Modeling: the design checks ran (tables; a view's modeling issues are left
	// as they are).
	Modeling bool
	Findings []Finding
	Breaches []Breach
	// Unknown are the dimensions with a target the scan could not compute.
	Unknown []string
}

// DDLChecker parses a schema-change script with a dialect's real parser.
type DDLChecker interface {
	CheckDDL(dialect, sql string) error
}

// Service runs the checks after each scan.
type Service struct {
	store Store
	ddl   DDLChecker
	clock vigia.Clock
	log   *slog.Logger
}

// NewService returns the modeling service.
func NewService(store Store, ddl DDLChecker, clock vigia.Clock, log *slog.Logger) *Service {
	return &Service{store: store, ddl: ddl, clock: clock, log: log}
}

// AfterScan is the after-scan consumer "modeling": the design checks on every table
// the scan profiled and the SLO targets of their domains. Idempotent: a second run
// for the same scan opens nothing new.
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	list, kind, err := s.store.ScanDatasets(ctx, workspaceID, connectionID, scanID)
	if err != nil {
		return err
	}
	dialect := rulesql.Dialect(kind)
	all := make([]catalog.Dataset, 0, len(list))
	for _, sd := range list {
		all = append(all, sd.Dataset)
	}
	scope := NewScope(all)
	outs := make([]DatasetOutcome, 0, len(list))
	for _, sd := range list {
		o := DatasetOutcome{Dataset: sd.Dataset, Modeling: sd.Dataset.Kind == "table"}
		fs := s.checked(CheckIn(Table{Dataset: sd.Dataset, Dialect: dialect}, scope), kind)
		if o.Modeling {
			o.Findings = fs
		}
		o.Breaches, o.Unknown = Breaches(sd)
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		return nil
	}
	return s.store.SaveOutcomes(ctx, workspaceID, connectionID, scanID, kind, outs, s.clock.Now())
}

// checked keeps the findings whose fix the dialect's parser accepts (a finding without
// a fix is kept); a rejected fix is a bug of this package, logged without the SQL.
func (s *Service) checked(fs []Finding, dialect string) []Finding {
	out := fs[:0]
	for _, f := range fs {
		if f.DDL != "" && s.ddl != nil {
			if err := s.ddl.CheckDDL(dialect, f.DDL); err != nil {
				s.log.Warn("modeling fix rejected by the dialect's parser", "check", f.Check, "dialect", dialect, "cause", err.Error())
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// Breaches compares the scan's dimensions with the targets: a dimension under its
// target is a breach; unknown lists the dimensions with a target that the scan could
// not compute (sorted), whose issue neither opens nor resolves.
func Breaches(sd ScanDataset) (bs []Breach, unknown []string) {
	for dim, t := range sd.Targets {
		v := sd.Dimensions[dim]
		if v == nil {
			unknown = append(unknown, dim)
			continue
		}
		if *v < t.Value {
			bs = append(bs, Breach{Dimension: dim, Target: t.Value, Observed: *v, DomainIDs: t.DomainIDs})
		}
	}
	sort.Strings(unknown)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Dimension < bs[j].Dimension })
	return bs, unknown
}
