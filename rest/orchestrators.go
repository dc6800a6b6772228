package rest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/vigia-data/vigia/orchestrator"
)

// OrchestratorRunIn reports one pipeline run.
type OrchestratorRunIn struct {
	Orchestrator string         `json:"orchestrator" minLength:"1" maxLength:"50" doc:"airflow, dagster, prefect, dbt or any lower-case name (a-z 0-9 _ . -)"`
	Pipeline     string         `json:"pipeline" minLength:"1" maxLength:"200" doc:"The pipeline, DAG or job"`
	RunID        string         `json:"run_id" minLength:"1" maxLength:"200" doc:"The orchestrator's run id; a later report of the same run replaces it"`
	Status       string         `json:"status" enum:"running,success,failed,aborted"`
	StartedAt    *time.Time     `json:"started_at" doc:"RFC 3339"`
	EndedAt      *time.Time     `json:"ended_at,omitempty" doc:"RFC 3339; not before started_at"`
	Inputs       []RunDatasetIn `json:"inputs,omitempty" maxItems:"100" doc:"Datasets the run read"`
	Outputs      []RunDatasetIn `json:"outputs,omitempty" maxItems:"100" doc:"Datasets the run wrote"`
	Facets       map[string]any `json:"facets,omitempty" doc:"OpenLineage run facets, kept as sent (up to 64 KiB)"`
}

// RunDatasetIn names a dataset by Vigia id, or by OpenLineage namespace and name.
type RunDatasetIn struct {
	DatasetID string `json:"dataset_id,omitempty" maxLength:"64"`
	Namespace string `json:"namespace,omitempty" maxLength:"500" doc:"OpenLineage namespace, e.g. postgres://host:5432"`
	Name      string `json:"name,omitempty" maxLength:"500" doc:"OpenLineage name, e.g. database.schema.table"`
}

// OrchestratorRunOut is a recorded run.
type OrchestratorRunOut struct {
	ID           string         `json:"id"`
	Orchestrator string         `json:"orchestrator"`
	Pipeline     string         `json:"pipeline"`
	RunID        string         `json:"run_id"`
	Status       string         `json:"status" enum:"running,success,failed,aborted"`
	StartedAt    time.Time      `json:"started_at"`
	EndedAt      *time.Time     `json:"ended_at"`
	Inputs       []string       `json:"inputs" doc:"Dataset ids the run read"`
	Outputs      []string       `json:"outputs" doc:"Dataset ids the run wrote"`
	Unmatched    []string       `json:"unmatched" doc:"namespace/name of the datasets that named no dataset of the workspace"`
	Facets       map[string]any `json:"facets" doc:"The run facets as reported; {} when none"`
	ReceivedAt   time.Time      `json:"received_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	NextScans    []NextScanOut  `json:"next_scans" doc:"Per dataset the run wrote, the first scan that profiled it after the run ended (absent until one did)"`
}

// NextScanOut is the scan that saw what a run wrote.
type NextScanOut struct {
	DatasetID  string    `json:"dataset_id"`
	ScanID     string    `json:"scan_id"`
	ProfiledAt time.Time `json:"profiled_at"`
}

// PipelineHealthOut is the sync health of the pipelines writing a dataset.
type PipelineHealthOut struct {
	DatasetID string              `json:"dataset_id"`
	Status    string              `json:"status" enum:"failing,late,healthy,not_monitored" doc:"The worst of the pipelines'; not_monitored when no reported run wrote the dataset"`
	Pipelines []PipelineWriterOut `json:"pipelines"`
}

// PipelineWriterOut is one pipeline writing the dataset.
type PipelineWriterOut struct {
	Orchestrator        string              `json:"orchestrator"`
	Pipeline            string              `json:"pipeline"`
	Status              string              `json:"status" enum:"failing,late,healthy"`
	LastRun             OrchestratorRunOut  `json:"last_run"`
	FailingRun          *OrchestratorRunOut `json:"failing_run" doc:"The latest failed or aborted run while the pipeline is failing"`
	LastSuccessAt       *time.Time          `json:"last_success_at"`
	LastFailureAt       *time.Time          `json:"last_failure_at"`
	ConsecutiveFailures int                 `json:"consecutive_failures"`
	CadenceSeconds      *int64              `json:"cadence_seconds" doc:"Median interval between run starts, learned once three runs were seen"`
	ExpectedBy          *time.Time          `json:"expected_by" doc:"When the next run is due before the pipeline counts as late (1.5 cadences after the last start)"`
	Runs                int                 `json:"runs" doc:"Runs read (the latest 50)"`
}

func (s *Server) orchestratorRoutes() {
	s.register(operation{ID: "recordOrchestratorRun", Method: http.MethodPost, Path: "/api/v1/orchestrator-runs", Tag: "orchestrators",
		TokenWrite: true, Status: http.StatusCreated, Body: OrchestratorRunIn{}, Response: OrchestratorRunOut{},
		Summary: "Record a pipeline run (a marked write: API tokens may call it)",
		Desc: "A run of Airflow, Dagster, Prefect, dbt or anything that can POST, with the datasets it read and wrote, " +
			"named by Vigia id or by the OpenLineage naming (namespace postgres://host:port, name database.schema.table; see " +
			"POST /lineage/openlineage). A dataset id of no dataset of the workspace answers 404; OpenLineage names that match " +
			"nothing are listed in unmatched. A later report of the same orchestrator, pipeline and run id replaces the run (200).",
		Also: map[int]alsoAnswer{http.StatusOK: {Desc: "The run was already recorded and was replaced", Body: OrchestratorRunOut{}}}},
		s.handleRunRecord)
	s.register(operation{ID: "listOrchestratorRuns", Method: http.MethodGet, Path: "/api/v1/orchestrator-runs", Tag: "orchestrators",
		List: true, ListDefault: orchestrator.RunPageDefault, Summary: "Recorded pipeline runs, newest first", Response: []OrchestratorRunOut{},
		Params: []param{
			{Name: "orchestrator", In: "query", Type: "string", MaxLen: 50},
			{Name: "pipeline", In: "query", Type: "string", MaxLen: 200},
			{Name: "status", In: "query", Type: "string", Enum: orchestrator.Statuses},
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64, Desc: "Runs that read or wrote the dataset"},
			{Name: "scan_id", In: "query", Type: "string", MaxLen: 64, Desc: "Runs whose written datasets the scan profiled next: the runs that changed what it saw"},
		}}, s.handleRunList)
	s.register(operation{ID: "datasetPipelineHealth", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/pipeline-health",
		Tag: "datasets", Params: []param{datasetIDParam}, Response: PipelineHealthOut{},
		Summary: "Sync health of the pipelines writing the dataset; not_monitored without reported runs",
		Desc: "Per pipeline that wrote the dataset (from POST /orchestrator-runs): last success and failure, consecutive " +
			"failures, the cadence learned from its runs and a status: failing when its latest finished run failed, late " +
			"when no run started within 1.5 cadences of the last, else healthy. Past a threshold (3 consecutive failures, or no run " +
			"within 2 cadences) a writer opens a pipeline issue (subtype failing or late) on the dataset, resolved by its next " +
			"successful run."}, s.handlePipelineHealth)
}

func toRunOut(r orchestrator.Run) OrchestratorRunOut {
	out := OrchestratorRunOut{ID: r.ID, Orchestrator: r.Orchestrator, Pipeline: r.Pipeline, RunID: r.RunID, Status: r.Status,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, Inputs: r.Inputs, Outputs: r.Outputs, Unmatched: r.Unmatched,
		ReceivedAt: r.ReceivedAt, UpdatedAt: r.UpdatedAt, NextScans: []NextScanOut{}}
	for _, n := range r.NextScans {
		out.NextScans = append(out.NextScans, NextScanOut{DatasetID: n.DatasetID, ScanID: n.ScanID, ProfiledAt: n.ProfiledAt})
	}
	for _, l := range []*[]string{&out.Inputs, &out.Outputs, &out.Unmatched} {
		if *l == nil {
			*l = []string{}
		}
	}
	if len(r.Facets) > 0 {
		_ = json.Unmarshal(r.Facets, &out.Facets)
	}
	if out.Facets == nil {
		out.Facets = map[string]any{}
	}
	return out
}

func (s *Server) handleRunRecord(w http.ResponseWriter, r *http.Request, in *input) {
	var body struct {
		OrchestratorRunIn
		Facets json.RawMessage `json:"facets,omitempty"`
	}
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	run := orchestrator.RunInput{Orchestrator: body.Orchestrator, Pipeline: body.Pipeline, RunID: body.RunID, Status: body.Status,
		StartedAt: body.StartedAt, EndedAt: body.EndedAt, Facets: body.Facets}
	if string(body.Facets) == "null" {
		run.Facets = nil
	}
	for _, d := range body.Inputs {
		run.Inputs = append(run.Inputs, orchestrator.DatasetRef{DatasetID: d.DatasetID, Namespace: d.Namespace, Name: d.Name})
	}
	for _, d := range body.Outputs {
		run.Outputs = append(run.Outputs, orchestrator.DatasetRef{DatasetID: d.DatasetID, Namespace: d.Namespace, Name: d.Name})
	}
	got, created, err := s.deps.Orchestrators.RecordRun(r.Context(), run)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toRunOut(got))
}

func (s *Server) handleRunList(w http.ResponseWriter, r *http.Request, in *input) {
	l, err := s.deps.Orchestrators.Runs(r.Context(), orchestrator.RunFilter{Orchestrator: in.String("orchestrator"),
		Pipeline: in.String("pipeline"), Status: in.String("status"), DatasetID: in.String("dataset_id"), ScanID: in.String("scan_id"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]OrchestratorRunOut, 0, len(l.Items))
	for _, run := range l.Items {
		out = append(out, toRunOut(run))
	}
	list(w, l.Total, out)
}

func (s *Server) handlePipelineHealth(w http.ResponseWriter, r *http.Request, in *input) {
	h, err := s.deps.Orchestrators.PipelineHealth(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any {
		out := PipelineHealthOut{DatasetID: h.DatasetID, Status: h.Status, Pipelines: []PipelineWriterOut{}}
		for _, p := range h.Pipelines {
			po := PipelineWriterOut{Orchestrator: p.Orchestrator, Pipeline: p.Pipeline, Status: p.Status, LastRun: toRunOut(p.LastRun),
				LastSuccessAt: p.LastSuccessAt, LastFailureAt: p.LastFailureAt, ConsecutiveFailures: p.ConsecutiveFailures,
				ExpectedBy: p.ExpectedBy, Runs: p.Runs}
			if p.FailingRun != nil {
				f := toRunOut(*p.FailingRun)
				po.FailingRun = &f
			}
			if p.Cadence != nil {
				sec := int64(p.Cadence.Seconds())
				po.CadenceSeconds = &sec
			}
			out.Pipelines = append(out.Pipelines, po)
		}
		return out
	})
}
