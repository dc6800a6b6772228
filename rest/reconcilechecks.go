package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/datadiff"
)

// ReconcileChecksService is what the transport needs of declared reconciliation checks.
type ReconcileChecksService interface {
	CreateCheck(ctx context.Context, in datadiff.CheckInput) (datadiff.Check, error)
	Checks(ctx context.Context, page vigia.Page) (vigia.List[datadiff.Check], error)
	Check(ctx context.Context, id string) (datadiff.Check, error)
	DeleteCheck(ctx context.Context, id string) error
	RunCheck(ctx context.Context, id string) (datadiff.Check, error)
}

// ReconcileCheckIn declares a reconciliation check.
type ReconcileCheckIn struct {
	Name         string   `json:"name" minLength:"1" maxLength:"200" doc:"Shown in the check's issue title"`
	DatasetID    string   `json:"dataset_id" maxLength:"64" doc:"The first dataset (e.g. orders in the warehouse); the check's issue is opened on it"`
	OtherID      string   `json:"other_id" maxLength:"64" doc:"The other dataset (e.g. orders in the source system)"`
	GroupBy      []string `json:"group_by,omitempty" maxItems:"16" doc:"Columns of both datasets grouping the figures (date, store ...); none: one group"`
	SumColumns   []string `json:"sum_columns,omitempty" maxItems:"16" doc:"Numeric columns of both datasets summed per group"`
	TolerancePct *float64 `json:"tolerance_pct,omitempty" minimum:"0" maximum:"100" doc:"Relative difference allowed per count and sum, in percent of the larger (0 by default: exact)"`
}

// ReconcileCheckResultOut is a check's last run, as a rule result.
type ReconcileCheckResultOut struct {
	Status       string              `json:"status" enum:"passed,failed,not_evaluated"`
	Code         *string             `json:"code,omitempty" doc:"Why a run is not_evaluated (validation_error when a column is gone, diff_time_budget_exceeded, diff_source_failed, reconcile_too_many_groups)"`
	Groups       int                 `json:"groups"`
	FailedGroups int                 `json:"failed_groups"`
	Differing    []ReconcileGroupOut `json:"differing" doc:"The groups beyond tolerance, sorted, at most 100"`
	ScanID       *string             `json:"scan_id,omitempty" doc:"The scan after which the check ran; absent for a run on demand"`
	RunAt        time.Time           `json:"run_at"`
}

// ReconcileCheckOut is a declared reconciliation check with its last result.
type ReconcileCheckOut struct {
	ID           string                   `json:"id"`
	Name         string                   `json:"name"`
	DatasetID    string                   `json:"dataset_id"`
	OtherID      string                   `json:"other_id"`
	GroupBy      []string                 `json:"group_by"`
	SumColumns   []string                 `json:"sum_columns"`
	TolerancePct float64                  `json:"tolerance_pct"`
	CreatedAt    time.Time                `json:"created_at"`
	LastResult   *ReconcileCheckResultOut `json:"last_result" doc:"null before the first run"`
}

var reconcileCheckIDParam = param{Name: "check_id", In: "path", Type: "string", Required: true, MaxLen: 64}

func (s *Server) reconcileCheckRoutes() {
	s.register(operation{ID: "listReconcileChecks", Method: http.MethodGet, Path: "/api/v1/reconcile/checks", Tag: "reconcile",
		List: true, ListDefault: datadiff.CheckPageDefault,
		Summary:  "Declared reconciliation checks whose datasets the caller can see, oldest first, with their last result",
		Response: []ReconcileCheckOut{}}, s.handleReconcileCheckList)
	s.register(operation{ID: "createReconcileCheck", Method: http.MethodPost, Path: "/api/v1/reconcile/checks", Tag: "reconcile",
		Status: http.StatusCreated, Summary: "Declare a reconciliation check between two datasets (member or admin session)",
		Body: ReconcileCheckIn{}, Response: ReconcileCheckOut{},
		Desc: "The check runs after each succeeded scan of either dataset's connection, and on demand. A failed run opens (or " +
			"updates) one issue of type reconciliation on the first dataset naming the check, with the groups that differ; a later " +
			"passed run resolves it. 404 when a dataset is not one the caller can see; 422 for a column not in both datasets or a " +
			"sum column that is not numeric."}, s.handleReconcileCheckCreate)
	s.register(operation{ID: "getReconcileCheck", Method: http.MethodGet, Path: "/api/v1/reconcile/checks/{check_id}", Tag: "reconcile",
		Summary: "One reconciliation check with its last result", Params: []param{reconcileCheckIDParam}, Response: ReconcileCheckOut{}},
		s.handleReconcileCheckGet)
	s.register(operation{ID: "deleteReconcileCheck", Method: http.MethodDelete, Path: "/api/v1/reconcile/checks/{check_id}", Tag: "reconcile",
		Summary: "Delete a reconciliation check; its open issue is resolved (member or admin session)", Params: []param{reconcileCheckIDParam},
		Status: http.StatusNoContent}, s.handleReconcileCheckDelete)
	s.register(operation{ID: "runReconcileCheck", Method: http.MethodPost, Path: "/api/v1/reconcile/checks/{check_id}/run", Tag: "reconcile",
		Summary: "Run a reconciliation check now and keep its result (member or admin session)", Params: []param{reconcileCheckIDParam},
		Response: ReconcileCheckOut{},
		Desc: "As after a scan: failed opens or updates the check's issue, passed resolves it; a run that cannot compare (a column " +
			"gone, a source failing, the time budget) is not_evaluated with its code and leaves the issue as it is."}, s.handleReconcileCheckRun)
}

func toReconcileCheckOut(c datadiff.Check) ReconcileCheckOut {
	out := ReconcileCheckOut{ID: c.ID, Name: c.Name, DatasetID: c.DatasetID, OtherID: c.OtherID, GroupBy: c.GroupBy, SumColumns: c.SumColumns,
		TolerancePct: c.TolerancePct, CreatedAt: c.CreatedAt}
	if out.GroupBy == nil {
		out.GroupBy = []string{}
	}
	if out.SumColumns == nil {
		out.SumColumns = []string{}
	}
	if r := c.LastResult; r != nil {
		lr := &ReconcileCheckResultOut{Status: r.Status, Groups: r.Groups, FailedGroups: r.FailedGroups, ScanID: r.ScanID, RunAt: r.RunAt,
			Differing: make([]ReconcileGroupOut, 0, len(r.Differing))}
		if r.Code != "" {
			code := r.Code
			lr.Code = &code
		}
		for _, d := range r.Differing {
			sums := d.Sums
			if sums == nil {
				sums = map[string][2]string{}
			}
			lr.Differing = append(lr.Differing, ReconcileGroupOut{Group: d.Group, Code: d.Code, CountA: d.CountA, CountB: d.CountB, Sums: sums})
		}
		out.LastResult = lr
	}
	return out
}

func (s *Server) handleReconcileCheckList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.ReconcileChecks.Checks(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ReconcileCheckOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, toReconcileCheckOut(c))
	}
	list(w, res.Total, out)
}

func (s *Server) handleReconcileCheckCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body ReconcileCheckIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	ci := datadiff.CheckInput{Name: body.Name, DatasetID: body.DatasetID, OtherID: body.OtherID, GroupBy: body.GroupBy, SumColumns: body.SumColumns}
	if body.TolerancePct != nil {
		ci.TolerancePct = *body.TolerancePct
	}
	c, err := s.deps.ReconcileChecks.CreateCheck(r.Context(), ci)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/reconcile/checks/"+c.ID)
	writeJSON(w, http.StatusCreated, toReconcileCheckOut(c))
}

func (s *Server) handleReconcileCheckGet(w http.ResponseWriter, r *http.Request, in *input) {
	c, err := s.deps.ReconcileChecks.Check(r.Context(), in.Path("check_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toReconcileCheckOut(c))
}

func (s *Server) handleReconcileCheckDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.ReconcileChecks.DeleteCheck(r.Context(), in.Path("check_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleReconcileCheckRun(w http.ResponseWriter, r *http.Request, in *input) {
	c, err := s.deps.ReconcileChecks.RunCheck(r.Context(), in.Path("check_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toReconcileCheckOut(c))
}
