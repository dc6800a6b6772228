package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
)

var _ scan.Reads = (*ScanStore)(nil)

// OpenIssues returns a dataset's open and acknowledged issues (the score explanation
// counts the standing ones with quality.CountStanding).
func (s *ScanStore) OpenIssues(ctx context.Context, datasetID string) ([]quality.VerdictIssue, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT id::text, type, severity, status FROM issues
		WHERE dataset_id = $1 AND status IN ('open', 'acknowledged') ORDER BY id`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (quality.VerdictIssue, error) {
		var is quality.VerdictIssue
		err := r.Scan(&is.ID, &is.Type, &is.Severity, &is.Status)
		return is, err
	})
	return out, translate(err)
}

// LatestVerdict returns a dataset's last verdict.
func (s *ScanStore) LatestVerdict(ctx context.Context, datasetID string) (scan.VerdictRow, bool, error) {
	var v scan.VerdictRow
	var detail []byte
	err := s.db.q(ctx).QueryRow(ctx, `SELECT scan_id::text, detail, created_at FROM verdicts WHERE dataset_id = $1
		ORDER BY seq DESC LIMIT 1`, datasetID).Scan(&v.ScanID, &detail, &v.CreatedAt)
	if err == pgx.ErrNoRows {
		return v, false, nil
	}
	if err != nil {
		return v, false, translate(err)
	}
	if err := json.Unmarshal(detail, &v.Result); err != nil {
		return v, false, vigia.Internal(err)
	}
	return v, true, nil
}

// LatestScores returns a dataset's last n scores, newest first.
func (s *ScanStore) LatestScores(ctx context.Context, datasetID string, n int) ([]scan.ScoreRow, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT scan_id::text, seq, detail, created_at FROM scores WHERE dataset_id = $1
		ORDER BY seq DESC LIMIT $2`, datasetID, n)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.ScoreRow, error) {
		var sr scan.ScoreRow
		var detail []byte
		if err := r.Scan(&sr.ScanID, &sr.Seq, &detail, &sr.CreatedAt); err != nil {
			return sr, err
		}
		return sr, json.Unmarshal(detail, &sr.Score)
	})
	return out, translate(err)
}

// SchemaChanges lists a dataset's column changes, newest scan first.
func (s *ScanStore) SchemaChanges(ctx context.Context, datasetID string) ([]scan.SchemaChangeRow, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT scan_id::text, change, column_name, from_type, to_type, suggested_rename_to,
		issue_id::text, created_at FROM schema_changes WHERE dataset_id = $1 ORDER BY created_at DESC, change, column_name`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.SchemaChangeRow, error) {
		var c scan.SchemaChangeRow
		err := r.Scan(&c.ScanID, &c.Change, &c.Column, &c.FromType, &c.ToType, &c.SuggestedRenameTo, &c.IssueID, &c.CreatedAt)
		return c, err
	})
	return out, translate(err)
}

// LatestProfile returns a dataset's last saved profile.
func (s *ScanStore) LatestProfile(ctx context.Context, datasetID string) (scan.ProfileRow, bool, error) {
	var p scan.ProfileRow
	var cols []byte
	err := s.db.q(ctx).QueryRow(ctx, `SELECT scan_id::text, seq, row_count, row_count_exact, depth, sample_size, columns, latest_timestamp,
		freshness_column, duration_ms, profiled_at FROM dataset_profiles WHERE dataset_id = $1 ORDER BY seq DESC LIMIT 1`, datasetID).
		Scan(&p.ScanID, &p.Seq, &p.RowCount, &p.RowCountExact, &p.Depth, &p.SampleSize, &cols, &p.LatestTimestamp, &p.FreshnessColumn, &p.DurationMS, &p.ProfiledAt)
	if err == pgx.ErrNoRows {
		return p, false, nil
	}
	if err != nil {
		return p, false, translate(err)
	}
	var stored []storedColumn
	if err := json.Unmarshal(cols, &stored); err != nil {
		return p, false, vigia.Internal(err)
	}
	for _, c := range stored {
		p.Columns = append(p.Columns, scan.ProfiledColumn{Name: c.Name, DataType: c.DataType, Class: c.Class, Profile: c.Profile})
	}
	return p, true, nil
}

// MetricHistory returns a dataset's last n profiles' metrics, oldest first.
func (s *ScanStore) MetricHistory(ctx context.Context, datasetID string, n int) ([]scan.Metrics, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT metrics FROM (SELECT seq, metrics FROM dataset_profiles WHERE dataset_id = $1
		ORDER BY seq DESC LIMIT $2) p ORDER BY seq`, datasetID, n)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.Metrics, error) {
		var b []byte
		var m scan.Metrics
		if err := r.Scan(&b); err != nil {
			return nil, err
		}
		return m, json.Unmarshal(b, &m)
	})
	return out, translate(err)
}

// Tunings lists a dataset's tuned thresholds.
func (s *ScanStore) Tunings(ctx context.Context, datasetID string) ([]scan.TuningRow, error) {
	rows, err := s.db.q(ctx).Query(ctx, `SELECT t.metric, t.column_name, t.threshold, t.ignored, t.resolved, t.silenced,
		r.id::text, r.action, r.from_threshold, r.issue_id::text, r.requested_by, r.requested_at
		FROM anomaly_tuning t LEFT JOIN anomaly_retunes r ON r.dataset_id = t.dataset_id AND r.metric = t.metric
		     AND r.column_name = t.column_name AND r.status = 'pending'
		WHERE t.dataset_id = $1 ORDER BY t.metric, t.column_name`, datasetID)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scan.TuningRow, error) {
		var t scan.TuningRow
		var id, action, by *string
		var from *float64
		var issueID *string
		var at *time.Time
		err := r.Scan(&t.Metric, &t.Column, &t.Threshold, &t.Ignored, &t.Resolved, &t.Silenced, &id, &action, &from, &issueID, &by, &at)
		if err == nil && id != nil {
			t.Retune = &quality.Retune{ID: *id, Action: *action, FromThreshold: *from, IssueID: issueID, RequestedBy: *by, RequestedAt: *at}
		}
		return t, err
	})
	return out, translate(err)
}
