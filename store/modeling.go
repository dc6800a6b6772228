package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/modeling"
)

// ModelingStore implements modeling.Store.
type ModelingStore struct{ db *DB }

// Modeling returns the store of modeling and slo_breach issues.
func (db *DB) Modeling() *ModelingStore { return &ModelingStore{db: db} }

var _ modeling.Store = (*ModelingStore)(nil)

// ScanDatasets implements modeling.Store: the datasets the scan scored, with their
// columns, the scan's dimensions and their domains' dimension targets.
func (s *ModelingStore) ScanDatasets(ctx context.Context, ws, connectionID, scanID string) ([]modeling.ScanDataset, string, error) {
	q := s.db.q(ctx)
	var kind string
	if err := q.QueryRow(ctx, `SELECT kind FROM connections WHERE id = $1 AND workspace_id = $2`, connectionID, ws).Scan(&kind); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, "", nil // deleted meanwhile
		}
		return nil, "", translate(err)
	}
	rows, err := q.Query(ctx, `SELECT sc.dataset_id::text, sc.detail->'dimensions' FROM scores sc JOIN datasets d ON d.id = sc.dataset_id
		WHERE sc.scan_id = $1 AND sc.workspace_id = $2 AND d.connection_id = $3 AND d.dropped_at IS NULL`, scanID, ws, connectionID)
	if err != nil {
		return nil, "", translate(err)
	}
	dims := map[string]map[string]*float64{}
	var ids []string
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return nil, "", translate(err)
		}
		m := map[string]*float64{}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &m); err != nil {
				rows.Close()
				return nil, "", vigia.Internal(err)
			}
		}
		dims[id] = m
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, "", translate(err)
	}
	if len(ids) == 0 {
		return nil, kind, nil
	}
	details, err := s.db.Catalog().DatasetDetails(ctx, catalog.Viewer{WorkspaceID: ws, TeamIDs: []string{}, Admin: true}, ids, 1)
	if err != nil {
		return nil, "", err
	}
	targets := map[string]map[string]modeling.Target{}
	rows, err = q.Query(ctx, `SELECT dd.dataset_id::text, dm.id::text, t.key, t.value::double precision
		FROM domain_datasets dd JOIN domains dm ON dm.id = dd.domain_id
		CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(dm.sla->'dimension_targets') = 'object' THEN dm.sla->'dimension_targets' ELSE '{}'::jsonb END) t
		WHERE dd.dataset_id = ANY($1::uuid[]) AND dm.workspace_id = $2 ORDER BY dm.id`, ids, ws)
	if err != nil {
		return nil, "", translate(err)
	}
	for rows.Next() {
		var ds, dom, dim string
		var v float64
		if err := rows.Scan(&ds, &dom, &dim, &v); err != nil {
			rows.Close()
			return nil, "", translate(err)
		}
		if targets[ds] == nil {
			targets[ds] = map[string]modeling.Target{}
		}
		t := targets[ds][dim]
		switch {
		case len(t.DomainIDs) == 0 || v > t.Value:
			t = modeling.Target{Value: v, DomainIDs: []string{dom}}
		case v == t.Value:
			t.DomainIDs = append(t.DomainIDs, dom)
		}
		targets[ds][dim] = t
	}
	if err := rows.Err(); err != nil {
		return nil, "", translate(err)
	}
	sort.Strings(ids)
	out := make([]modeling.ScanDataset, 0, len(ids))
	for _, id := range ids {
		d, ok := details[id]
		if !ok {
			continue
		}
		out = append(out, modeling.ScanDataset{Dataset: d, Dimensions: dims[id], Targets: targets[id]})
	}
	return out, kind, nil
}

// modelingChunk is how many datasets of a scan one transaction of SaveOutcomes
// writes: one read of their issues and one batch of writes per chunk.
const modelingChunk = 1000

// SaveOutcomes implements modeling.Store: per chunk of datasets, one read of their
// modeling and slo_breach issues and one batch of every write, in a transaction.
func (s *ModelingStore) SaveOutcomes(ctx context.Context, ws, connectionID, scanID, dialect string, outs []modeling.DatasetOutcome, at time.Time) error {
	for start := 0; start < len(outs); start += modelingChunk {
		chunk := outs[start:min(len(outs), start+modelingChunk)]
		if err := s.db.InTx(ctx, func(ctx context.Context) error {
			return s.saveOutcomes(ctx, ws, connectionID, scanID, dialect, chunk, at)
		}); err != nil {
			return err
		}
	}
	return nil
}

func (s *ModelingStore) saveOutcomes(ctx context.Context, ws, connectionID, scanID, dialect string, outs []modeling.DatasetOutcome, at time.Time) error {
	q := s.db.q(ctx)
	ids := make([]string, 0, len(outs))
	for _, o := range outs {
		ids = append(ids, o.Dataset.ID)
	}
	existing, err := openIssues(ctx, q, ids)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for _, o := range outs {
		if o.Modeling {
			if err := queueModeling(b, ws, connectionID, scanID, dialect, o.Dataset, o.Findings,
				existing[issueKey{o.Dataset.ID, modeling.IssueTypeModeling}], at); err != nil {
				return err
			}
		}
		if err := queueSLOBreaches(b, ws, scanID, o.Dataset, o.Breaches, o.Unknown,
			existing[issueKey{o.Dataset.ID, modeling.IssueTypeSLOBreach}], at); err != nil {
			return err
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return translate(q.SendBatch(ctx, b).Close())
}

// issueKey is a dataset and an issue type.
type issueKey struct{ datasetID, typ string }

// openIssues returns the datasets' modeling and slo_breach issues that are open,
// acknowledged or ignored, per dataset and type, by key (subtype for modeling,
// details.dimension for slo_breach): one read for all the datasets.
func openIssues(ctx context.Context, q querier, datasetIDs []string) (map[issueKey]map[string][2]string, error) {
	rows, err := q.Query(ctx, `SELECT dataset_id::text, type, CASE WHEN type = $2 THEN subtype ELSE details->>'dimension' END, id::text, status
		FROM issues WHERE dataset_id = ANY($1::uuid[]) AND type IN ($2, $3)
		AND status IN ('open', 'acknowledged', 'ignored') ORDER BY created_at`, datasetIDs, modeling.IssueTypeModeling, modeling.IssueTypeSLOBreach)
	if err != nil {
		return nil, translate(err)
	}
	out := map[issueKey]map[string][2]string{}
	for rows.Next() {
		var k issueKey
		var key *string
		var id, status string
		if err := rows.Scan(&k.datasetID, &k.typ, &key, &id, &status); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if key == nil {
			continue
		}
		m := out[k]
		if m == nil {
			m = map[string][2]string{}
			out[k] = m
		}
		// An open one wins over an ignored one of the same key.
		if prev, ok := m[*key]; ok && prev[1] != "ignored" {
			continue
		}
		m[*key] = [2]string{id, status}
	}
	return out, translate(rows.Err())
}

// queueUpsertIssue queues the opening of an issue or the update of the open one (id
// non-empty); a second run for the same scan counts no new detection.
func queueUpsertIssue(b *pgx.Batch, ws, datasetID, id, typ, subtype, severity, title, titleKey string, params, details map[string]any, scanID string, at time.Time) error {
	p, err := json.Marshal(params)
	if err != nil {
		return vigia.Internal(err)
	}
	dt, err := json.Marshal(details)
	if err != nil {
		return vigia.Internal(err)
	}
	if id != "" {
		b.Queue(`UPDATE issues SET details = $2, title = $3, title_params = $4, updated_at = $5,
			detections = detections + CASE WHEN last_scan_id IS DISTINCT FROM $6::uuid THEN 1 ELSE 0 END,
			last_scan_id = $6::uuid WHERE id = $1`, id, dt, title, p, at, scanID)
		return nil
	}
	id = vigia.NewID()
	b.Queue(`INSERT INTO issues (id, workspace_id, dataset_id, type, subtype, severity, title, title_key, title_params, details,
		first_scan_id, last_scan_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $12)`,
		id, ws, datasetID, typ, subtype, severity, title, titleKey, p, dt, scanID, at)
	b.Queue(`INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, NULL, 'open', $4, 'opened', $5)`, vigia.NewID(), id, ws, "scan:"+scanID, at)
	return nil
}

func queueAutoResolve(b *pgx.Batch, ws, id, from, scanID string, at time.Time) {
	b.Queue(`UPDATE issues SET status = 'resolved', resolved_at = $2, updated_at = $2 WHERE id = $1`, id, at)
	b.Queue(`INSERT INTO issue_history (id, issue_id, workspace_id, from_status, to_status, origin, event, created_at)
		VALUES ($1, $2, $3, $4, 'resolved', $5, 'auto_resolved', $6)`, vigia.NewID(), id, ws, from, "scan:"+scanID, at)
}

// queueModeling queues a dataset's modeling issues: one opened per finding whose check
// has none open (nor one ignored: an ignored check stays ignored), the open ones
// updated, those of checks that found nothing resolved.
func queueModeling(b *pgx.Batch, ws, connectionID, scanID, dialect string, d catalog.Dataset, fs []modeling.Finding, existing map[string][2]string, at time.Time) error {
	found := map[string]bool{}
	for _, f := range fs {
		found[f.Check] = true
		ex, has := existing[f.Check]
		if has && ex[1] == "ignored" {
			continue // the team dismissed this advice
		}
		var ddl *string
		if f.DDL != "" {
			ddl = &f.DDL
		}
		cols := f.Columns
		if cols == nil {
			cols = []string{}
		}
		details := map[string]any{"connection_id": connectionID, "check": f.Check, "dialect": dialect, "columns": cols,
			"suggestion": f.Suggestion, "ddl": ddl}
		params := map[string]any{"check": f.Check, "dataset": d.Name(), "columns": strings.Join(cols, ", ")}
		title := fmt.Sprintf("Modeling %s on %s", f.Check, d.Name())
		if len(cols) > 0 {
			title += ": " + strings.Join(cols, ", ")
		}
		if err := queueUpsertIssue(b, ws, d.ID, ex[0], modeling.IssueTypeModeling, f.Check, "warning", title, "issue.modeling",
			params, details, scanID, at); err != nil {
			return err
		}
	}
	for check, ex := range existing {
		if !found[check] && ex[1] != "ignored" {
			queueAutoResolve(b, ws, ex[0], ex[1], scanID, at)
		}
	}
	return nil
}

// queueSLOBreaches does the same for the dataset's slo_breach issues, one per
// dimension; the other open ones resolve (target met or gone) except those of the
// unknown dimensions.
func queueSLOBreaches(b *pgx.Batch, ws, scanID string, d catalog.Dataset, bs []modeling.Breach, unknown []string, existing map[string][2]string, at time.Time) error {
	breached := map[string]bool{}
	for _, br := range bs {
		breached[br.Dimension] = true
		ex := existing[br.Dimension]
		if ex[1] == "ignored" {
			continue
		}
		details := map[string]any{"dimension": br.Dimension, "target": br.Target, "observed": br.Observed, "domain_ids": br.DomainIDs,
			"impact": map[string]any{"dimension": br.Dimension, "target": br.Target, "observed": br.Observed}}
		params := map[string]any{"dimension": br.Dimension, "dataset": d.Name(), "observed": fmt.Sprintf("%.1f", br.Observed),
			"target": fmt.Sprintf("%g", br.Target)}
		title := fmt.Sprintf("%s of %s is %.1f, under the domain target %g", br.Dimension, d.Name(), br.Observed, br.Target)
		if err := queueUpsertIssue(b, ws, d.ID, ex[0], modeling.IssueTypeSLOBreach, modeling.SubtypeDimensionTarget, "warning",
			title, "issue.slo_breach", params, details, scanID, at); err != nil {
			return err
		}
	}
	keep := map[string]bool{}
	for _, dim := range unknown {
		keep[dim] = true
	}
	for dim, ex := range existing {
		if !breached[dim] && !keep[dim] && ex[1] != "ignored" {
			queueAutoResolve(b, ws, ex[0], ex[1], scanID, at)
		}
	}
	return nil
}
