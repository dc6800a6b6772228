package ingest

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// DBTManifest is the part of a dbt manifest.json lineage reads. Column lineage, which
// dbt does not record itself, is read where a tool put it in a column's meta:
// columns.<c>.meta.lineage = [{node: <unique_id>, column: <c>}].
type DBTManifest struct {
	Metadata struct {
		ProjectName string `json:"project_name"`
	} `json:"metadata"`
	Nodes     map[string]DBTNode     `json:"nodes"`
	Sources   map[string]DBTNode     `json:"sources"`
	Exposures map[string]DBTExposure `json:"exposures"`
}

// DBTExposure is a dbt exposure.
type DBTExposure struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	Type  string `json:"type"`
	URL   string `json:"url"`
	Owner struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"owner"`
	DependsOn struct {
		Nodes []string `json:"nodes"`
	} `json:"depends_on"`
}

// DBTNode is a model, seed, snapshot, test … or a source of a manifest.
type DBTNode struct {
	ResourceType string `json:"resource_type"`
	Schema       string `json:"schema"`
	Name         string `json:"name"`
	Alias        string `json:"alias"`
	Identifier   string `json:"identifier"`
	DependsOn    struct {
		Nodes []string `json:"nodes"`
	} `json:"depends_on"`
	Columns map[string]DBTColumn `json:"columns"`
	// A test's node: what it tests. TestMetadata is set for generic tests (not_null,
	// unique, accepted_values, relationships, a package's test); AttachedNode (dbt 1.5+)
	// names the tested model, else it is the first model, seed, snapshot or source it
	// depends on; ColumnName (older manifests) or kwargs.column_name the tested column.
	TestMetadata *struct {
		Name      string         `json:"name"`
		Namespace *string        `json:"namespace"`
		Kwargs    map[string]any `json:"kwargs"`
	} `json:"test_metadata"`
	AttachedNode string `json:"attached_node"`
	ColumnName   string `json:"column_name"`
}

// DBTColumn is a node's column; Lineage is the column lineage a tool put in its meta.
type DBTColumn struct {
	Meta struct {
		Lineage []struct {
			Node   string `json:"node"`
			Column string `json:"column"`
		} `json:"lineage"`
	} `json:"meta"`
}

// Relation is the schema.table the node is built as (its alias, else its identifier,
// else its name).
func (n DBTNode) Relation() string {
	name := n.Name
	if n.Identifier != "" {
		name = n.Identifier
	}
	if n.Alias != "" {
		name = n.Alias
	}
	return n.Schema + "." + name
}

// DecodeDBTManifest reads a manifest. Returns KindTooLarge over MaxImportBytes,
// KindInvalid (loc "manifest") for a body that is not a manifest (no nodes and no
// sources).
func DecodeDBTManifest(manifest []byte) (DBTManifest, error) {
	if len(manifest) > MaxImportBytes {
		return DBTManifest{}, tooLarge()
	}
	var m DBTManifest
	if err := json.Unmarshal(manifest, &m); err != nil || (m.Nodes == nil && m.Sources == nil) {
		return DBTManifest{}, vigia.Invalid(vigia.Field("value_error", nil, "manifest"))
	}
	return m, nil
}

// DBTRun is what a dbt run_results.json tells: its invocation and how many results
// ended in each status (a status longer than 32 bytes counts as "other").
type DBTRun struct {
	InvocationID string
	Results      int
	ByStatus     map[string]int
	// Tests are the results of tests (unique_id test.…), in the file's order.
	Tests []DBTTestResult
	// Models are the results of models (unique_id model.…, seed.…, snapshot.…) with
	// their timings, in the file's order.
	Models []DBTModelResult
}

// DBTModelResult is one model's result: its status (success, error, skipped) and when
// it ran: the earliest start and latest completion of its timing entries, else the
// file's generated_at less execution_time. StartedAt is zero when neither is known.
type DBTModelResult struct {
	UniqueID  string
	Status    string
	StartedAt time.Time
	EndedAt   *time.Time
}

// DBTTestResult is one test's result: its status (pass, fail, warn, error, skipped)
// and the count of failing rows dbt reported (nil when none).
type DBTTestResult struct {
	UniqueID string
	Status   string
	Failures *int64
}

// MaxDBTUniqueID bounds a test's unique_id; a longer one is not kept.
const MaxDBTUniqueID = 512

// DecodeDBTRunResults reads a run_results.json. Returns KindInvalid (loc
// "run_results") for a body that is none (missing, not JSON, without results).
func DecodeDBTRunResults(runResults []byte) (DBTRun, error) {
	var rr struct {
		Metadata struct {
			InvocationID string `json:"invocation_id"`
			GeneratedAt  string `json:"generated_at"`
		} `json:"metadata"`
		Results []struct {
			UniqueID string   `json:"unique_id"`
			Status   string   `json:"status"`
			Failures *float64 `json:"failures"`
			Timing   []struct {
				StartedAt   string `json:"started_at"`
				CompletedAt string `json:"completed_at"`
			} `json:"timing"`
			ExecutionTime float64 `json:"execution_time"`
		} `json:"results"`
	}
	if len(runResults) == 0 || json.Unmarshal(runResults, &rr) != nil || rr.Results == nil {
		return DBTRun{}, vigia.Invalid(vigia.Field("value_error", nil, "run_results"))
	}
	out := DBTRun{InvocationID: rr.Metadata.InvocationID, Results: len(rr.Results), ByStatus: map[string]int{}}
	for _, r := range rr.Results {
		st := r.Status
		if len(st) > 32 {
			st = "other"
		}
		out.ByStatus[st]++
		if strings.HasPrefix(r.UniqueID, "test.") && len(r.UniqueID) <= MaxDBTUniqueID && len(r.Status) <= 32 {
			t := DBTTestResult{UniqueID: r.UniqueID, Status: r.Status}
			if r.Failures != nil && *r.Failures >= 0 && *r.Failures < 1<<53 {
				n := int64(*r.Failures)
				t.Failures = &n
			}
			out.Tests = append(out.Tests, t)
		}
		if isDBTModel(r.UniqueID) && len(r.UniqueID) <= MaxDBTUniqueID && len(r.Status) <= 32 {
			m := DBTModelResult{UniqueID: r.UniqueID, Status: r.Status}
			for _, tm := range r.Timing {
				if st, ok := dbtTime(tm.StartedAt); ok && (m.StartedAt.IsZero() || st.Before(m.StartedAt)) {
					m.StartedAt = st
				}
				if ct, ok := dbtTime(tm.CompletedAt); ok && (m.EndedAt == nil || ct.After(*m.EndedAt)) {
					m.EndedAt = &ct
				}
			}
			if gen, ok := dbtTime(rr.Metadata.GeneratedAt); ok && m.StartedAt.IsZero() && r.ExecutionTime >= 0 && r.ExecutionTime < 1e7 {
				e := gen
				m.StartedAt, m.EndedAt = e.Add(-time.Duration(r.ExecutionTime*float64(time.Second))), &e
			}
			if m.EndedAt != nil && m.EndedAt.Before(m.StartedAt) {
				m.EndedAt = nil
			}
			out.Models = append(out.Models, m)
		}
	}
	return out, nil
}

// dbtTime reads a timestamp of run_results.json (RFC 3339; dbt writes microseconds and
// Z, older versions no zone, read as UTC).
func dbtTime(v string) (time.Time, bool) {
	if v == "" || len(v) > 64 {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", v); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// isDBTModel tells the results of nodes that build a relation: models, seeds, snapshots.
func isDBTModel(uid string) bool {
	return strings.HasPrefix(uid, "model.") || strings.HasPrefix(uid, "seed.") || strings.HasPrefix(uid, "snapshot.")
}
