package rest

import (
	"net/http"
	"time"

	"github.com/vigia-data/vigia/sensitivity"
)

// SensitivityOut is a dataset's column sensitivity.
type SensitivityOut struct {
	DatasetID string                 `json:"dataset_id"`
	Columns   []ColumnSensitivityOut `json:"columns"`
	Trail     []SensitivityChangeOut `json:"trail" doc:"Every manual change, oldest first"`
}

// ColumnSensitivityOut is one column's sensitivity.
type ColumnSensitivityOut struct {
	Column     string                 `json:"column"`
	Level      string                 `json:"level" enum:"public,internal,confidential,pii"`
	Origin     string                 `json:"origin" enum:"auto,manual"`
	Reason     *string                `json:"reason" doc:"Why the automatic level: semantic:<type> (values detected as personal data), name, or default; null for a manual level"`
	Author     *string                `json:"author" doc:"Who set the manual level (user id); null when automatic"`
	SetAt      *time.Time             `json:"set_at" doc:"When the manual level was set; null when automatic"`
	Suggestion *SensitivitySuggestion `json:"suggestion" doc:"Lineage-inherited proposal for an automatic level: pii when the column is derived from a PII column; null otherwise"`
}

// SensitivitySuggestion is a lineage-inherited proposal.
type SensitivitySuggestion struct {
	Level  string                 `json:"level" enum:"pii"`
	Origin string                 `json:"origin" enum:"lineage"`
	From   []SensitivitySourceOut `json:"from"`
}

// SensitivitySourceOut is an upstream column a suggestion comes from.
type SensitivitySourceOut struct {
	DatasetID  *string `json:"dataset_id" doc:"null when the caller cannot see the upstream dataset"`
	Column     *string `json:"column"`
	Level      string  `json:"level" enum:"public,internal,confidential,pii"`
	Restricted bool    `json:"restricted"`
}

// SensitivityChangeOut is one entry of the trail.
type SensitivityChangeOut struct {
	Column string    `json:"column"`
	From   *string   `json:"from" doc:"The manual level before; null when the automatic level was in force"`
	To     string    `json:"to" enum:"public,internal,confidential,pii,auto"`
	Author string    `json:"author" doc:"User id of the session that made the change"`
	At     time.Time `json:"at"`
}

// SensitivityIn sets a column's level.
type SensitivityIn struct {
	Level string `json:"level" enum:"public,internal,confidential,pii,auto" doc:"auto removes the manual level"`
}

func (s *Server) sensitivityRoutes() {
	s.register(operation{ID: "datasetSensitivity", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/sensitivity",
		Tag: "datasets", Params: []param{datasetIDParam}, Response: SensitivityOut{},
		Summary: "Per column public, internal, confidential or pii; origin auto or manual; author and date; lineage-inherited suggestions; trail",
		Desc: "Automatic levels come from the semantic types detected in the last profile (personal-data types: pii) and " +
			"the column names (personal data: pii; secrets and pay: confidential), else internal. A session may set a level " +
			"(PUT …/sensitivity/{column}); the trail keeps every change with its author and date. A column derived through " +
			"lineage (view SQL, dbt, OpenLineage or declared column maps) from a PII column gets a pii suggestion while its level " +
			"is automatic and not pii."}, s.handleSensitivity)
	s.register(operation{ID: "setColumnSensitivity", Method: http.MethodPut, Path: "/api/v1/datasets/{dataset_id}/sensitivity/{column_name}",
		Tag: "datasets", Body: SensitivityIn{}, Response: SensitivityOut{},
		Params:  []param{datasetIDParam, {Name: "column_name", In: "path", Type: "string", Required: true, MaxLen: 200}},
		Summary: "Set a column's sensitivity by hand, or back to auto (member or admin session)",
		Desc:    "The change goes into the trail with its author and date; setting the level already in force adds nothing. 404 for a column the dataset does not have."},
		s.handleSensitivitySet)
}

func toSensitivityOut(r sensitivity.Report) SensitivityOut {
	out := SensitivityOut{DatasetID: r.DatasetID, Columns: []ColumnSensitivityOut{}, Trail: []SensitivityChangeOut{}}
	for _, c := range r.Columns {
		co := ColumnSensitivityOut{Column: c.Name, Level: c.Level, Origin: c.Origin, Reason: optStr(c.Reason), Author: c.AuthorID, SetAt: c.At}
		if sg := c.Suggestion; sg != nil {
			so := &SensitivitySuggestion{Level: sg.Level, Origin: "lineage", From: []SensitivitySourceOut{}}
			for _, f := range sg.From {
				so.From = append(so.From, SensitivitySourceOut{DatasetID: optStr(f.DatasetID), Column: optStr(f.Column), Level: f.Level, Restricted: f.Restricted})
			}
			co.Suggestion = so
		}
		out.Columns = append(out.Columns, co)
	}
	for _, t := range r.Trail {
		out.Trail = append(out.Trail, SensitivityChangeOut{Column: t.Column, From: t.From, To: t.To, Author: t.AuthorID, At: t.At})
	}
	return out
}

func (s *Server) handleSensitivity(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.Sensitivity.Dataset(r.Context(), in.Path("dataset_id"))
	s.reply(w, r, err, func() any { return toSensitivityOut(rep) })
}

func (s *Server) handleSensitivitySet(w http.ResponseWriter, r *http.Request, in *input) {
	var body SensitivityIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	rep, err := s.deps.Sensitivity.Set(r.Context(), in.Path("dataset_id"), in.Path("column_name"), body.Level)
	s.reply(w, r, err, func() any { return toSensitivityOut(rep) })
}
