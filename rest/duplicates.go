package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/duplicates"
)

// DuplicateService is what the transport needs of duplicate clusters.
type DuplicateService interface {
	List(ctx context.Context, f duplicates.Filter, page vigia.Page) (vigia.List[duplicates.StoredCluster], error)
}

// DuplicateMemberOut is a record of a cluster: its dataset and row key, never other values.
type DuplicateMemberOut struct {
	DatasetID    string  `json:"dataset_id"`
	ConnectionID string  `json:"connection_id" doc:"The connection of the member's dataset"`
	DatasetName  string  `json:"dataset_name"`
	RowKey       string  `json:"row_key" doc:"The row's key: the value of a one-column key, or the JSON array of a composite key's values"`
	Confidence   float64 `json:"confidence" doc:"The member's best match in the cluster: 1 only for an exact match"`
	Exact        bool    `json:"exact"`
}

// DuplicateClusterOut is a cluster of records of one entity.
type DuplicateClusterOut struct {
	ID                 string               `json:"id"`
	ConnectionID       *string              `json:"connection_id" doc:"The connection of a cluster within one connection; null for a cluster across connections (scope workspace)"`
	Scope              string               `json:"scope" enum:"connection,workspace" doc:"connection: members of one connection, compared on their values; workspace: members of two connections or more, compared on keyed hashes only"`
	ConnectionIDs      []string             `json:"connection_ids" doc:"The connections of the listed members' datasets"`
	Confidence         float64              `json:"confidence" doc:"The weakest link holding the cluster together: 1 only when every link is an exact match, below 1 for fuzzy ones"`
	ConfidenceBand     string               `json:"confidence_band" enum:"exact,high,low"`
	ReferencePrecision *float64             `json:"reference_precision" doc:"Precision of the band measured on Vigia's labelled reference set (docs/duplicates.md)"`
	MatchedOn          []string             `json:"matched_on" doc:"The fields the links compared: nif, email, phone, name"`
	Size               int                  `json:"size" doc:"Members the caller can see"`
	Members            []DuplicateMemberOut `json:"members"`
	ComputedAt         time.Time            `json:"computed_at"`
}

func (s *Server) duplicateRoutes() {
	s.register(operation{ID: "listDuplicates", Method: http.MethodGet, Path: "/api/v1/duplicates", Tag: "duplicates",
		List: true, ListDefault: duplicates.PageDefault, Summary: "Clusters of duplicate records among the datasets the caller can see, strongest first",
		Desc: "Computed after each scan of a connection from its tables' identifying columns (NIF, e-mail, phone, name): blocking keys " +
			"normalized in the source, fuzzy comparison of the candidate pairs. Within a connection (scope connection) the values are compared; " +
			"across the workspace's connections (scope workspace, connection_id null) only keyed hashes of the normalized keys and fields. " +
			"Members name datasets and row keys only. A cluster with fewer than two members the caller can see is not listed.",
		Params: []param{{Name: "dataset_id", In: "query", Type: "string", MaxLen: 64},
			{Name: "band", In: "query", Type: "string", Enum: duplicates.Bands()}},
		Errors:   map[int]string{http.StatusNotFound: "not_found: dataset_id names a dataset of another workspace or one the caller cannot see"},
		Response: []DuplicateClusterOut{}}, s.handleDuplicateList)
}

// DuplicateClusterOf is the transport shape of a cluster.
func DuplicateClusterOf(c duplicates.StoredCluster) DuplicateClusterOut {
	out := DuplicateClusterOut{ID: c.ID, ConnectionID: c.ConnectionID, Scope: c.Scope, ConnectionIDs: c.ConnectionIDs, Confidence: c.Confidence, ConfidenceBand: c.Band,
		ReferencePrecision: c.ReferencePrecision, MatchedOn: c.MatchedOn, Size: len(c.Members), ComputedAt: c.ComputedAt,
		Members: make([]DuplicateMemberOut, 0, len(c.Members))}
	if out.MatchedOn == nil {
		out.MatchedOn = []string{}
	}
	if out.ConnectionIDs == nil {
		out.ConnectionIDs = []string{}
	}
	for _, m := range c.Members {
		out.Members = append(out.Members, DuplicateMemberOut{DatasetID: m.DatasetID, ConnectionID: m.ConnectionID, DatasetName: m.DatasetName, RowKey: m.RowKey,
			Confidence: m.Confidence, Exact: m.Confidence == 1})
	}
	return out
}

func (s *Server) handleDuplicateList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Duplicates.List(r.Context(), duplicates.Filter{DatasetID: in.String("dataset_id"), Band: in.String("band")}, in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DuplicateClusterOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, DuplicateClusterOf(c))
	}
	list(w, res.Total, out)
}
