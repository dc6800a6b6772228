package datadiff

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// Bounds and codes of declared reconciliation checks.
const (
	MaxCheckNameLen = 200
	// CheckPageDefault is the page size of the check list.
	CheckPageDefault = 50
	// StatusNotEvaluated is a run that could not compare the datasets (a column gone, a
	// source failing); its Code says why. It neither opens nor resolves the issue.
	StatusNotEvaluated = "not_evaluated"
	// IssueType is the type of the issue a failing check opens on its first dataset.
	IssueType = "reconciliation"
)

// Check is a declared reconciliation between two datasets of a workspace.
type Check struct {
	ID           string
	WorkspaceID  string
	DatasetID    string
	OtherID      string
	Name         string
	GroupBy      []string
	SumColumns   []string
	TolerancePct float64
	CreatedBy    string
	CreatedAt    time.Time
	LastResult   *CheckResult
}

// CheckResult is a check's run, as a rule result: passed or failed with the groups that
// differ, or not_evaluated with a code.
type CheckResult struct {
	Status       string      `json:"status"`
	Code         string      `json:"code,omitempty"`
	Groups       int         `json:"groups"`
	FailedGroups int         `json:"failed_groups"`
	Differing    []GroupDiff `json:"differing"`
	ScanID       *string     `json:"scan_id,omitempty"`
	RunAt        time.Time   `json:"run_at"`
}

// CheckInput declares a check.
type CheckInput struct {
	DatasetID    string
	OtherID      string
	Name         string
	GroupBy      []string
	SumColumns   []string
	TolerancePct float64
}

// CheckStore keeps declared checks, their last results and their issues.
type CheckStore interface {
	CreateReconcileCheck(ctx context.Context, c Check) error
	// ReconcileChecks lists a workspace's checks, oldest first.
	ReconcileChecks(ctx context.Context, workspaceID string) ([]Check, error)
	ReconcileCheck(ctx context.Context, workspaceID, id string) (Check, error)
	// DeleteReconcileCheck deletes a check and resolves its open issue.
	DeleteReconcileCheck(ctx context.Context, workspaceID, id string, at time.Time) error
	// ConnectionReconcileChecks lists the checks either of whose datasets is on the connection.
	ConnectionReconcileChecks(ctx context.Context, workspaceID, connectionID string) ([]Check, error)
	// SaveReconcileResult keeps a run as the check's last result; a failed run opens (or
	// updates) the check's issue of type reconciliation on its first dataset, a passed
	// one resolves it.
	SaveReconcileResult(ctx context.Context, c Check, datasetName string, r CheckResult) error
}

// WithChecks gives the service the store of declared checks.
func (s *Service) WithChecks(store CheckStore) *Service {
	s.checks = store
	return s
}

// CreateCheck declares a check between two datasets the caller can see (member or admin
// session). Columns are validated as for an on-demand reconciliation.
func (s *Service) CreateCheck(ctx context.Context, in CheckInput) (Check, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Check{}, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" || len(name) > MaxCheckNameLen {
		return Check{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"min_length": 1, "max_length": MaxCheckNameLen}, "name"))
	}
	a, err := s.datasets.Dataset(ctx, in.DatasetID)
	if err != nil {
		return Check{}, err
	}
	b, err := s.datasets.Dataset(ctx, in.OtherID)
	if err != nil {
		return Check{}, err
	}
	req := ReconcileRequest{GroupBy: in.GroupBy, SumColumns: in.SumColumns, TolerancePct: in.TolerancePct}
	if err := checkReconcile(a, b, &req); err != nil {
		return Check{}, err
	}
	c := Check{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, DatasetID: a.ID, OtherID: b.ID, Name: name,
		GroupBy: nonNil(in.GroupBy), SumColumns: nonNil(in.SumColumns), TolerancePct: in.TolerancePct,
		CreatedBy: p.UserID, CreatedAt: s.clock.Now()}
	if err := s.checks.CreateReconcileCheck(ctx, c); err != nil {
		return Check{}, err
	}
	return c, nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// visible reports whether the caller can see both datasets of a check.
func (s *Service) visible(ctx context.Context, c Check) (bool, error) {
	for _, id := range []string{c.DatasetID, c.OtherID} {
		if _, err := s.datasets.Dataset(ctx, id); err != nil {
			if vigia.IsKind(err, vigia.KindNotFound) {
				return false, nil
			}
			return false, err
		}
	}
	return true, nil
}

// Checks lists the checks of the caller's workspace whose datasets the caller can see.
func (s *Service) Checks(ctx context.Context, page vigia.Page) (vigia.List[Check], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Check]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Check]{}, err
	}
	all, err := s.checks.ReconcileChecks(ctx, p.WorkspaceID)
	if err != nil {
		return vigia.List[Check]{}, err
	}
	seen := []Check{}
	for _, c := range all {
		ok, err := s.visible(ctx, c)
		if err != nil {
			return vigia.List[Check]{}, err
		}
		if ok {
			seen = append(seen, c)
		}
	}
	out := vigia.List[Check]{Total: len(seen), Items: []Check{}}
	if page.Offset < len(seen) {
		end := min(page.Offset+page.Limit, len(seen))
		out.Items = seen[page.Offset:end]
	}
	return out, nil
}

// Check returns one check; another workspace's or one whose datasets the caller cannot
// see is KindNotFound.
func (s *Service) Check(ctx context.Context, id string) (Check, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Check{}, err
	}
	if !vigia.ValidID(id) {
		return Check{}, vigia.NotFound()
	}
	c, err := s.checks.ReconcileCheck(ctx, p.WorkspaceID, id)
	if err != nil {
		return Check{}, err
	}
	ok, err := s.visible(ctx, c)
	if err != nil {
		return Check{}, err
	}
	if !ok {
		return Check{}, vigia.NotFound()
	}
	return c, nil
}

// DeleteCheck deletes a check (member or admin session); its open issue is resolved.
func (s *Service) DeleteCheck(ctx context.Context, id string) error {
	if _, err := vigia.RequireSession(ctx, vigia.RoleMember); err != nil {
		return err
	}
	c, err := s.Check(ctx, id)
	if err != nil {
		return err
	}
	return s.checks.DeleteReconcileCheck(ctx, c.WorkspaceID, c.ID, s.clock.Now())
}

// RunCheck runs a check now (member or admin session) and keeps its result.
func (s *Service) RunCheck(ctx context.Context, id string) (Check, error) {
	if _, err := vigia.RequireSession(ctx, vigia.RoleMember); err != nil {
		return Check{}, err
	}
	c, err := s.Check(ctx, id)
	if err != nil {
		return Check{}, err
	}
	r, err := s.run(ctx, c, nil)
	if err != nil {
		return Check{}, err
	}
	c.LastResult = &r
	return c, nil
}

// AfterScan runs the checks either of whose datasets is on the scanned connection: the
// after-scan consumer "reconcile". A check that cannot compare (a column gone, a source
// failing, the time budget) keeps a not_evaluated result; only the store's failures
// and a cancelled context are returned, so the consumer is retried for them.
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	checks, err := s.checks.ConnectionReconcileChecks(ctx, workspaceID, connectionID)
	if err != nil {
		return err
	}
	for _, c := range checks {
		if _, err := s.run(ctx, c, &scanID); err != nil {
			if vigia.IsKind(err, vigia.KindNotFound) {
				continue // a dataset dropped or deleted meanwhile
			}
			if vigia.IsKind(err, vigia.KindConflict) {
				continue // a blackout window of a side's connection: the check keeps its last result
			}
			return err
		}
	}
	return nil
}

// run reconciles a check's datasets and saves the result. Errors of the comparison
// itself (KindInvalid: columns, budget, source) become a not_evaluated result.
func (s *Service) run(ctx context.Context, c Check, scanID *string) (CheckResult, error) {
	a, err := s.datasets.Dataset(ctx, c.DatasetID)
	if err != nil {
		return CheckResult{}, err
	}
	res, err := s.Reconcile(ctx, c.DatasetID, c.OtherID, ReconcileRequest{GroupBy: c.GroupBy, SumColumns: c.SumColumns, TolerancePct: c.TolerancePct})
	r := CheckResult{ScanID: scanID, RunAt: s.clock.Now(), Differing: []GroupDiff{}}
	var ve *vigia.Error
	switch {
	case err == nil:
		r.Status, r.Groups, r.FailedGroups, r.Differing = res.Status, res.Groups, res.FailedGroups, res.Differing
	case ctx.Err() != nil:
		return CheckResult{}, ctx.Err()
	case errors.As(err, &ve) && ve.Kind == vigia.KindInvalid:
		r.Status, r.Code = StatusNotEvaluated, ve.Code
		if r.Code == "" {
			r.Code = "validation_error"
		}
	default:
		return CheckResult{}, err
	}
	if err := s.checks.SaveReconcileResult(ctx, c, a.Name(), r); err != nil {
		return CheckResult{}, err
	}
	return r, nil
}
