package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
)

// writeIssueOpened writes, in the transaction of q, the issue.opened outbox event of an
// issue opened outside a scan, when its severity makes it an alert (warning, critical):
// the webhook dispatcher turns it into the issue's service.alerts.
func writeIssueOpened(ctx context.Context, q querier, workspaceID, issueID, datasetID, severity string, at time.Time) error {
	if severity != "warning" && severity != "critical" {
		return nil
	}
	payload, err := json.Marshal(event.IssueOpened{IssueID: issueID, DatasetID: datasetID, Severity: severity})
	if err != nil {
		return vigia.Internal(err)
	}
	_, err = q.Exec(ctx, `INSERT INTO events (id, workspace_id, type, subject_type, subject_id, idempotency_key, payload, created_at)
		VALUES ($1, $2, $3, 'issue', $4, $5, $6, $7) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
		vigia.NewID(), workspaceID, event.TypeIssueOpened, issueID,
		event.IdempotencyKey(issueID, "", event.TypeIssueOpened, ""), payload, at)
	return translate(err)
}
