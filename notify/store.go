package notify

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
)

// Store is the persistence the notification feature needs. Methods scoped to a
// workspace return KindNotFound for another workspace's rows; methods taking a
// catalog.Viewer apply the one visibility rule (vigia_dataset_visible).
type Store interface {
	ChannelStore
	DispatchStore
	DeliveryStore
	MuteStore
	// AddActivity appends to the workspace activity log.
	AddActivity(ctx context.Context, a event.Activity) error
	// WorkspaceInfo returns a workspace's locale, time zone and suspension.
	WorkspaceInfo(ctx context.Context, workspaceID string) (WorkspaceInfo, error)
}

// ChannelStore keeps channels and answers the permission rules' questions.
type ChannelStore interface {
	// ManagedByConfig tells the channels configuration as code manages.
	vigia.ManagedLookup
	CreateChannel(ctx context.Context, c Channel) error
	// Channels lists a workspace's channels, oldest first, with their last delivery.
	Channels(ctx context.Context, workspaceID string) ([]Channel, error)
	ChannelByID(ctx context.Context, workspaceID, id string) (Channel, error)
	// UpdateChannel saves every field of c, its sealed URL included.
	UpdateChannel(ctx context.Context, c Channel) error
	DeleteChannel(ctx context.Context, workspaceID, id string) error
	SetChannelSecret(ctx context.Context, workspaceID, id string, sealed []byte, at time.Time) error
	// HasRestrictedDomains reports whether the workspace has a restricted-access domain.
	HasRestrictedDomains(ctx context.Context, workspaceID string) (bool, error)
	// TeamReadsWithin reports whether every restricted domain the team reads is one
	// the viewer's teams read too.
	TeamReadsWithin(ctx context.Context, workspaceID, teamID string, viewerTeams []string) (bool, error)
	// Refs checks the ids a body names (vigia.CheckRefs).
	vigia.Refs
	// ScopeVisible reports whether every domain, connection and dataset of the scope is
	// in the viewer's workspace and visible to the viewer.
	ScopeVisible(ctx context.Context, v catalog.Viewer, sc Scope) (bool, error)
}

// DispatchStore claims outbox rows and finished scans and records notifications.
type DispatchStore interface {
	// ClaimEvents locks up to limit undispatched outbox rows, oldest first, skipping
	// rows other transactions hold.
	ClaimEvents(ctx context.Context, limit int) ([]OutboxEvent, error)
	MarkEventDispatched(ctx context.Context, id string, at time.Time) error
	// ClaimFinishedScans locks up to limit scans finished since since whose alerts were
	// not dispatched.
	ClaimFinishedScans(ctx context.Context, since time.Time, limit int) ([]FinishedScan, error)
	MarkScanAlerts(ctx context.Context, sc FinishedScan, alerts int, at time.Time) error
	// ScanAlertIssues returns the warning and critical issues a scan opened.
	ScanAlertIssues(ctx context.Context, scanID string) ([]AlertIssue, error)
	// AlertIssuesSince returns the workspace's warning and critical issues opened since.
	AlertIssuesSince(ctx context.Context, workspaceID string, since time.Time) ([]AlertIssue, error)
	IssueByID(ctx context.Context, workspaceID, id string) (AlertIssue, error)
	// DatasetFacts returns the live datasets of the workspace among ids.
	DatasetFacts(ctx context.Context, workspaceID string, ids []string) (map[string]DatasetFacts, error)
	DomainFacts(ctx context.Context, workspaceID, id string) (DomainFacts, error)
	// TeamGrants maps each team to the domains it has a grant on.
	TeamGrants(ctx context.Context, workspaceID string, teamIDs []string) (map[string][]string, error)
	// InsertNotification adds n unless the workspace has one with its source key.
	InsertNotification(ctx context.Context, n Notification) (bool, error)
	AddNotificationDeliveries(ctx context.Context, id string, n int) error
	// RecentConsumerNotices returns the datasets the consumer was noticed about since,
	// and how many consumer notices the workspace had since.
	RecentConsumerNotices(ctx context.Context, workspaceID, consumerID string, since time.Time) ([]string, int, error)
	// Notifications lists what the viewer can see, newest first.
	Notifications(ctx context.Context, v catalog.Viewer, f NotificationFilter) (vigia.List[Notification], error)
}

// DeliveryStore keeps deliveries and their attempts.
type DeliveryStore interface {
	// InsertDelivery adds d unless its channel has a delivery with its source key.
	InsertDelivery(ctx context.Context, d Delivery) (bool, error)
	// DeliveryForSend loads a delivery with its channel's sealed URL and secret.
	DeliveryForSend(ctx context.Context, id string) (SendItem, error)
	// RecordAttempt appends an attempt and sets the status, the next attempt's time (nil
	// when none) and the end (nil while pending).
	RecordAttempt(ctx context.Context, id string, rec AttemptRecord, status string, next, finished *time.Time) error
	// FinishDelivery ends a delivery without an attempt.
	FinishDelivery(ctx context.Context, id, status string, statusCode *int, errText string, at time.Time) error
	Deliveries(ctx context.Context, workspaceID, channelID string, page vigia.Page) (vigia.List[Delivery], error)
}

// MuteStore keeps alert mutes.
type MuteStore interface {
	CreateMute(ctx context.Context, m Mute) error
	// ActiveMutes returns the mutes that have not ended at now.
	ActiveMutes(ctx context.Context, workspaceID string, now time.Time) ([]Mute, error)
	Mutes(ctx context.Context, v catalog.Viewer, now time.Time, page vigia.Page) (vigia.List[Mute], error)
	DeleteMute(ctx context.Context, v catalog.Viewer, id string) error
}
