package graph

import (
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/graph/model"
)

func toBIRefresh(r bi.Refresh) model.BIRefresh {
	out := model.BIRefresh{ID: r.ID, Tool: r.Tool, BiDatasetID: r.BIDatasetID, BiDatasetName: r.BIDatasetName, RefreshID: r.RefreshID,
		Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Datasets: nonNil(r.Inputs), Unmatched: nonNil(r.Unmatched),
		Dashboards: make([]model.BIDashboard, 0, len(r.Dashboards)), ReceivedAt: r.ReceivedAt, UpdatedAt: r.UpdatedAt}
	for _, d := range r.Dashboards {
		out.Dashboards = append(out.Dashboards, model.BIDashboard{ID: optString(d.ID), Name: d.Name, URL: optString(d.URL)})
	}
	return out
}
