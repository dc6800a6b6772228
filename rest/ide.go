package rest

import (
	"net/http"

	"github.com/vigia-data/vigia/ide"
)

// IDEResolveOut is a table reference resolved for an editor.
type IDEResolveOut struct {
	DatasetID      string        `json:"dataset_id"`
	Name           string        `json:"name" doc:"schema.table"`
	Schema         string        `json:"schema"`
	Table          string        `json:"table"`
	Kind           string        `json:"kind"`
	ConnectionID   string        `json:"connection_id"`
	ConnectionName string        `json:"connection_name"`
	Verdict        string        `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score          *float64      `json:"score"`
	Decision       string        `json:"decision" enum:"trusted,caution,untrusted,unknown" doc:"Trust decision for the default purpose (agente)"`
	Reasons        []string      `json:"reasons" doc:"Codes of the decision's reasons"`
	Owner          *string       `json:"owner" doc:"Owner of the dataset's domain"`
	PIIColumns     []string      `json:"pii_columns" doc:"Names only"`
	OtherMatches   []IDEMatchOut `json:"other_matches" doc:"Other datasets the reference may name (other connections), the hinted connection first"`
}

// IDEMatchOut is another dataset a reference may name.
type IDEMatchOut struct {
	DatasetID      string `json:"dataset_id"`
	ConnectionID   string `json:"connection_id"`
	ConnectionName string `json:"connection_name"`
	Schema         string `json:"schema"`
	Table          string `json:"table"`
}

// IDEColumnOut is a column's metadata for an editor: never a value.
type IDEColumnOut struct {
	Name              string   `json:"name"`
	Position          int      `json:"position"`
	DataType          string   `json:"data_type"`
	Class             string   `json:"class"`
	Nullable          bool     `json:"nullable"`
	PrimaryKey        bool     `json:"primary_key"`
	SemanticType      *string  `json:"semantic_type"`
	Sensitivity       *string  `json:"sensitivity" enum:"pii" doc:"pii when detected from values or the name (origin auto); null when not classified"`
	Profiled          bool     `json:"profiled"`
	NullCount         *int64   `json:"null_count"`
	NullRate          *float64 `json:"null_rate"`
	Distinct          *float64 `json:"distinct"`
	DistinctEstimated bool     `json:"distinct_estimated"`
}

func (s *Server) ideRoutes() {
	s.register(operation{ID: "ideResolve", Method: http.MethodGet, Path: "/api/v1/ide/resolve", Tag: "ide",
		Summary: "Resolve a table reference as written in SQL to its dataset (editor metadata only)",
		Desc: "name is schema.table or table, optionally after a database; identifiers in double quotes (or backquotes) " +
			"match exactly, bare ones ignoring case. connection (a connection's name or id) picks among datasets of the same " +
			"name. 404 when no dataset the caller sees matches.",
		Params: []param{
			{Name: "name", In: "query", Type: "string", Required: true, MaxLen: ide.MaxName},
			{Name: "connection", In: "query", Type: "string", MaxLen: ide.MaxHint, Desc: "Connection name or id to prefer"},
		}, Response: IDEResolveOut{}, Errors: map[int]string{http.StatusNotFound: "No dataset the caller sees matches (not_found)"}},
		s.handleIDEResolve)
	s.register(operation{ID: "ideDatasetColumns", Method: http.MethodGet, Path: "/api/v1/ide/datasets/{dataset_id}/columns", Tag: "ide",
		Summary: "A dataset's columns with types, semantic types, sensitivity and null/distinct figures (never values)",
		Params:  []param{datasetIDParam}, Response: []IDEColumnOut{}}, s.handleIDEColumns)
}

func (s *Server) handleIDEResolve(w http.ResponseWriter, r *http.Request, in *input) {
	name := ""
	if v := in.String("name"); v != nil {
		name = *v
	}
	res, err := s.deps.IDE.Resolve(r.Context(), name, in.String("connection"))
	s.reply(w, r, err, func() any {
		d, b := res.Dataset, res.Brief
		out := IDEResolveOut{DatasetID: d.ID, Name: d.Schema + "." + d.Table, Schema: d.Schema, Table: d.Table, Kind: d.Kind,
			ConnectionID: d.ConnectionID, ConnectionName: d.ConnectionName, Verdict: b.Decision.Verdict, Score: b.Score,
			Decision: b.Decision.Decision, Reasons: []string{}, Owner: b.Owner, PIIColumns: b.PII, OtherMatches: []IDEMatchOut{}}
		if out.PIIColumns == nil {
			out.PIIColumns = []string{}
		}
		for _, rs := range b.Decision.Reasons {
			out.Reasons = append(out.Reasons, rs.Code)
		}
		for _, o := range res.Others {
			out.OtherMatches = append(out.OtherMatches, IDEMatchOut{DatasetID: o.ID, ConnectionID: o.ConnectionID,
				ConnectionName: o.ConnectionName, Schema: o.Schema, Table: o.Table})
		}
		return out
	})
}

func (s *Server) handleIDEColumns(w http.ResponseWriter, r *http.Request, in *input) {
	cols, err := s.deps.IDE.Columns(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any {
		out := make([]IDEColumnOut, 0, len(cols))
		for _, c := range cols {
			out = append(out, IDEColumnOut{Name: c.Name, Position: c.Position, DataType: c.DataType, Class: c.Class, Nullable: c.Nullable,
				PrimaryKey: c.PrimaryKey, SemanticType: c.SemanticType, Sensitivity: c.Sensitivity, Profiled: c.Profiled,
				NullCount: c.NullCount, NullRate: c.NullRate, Distinct: c.Distinct, DistinctEstimated: c.DistinctEstim})
		}
		return out
	})
}
