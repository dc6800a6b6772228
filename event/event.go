// Package event is the one home of what the features tell each other and the outside
// world: the state event written to the outbox, its typed payloads, the one
// idempotency key of a state event, and the audit entry of the activity log. It
// imports the standard library only, so every feature and adapter may use it.
package event

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Event is a state event written to the outbox in the transaction that changed the
// state; the webhook dispatcher turns it into deliveries.
type Event struct {
	ID             string
	Type           string
	SubjectType    string
	SubjectID      string
	IdempotencyKey string
	Payload        map[string]any
}

// IdempotencyKey returns the idempotency_key of a state event: the lowercase hex
// SHA-256 (64 characters) of subject, scan id, event type and rule ("" for verdict
// events), each written as "<byte length>:<text>" so that no two different tuples
// share an input. The same inputs give the same key on every channel and on a
// repeated scan.
func IdempotencyKey(subject, scanID, typ, rule string) string {
	h := sha256.New()
	for _, part := range [...]string{subject, scanID, typ, rule} {
		h.Write(strconv.AppendInt(nil, int64(len(part)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Activity is one entry of the workspace activity log (the audit trail). An empty ID
// is given a new one when it is written.
type Activity struct {
	ID          string
	WorkspaceID string
	Actor       string
	Action      string
	SubjectType string
	SubjectID   string
	Details     map[string]any
	CreatedAt   time.Time
}

// CodeConsumerUntrustedRead is the code of the service.consumer.untrusted_read event.
const CodeConsumerUntrustedRead = "consumer_untrusted_read"

// DatasetRef names a dataset in an event's context.
type DatasetRef struct {
	DatasetID   string `json:"dataset_id"`
	DatasetName string `json:"dataset_name"`
}

// ConsumerRead is the context of service.consumer.untrusted_read: a registered
// consumer read datasets the trust decision calls untrusted.
type ConsumerRead struct {
	ConsumerID   string       `json:"consumer_id"`
	ConsumerName string       `json:"consumer_name"`
	ConsumerKind string       `json:"consumer_kind"` // agent, application, pipeline, notebook
	Purpose      string       `json:"purpose"`
	Decision     string       `json:"decision"` // untrusted
	RunRef       *string      `json:"run_ref"`
	Datasets     []DatasetRef `json:"datasets"`
}

// TypeScanSucceeded is the type of the outbox event a succeeded scan writes in the
// transaction that marks it succeeded. It is no notification: its consumers are the
// after-scan steps (lineage, incidents, domain verdict events), each of which processes
// it at least once, in order per connection (see scan.Service.AfterScan).
const TypeScanSucceeded = "scan.succeeded"

// ScanSucceeded is the payload of a scan.succeeded event.
type ScanSucceeded struct {
	ConnectionID string `json:"connection_id"`
}

// TypeIssueOpened is the type of the outbox event written in the transaction that
// opens a warning or critical issue outside a scan (a dbt test result, a BI refresh,
// a pipeline's health): the webhook dispatcher fans it out as that issue's
// service.alerts, the way a finished scan's new issues are.
const TypeIssueOpened = "issue.opened"

// IssueOpened is the payload of an issue.opened event.
type IssueOpened struct {
	IssueID   string `json:"issue_id"`
	DatasetID string `json:"dataset_id"`
	Severity  string `json:"severity"`
}
