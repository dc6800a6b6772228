package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/scan"
)

// ScanOut is a scan of a connection.
type ScanOut struct {
	ID             string     `json:"id"`
	ConnectionID   string     `json:"connection_id"`
	ConnectionName string     `json:"connection_name"`
	Status         string     `json:"status" enum:"queued,running,succeeded,failed,cancelled"`
	Trigger        string     `json:"trigger"`
	Attempt        int        `json:"attempt"`
	DatasetsTotal  int        `json:"datasets_total"`
	DatasetsDone   int        `json:"datasets_done"`
	DatasetsFailed int        `json:"datasets_failed"`
	CurrentDataset *string    `json:"current_dataset"`
	ErrorCode      *string    `json:"error_code" doc:"Stable reason when failed"`
	CreatedAt      time.Time  `json:"created_at"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
}

// ScanDetailOut is one scan with the datasets it could not profile.
type ScanDetailOut struct {
	ScanOut
	Failures []ScanFailureOut `json:"failures" doc:"The datasets the scan could not profile, with why (datasets the caller cannot see are left out)"`
}

// ScanFailureOut is a dataset a scan could not profile.
type ScanFailureOut struct {
	DatasetID string    `json:"dataset_id"`
	Name      string    `json:"name" doc:"schema.table"`
	Code      string    `json:"code" doc:"Stable: not_populated (a materialized view never refreshed), permission_denied, not_found, timeout, canceled, unreachable, query_failed, bad_result, internal"`
	FailedAt  time.Time `json:"failed_at"`
}

// ScanIn triggers a scan.
type ScanIn struct {
	ConnectionID string `json:"connection_id" maxLength:"64"`
}

// SignalOut is one scan measurement checked against the dataset's history, or a late or
// failing writer of the dataset (source orchestrator).
type SignalOut struct {
	ID          string             `json:"id"`
	DatasetID   string             `json:"dataset_id"`
	DatasetName string             `json:"dataset_name"`
	ScanID      *string            `json:"scan_id" doc:"The scan that raised it; null for a pipeline signal (source orchestrator), which no scan raised"`
	Source      string             `json:"source" enum:"scan,orchestrator" doc:"Who raised it: a scan, or the health of a pipeline writing the dataset (orchestrator runs)"`
	Pipeline    *SignalPipelineOut `json:"pipeline" doc:"The late or failing writer of a pipeline signal; null for scan signals"`
	Kind        string             `json:"kind" enum:"anomaly,schema_drift,pipeline"`
	Metric      string             `json:"metric" doc:"volume, null_rate, distinct_ratio, freshness_lag (anomaly), schema (schema_drift), run_failures (a failing writer: consecutive failed runs, threshold the count that opens a pipeline issue) or run_interval (a late writer: seconds since its last run started, baseline the learned cadence, threshold 1.5 cadences)"`
	Column      *string            `json:"column"`
	Observed    *float64           `json:"observed"`
	ObservedCI  *[]float64         `json:"observed_ci95" doc:"95% interval of observed when it was measured on a sample (null when exact); the signal is raised only when the whole interval lies outside the expected band"`
	Baseline    *float64           `json:"baseline" doc:"Median of the dataset's history"`
	Z           *float64           `json:"z" doc:"Robust z (0.6745 x (x - median) / MAD); null during a cold start or over a constant history"`
	Threshold   *float64           `json:"threshold"`
	Method      string             `json:"method" enum:"robust_z,gross_change,schema_diff,pipeline_health" doc:"What raised it: the robust z over the history, a gross change (fixed thresholds; the only judge until the history has 5 scans), the comparison of the columns with the previous scan's, or the health of a writer judged from its reported runs. See docs/scoring-over-time.md"`
	Severity    *string            `json:"severity" doc:"warning or critical; null on signals recorded before severities were kept"`
	Anomalous   bool               `json:"anomalous"`
	IssueID     *string            `json:"issue_id"`
	CreatedAt   time.Time          `json:"created_at"`
}

// SignalPipelineOut is the writer a pipeline signal is about.
type SignalPipelineOut struct {
	Orchestrator string `json:"orchestrator"`
	Pipeline     string `json:"pipeline"`
	RunID        string `json:"run_id" doc:"The failed run (run_failures), or the last run before the missed one (run_interval)"`
}

func (s *Server) scanRoutes() {
	s.register(operation{ID: "listScans", Method: http.MethodGet, Path: "/api/v1/scans", Tag: "scans",
		Summary: "Scans of the workspace, newest first", List: true, ListDefault: scan.ScanPageDefault, Response: []ScanOut{}}, s.handleScanList)
	s.register(operation{ID: "triggerScan", Method: http.MethodPost, Path: "/api/v1/scans", Tag: "scans", TokenWrite: true,
		Summary: "Trigger a scan of a connection (a marked write: API tokens may call it)", Body: ScanIn{}, Response: ScanOut{},
		Status: http.StatusAccepted, Desc: "Answers 202 with the queued scan (the connection's already queued scan, if any); " +
			"429 scan_queue_full with Retry-After when the workspace has too many scans queued or running.",
		Errors: map[int]string{http.StatusPaymentRequired: "org_quota: the plan's datasets or scans-per-day quota is used up (plan and limit in the body)",
			http.StatusConflict: "blackout_active: a blackout window of the connection is in force (params.ends_at); scheduled scans wait for its end"}},
		s.handleScanTrigger)
	s.register(operation{ID: "getScan", Method: http.MethodGet, Path: "/api/v1/scans/{scan_id}", Tag: "scans",
		Summary: "One scan with its progress", Params: []param{{Name: "scan_id", In: "path", Type: "string", Required: true, MaxLen: 64}},
		Response: ScanDetailOut{}}, s.handleScanGet)
	s.register(operation{ID: "listSignals", Method: http.MethodGet, Path: "/api/v1/signals", Tag: "signals",
		Summary: "What scans flagged against each dataset's history, and late or failing writers, newest first", List: true, ListDefault: scan.SignalPageDefault, Response: []SignalOut{},
		Desc: "Signals of the datasets the caller can see: what scans flagged (source scan), and the late or failing pipelines " +
			"writing the datasets (source orchestrator, type pipeline, no scan: one per failed run and one per missed run, " +
			"raised when a run is reported and by the minutely check). Filters combine (AND). A dataset the caller cannot see, or of " +
			"another workspace, gives an empty list like an unknown one. An unknown type or metric, a timestamp that is not " +
			"RFC 3339 or until not after since give 422.",
		Params: []param{
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64, Desc: "Only this dataset's signals"},
			{Name: "type", In: "query", Type: "string", MaxLen: 100, Desc: "anomaly, schema_drift, pipeline; comma list"},
			{Name: "metric", In: "query", Type: "string", MaxLen: 100, Desc: "volume, null_rate, distinct_ratio, freshness_lag, schema, run_failures, run_interval; comma list"},
			{Name: "since", In: "query", Type: "string", MaxLen: 64, Desc: "RFC 3339 timestamp: signals raised at or after it"},
			{Name: "until", In: "query", Type: "string", MaxLen: 64, Desc: "RFC 3339 timestamp: signals raised before it"},
		}}, s.handleSignalList)
}

func toScanOut(sc scan.Scan) ScanOut {
	return ScanOut{ID: sc.ID, ConnectionID: sc.ConnectionID, ConnectionName: sc.ConnectionName, Status: sc.Status, Trigger: sc.Trigger,
		Attempt: sc.Attempt, DatasetsTotal: sc.DatasetsTotal, DatasetsDone: sc.DatasetsDone, DatasetsFailed: sc.DatasetsFailed,
		CurrentDataset: sc.CurrentDataset, ErrorCode: sc.ErrorCode, CreatedAt: sc.CreatedAt, StartedAt: sc.StartedAt, FinishedAt: sc.FinishedAt}
}

func (s *Server) handleScanList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Scans.Scans(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ScanOut, 0, len(res.Items))
	for _, sc := range res.Items {
		out = append(out, toScanOut(sc))
	}
	list(w, res.Total, out)
}

func (s *Server) handleScanTrigger(w http.ResponseWriter, r *http.Request, in *input) {
	var body ScanIn
	err := in.Decode(&body, 0)
	if err == nil {
		err = required(present("connection_id", body.ConnectionID != ""))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !validID(body.ConnectionID) {
		s.writeError(w, r, notFound())
		return
	}
	sc, err := s.deps.Scans.TriggerScan(r.Context(), body.ConnectionID, "api")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/scans/"+sc.ID)
	writeJSON(w, http.StatusAccepted, toScanOut(sc))
}

func (s *Server) handleScanGet(w http.ResponseWriter, r *http.Request, in *input) {
	sc, err := s.deps.Scans.Scan(r.Context(), in.Path("scan_id"))
	s.reply(w, r, err, func() any {
		out := ScanDetailOut{ScanOut: toScanOut(sc)}
		out.Failures = make([]ScanFailureOut, 0, len(sc.Failures))
		for _, f := range sc.Failures {
			out.Failures = append(out.Failures, ScanFailureOut{DatasetID: f.DatasetID, Name: f.Name, Code: f.Code, FailedAt: f.At})
		}
		return out
	})
}

func (s *Server) handleSignalList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Scans.Signals(r.Context(), scan.SignalFilter{DatasetID: in.String("dataset_id"), Types: commaList(in.String("type")),
		Metrics: commaList(in.String("metric")), Since: in.String("since"), Until: in.String("until"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]SignalOut, 0, len(res.Items))
	for _, sg := range res.Items {
		out = append(out, toSignalOut(sg))
	}
	list(w, res.Total, out)
}

func toSignalOut(sg scan.Signal) SignalOut {
	o := SignalOut{ID: sg.ID, DatasetID: sg.DatasetID, DatasetName: sg.DatasetName, ScanID: nonEmpty(sg.ScanID), Source: sg.Source,
		Kind: sg.Kind, Metric: sg.Metric, Observed: sg.Observed, Baseline: sg.Baseline, Z: sg.Z, Threshold: sg.Threshold,
		Anomalous: sg.Anomalous, IssueID: sg.IssueID, CreatedAt: sg.CreatedAt, Method: sg.Method, Severity: nonEmpty(sg.Severity)}
	if sg.Pipeline != nil {
		o.Pipeline = &SignalPipelineOut{Orchestrator: sg.Pipeline.Orchestrator, Pipeline: sg.Pipeline.Pipeline, RunID: sg.Pipeline.RunID}
	}
	if sg.Column != "" {
		c := sg.Column
		o.Column = &c
	}
	if sg.CI95 != nil {
		o.ObservedCI = &[]float64{sg.CI95[0], sg.CI95[1]}
	}
	return o
}

func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
