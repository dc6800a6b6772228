package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/orchestrator"
)

// BIRefreshIn reports one refresh of a BI tool's dataset.
type BIRefreshIn struct {
	Tool          string           `json:"tool" enum:"powerbi,tableau,looker,metabase,other"`
	BIDatasetID   string           `json:"bi_dataset_id" minLength:"1" maxLength:"200" doc:"The BI tool's id of the dataset (semantic model, data source, explore)"`
	BIDatasetName string           `json:"bi_dataset_name" minLength:"1" maxLength:"200"`
	RefreshID     string           `json:"refresh_id" minLength:"1" maxLength:"200" doc:"The tool's id of the refresh; a later report of the same refresh replaces it"`
	Status        string           `json:"status" enum:"running,success,failed"`
	StartedAt     *time.Time       `json:"started_at" doc:"RFC 3339"`
	EndedAt       *time.Time       `json:"ended_at,omitempty" doc:"RFC 3339; not before started_at"`
	Datasets      []RunDatasetIn   `json:"datasets,omitempty" maxItems:"100" doc:"The warehouse datasets the BI dataset reads, by Vigia id or OpenLineage naming; the first known one carries its bi_refresh issue"`
	Dashboards    []BIDashboardOut `json:"dashboards,omitempty" maxItems:"100" doc:"Dashboards (reports, workbooks, looks) built on the BI dataset; they become lineage exposures of its datasets"`
}

// BIDashboardOut is a dashboard built on a BI dataset.
type BIDashboardOut struct {
	ID   string `json:"id,omitempty" maxLength:"200"`
	Name string `json:"name" minLength:"1" maxLength:"200"`
	URL  string `json:"url,omitempty" maxLength:"2000" doc:"http or https"`
}

// BIRefreshOut is a recorded refresh.
type BIRefreshOut struct {
	ID            string           `json:"id"`
	Tool          string           `json:"tool" enum:"powerbi,tableau,looker,metabase,other"`
	BIDatasetID   string           `json:"bi_dataset_id"`
	BIDatasetName string           `json:"bi_dataset_name"`
	RefreshID     string           `json:"refresh_id"`
	Status        string           `json:"status" enum:"running,success,failed"`
	StartedAt     time.Time        `json:"started_at"`
	EndedAt       *time.Time       `json:"ended_at"`
	Datasets      []string         `json:"datasets" doc:"Dataset ids the BI dataset reads (those the caller sees), in the report's order"`
	Unmatched     []string         `json:"unmatched" doc:"namespace/name of the datasets that named no dataset of the workspace"`
	Dashboards    []BIDashboardOut `json:"dashboards"`
	ReceivedAt    time.Time        `json:"received_at"`
	UpdatedAt     time.Time        `json:"updated_at"`
}

func (s *Server) biRoutes() {
	s.register(operation{ID: "recordBIRefresh", Method: http.MethodPost, Path: "/api/v1/bi/refreshes", Tag: "bi",
		TokenWrite: true, Status: http.StatusCreated, Body: BIRefreshIn{}, Response: BIRefreshOut{},
		Summary: "Record a refresh of a BI tool's dataset (a marked write, as orchestrator runs: API tokens may call it)",
		Desc: "A refresh of a Power BI, Tableau, Looker or Metabase dataset (or other), with the warehouse datasets it reads " +
			"(Vigia id or OpenLineage naming, as POST /orchestrator-runs) and the dashboards on it, which become lineage exposures " +
			"of those datasets (declared edges, replaced by every report of the BI dataset). A failed refresh opens the BI dataset's " +
			"one bi_refresh issue (subtype failed, critical) on the first dataset it reads; a refresh missing past 1.5 times the " +
			"cadence learned from the BI dataset's refreshes (three refreshes or more; checked on every report and every minute) " +
			"opens it as delayed (warning); details carry bi_dataset_id, bi_dataset_name and dashboards. The issue is updated, " +
			"never duplicated, and resolved by the next successful refresh. A later report of the same tool, BI dataset and " +
			"refresh id replaces it (200). A dataset id of no dataset of the workspace answers 404.",
		Also: map[int]alsoAnswer{http.StatusOK: {Desc: "The refresh was already recorded and was replaced", Body: BIRefreshOut{}}}},
		s.handleBIRefreshRecord)
	s.register(operation{ID: "listBIRefreshes", Method: http.MethodGet, Path: "/api/v1/bi/refreshes", Tag: "bi",
		List: true, ListDefault: bi.RefreshPageDefault, Summary: "Recorded BI refreshes, newest first", Response: []BIRefreshOut{},
		Params: []param{
			{Name: "tool", In: "query", Type: "string", Enum: bi.Tools},
			{Name: "bi_dataset_id", In: "query", Type: "string", MaxLen: 200},
			{Name: "status", In: "query", Type: "string", Enum: bi.Statuses},
			{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64, Desc: "Refreshes of BI datasets reading the dataset"},
		}}, s.handleBIRefreshList)
}

func toBIRefreshOut(r bi.Refresh) BIRefreshOut {
	out := BIRefreshOut{ID: r.ID, Tool: r.Tool, BIDatasetID: r.BIDatasetID, BIDatasetName: r.BIDatasetName, RefreshID: r.RefreshID,
		Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Datasets: r.Inputs, Unmatched: r.Unmatched,
		Dashboards: make([]BIDashboardOut, 0, len(r.Dashboards)), ReceivedAt: r.ReceivedAt, UpdatedAt: r.UpdatedAt}
	for _, d := range r.Dashboards {
		out.Dashboards = append(out.Dashboards, BIDashboardOut{ID: d.ID, Name: d.Name, URL: d.URL})
	}
	for _, l := range []*[]string{&out.Datasets, &out.Unmatched} {
		if *l == nil {
			*l = []string{}
		}
	}
	return out
}

func (s *Server) handleBIRefreshRecord(w http.ResponseWriter, r *http.Request, in *input) {
	var body BIRefreshIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rin := bi.RefreshInput{Tool: body.Tool, BIDatasetID: body.BIDatasetID, BIDatasetName: body.BIDatasetName, RefreshID: body.RefreshID,
		Status: body.Status, StartedAt: body.StartedAt, EndedAt: body.EndedAt}
	for _, d := range body.Datasets {
		rin.Inputs = append(rin.Inputs, orchestrator.DatasetRef{DatasetID: d.DatasetID, Namespace: d.Namespace, Name: d.Name})
	}
	for _, d := range body.Dashboards {
		rin.Dashboards = append(rin.Dashboards, bi.Dashboard{ID: d.ID, Name: d.Name, URL: d.URL})
	}
	got, created, err := s.deps.BI.RecordRefresh(r.Context(), rin)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toBIRefreshOut(got))
}

func (s *Server) handleBIRefreshList(w http.ResponseWriter, r *http.Request, in *input) {
	l, err := s.deps.BI.Refreshes(r.Context(), bi.RefreshFilter{Tool: in.String("tool"), BIDatasetID: in.String("bi_dataset_id"),
		Status: in.String("status"), DatasetID: in.String("dataset_id"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]BIRefreshOut, 0, len(l.Items))
	for _, x := range l.Items {
		out = append(out, toBIRefreshOut(x))
	}
	list(w, l.Total, out)
}
