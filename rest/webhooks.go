package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/oncall"
	"github.com/vigia-data/vigia/ticket"
)

// ChannelConfigIn is a channel's configuration.
type ChannelConfigIn struct {
	WebhookURL string          `json:"webhook_url,omitempty" maxLength:"2048" doc:"https URL resolving to public addresses; treated as a secret, never echoed"`
	Locale     json.RawMessage `json:"locale,omitempty" doc:"pt-PT, en or es for titles and bodies; null = the workspace's default"`
}

// ScopeIn narrows what a channel receives.
type ScopeIn struct {
	DomainIDs           []string `json:"domain_ids,omitempty" maxItems:"100"`
	ConnectionIDs       []string `json:"connection_ids,omitempty" maxItems:"100"`
	DatasetIDs          []string `json:"dataset_ids,omitempty" maxItems:"100"`
	IssueTypes          []string `json:"issue_types,omitempty" maxItems:"20" doc:"Filters alerts only"`
	IncludeAutoMonitors *bool    `json:"include_auto_monitors,omitempty" doc:"false excludes automatic monitors (default true)"`
}

// ChannelIn creates a notification channel (session of an admin or member).
type ChannelIn struct {
	Name          string          `json:"name" maxLength:"100"`
	Kind          string          `json:"kind,omitempty" enum:"webhook" doc:"webhook (default)"`
	Config        ChannelConfigIn `json:"config"`
	MinSeverity   *string         `json:"min_severity,omitempty" enum:"info,warning,critical" doc:"Minimum alert severity (default warning)"`
	Digest        *bool           `json:"digest,omitempty" doc:"Weekly digest (default false)"`
	EventKinds    []string        `json:"event_kinds,omitempty" doc:"alerts (default; covers alerts and escalation), dataset.verdict_changed, policy.violation_opened, policy.violation_resolved, domain.verdict_changed"`
	Scope         *ScopeIn        `json:"scope,omitempty"`
	TeamID        *string         `json:"team_id,omitempty" doc:"A team channel delivers only what the team reads"`
	SigningSecret *string         `json:"signing_secret,omitempty" doc:"Ignored: the secret is always generated"`
}

// ChannelPatchIn changes a channel; absent fields keep their value.
type ChannelPatchIn struct {
	Name          *string          `json:"name,omitempty" maxLength:"100"`
	Kind          *string          `json:"kind,omitempty" enum:"webhook"`
	Config        *ChannelConfigIn `json:"config,omitempty" doc:"A new webhook_url keeps the secret"`
	MinSeverity   *string          `json:"min_severity,omitempty" enum:"info,warning,critical"`
	Digest        *bool            `json:"digest,omitempty"`
	EventKinds    []string         `json:"event_kinds,omitempty" doc:"Absent keeps the current value; without alerts the channel stops receiving alerts"`
	Scope         *ScopeIn         `json:"scope,omitempty" doc:"Each absent list keeps its value"`
	TeamID        json.RawMessage  `json:"team_id,omitempty" doc:"A team id, or null for a workspace channel"`
	SigningSecret *string          `json:"signing_secret,omitempty" doc:"Ignored"`
}

// ChannelConfigOut is a channel's configuration; the URL is reduced to scheme and host.
type ChannelConfigOut struct {
	WebhookURL string  `json:"webhook_url" doc:"Scheme and host only (the path, which often holds a token, is replaced by …)"`
	Locale     *string `json:"locale"`
}

// ScopeOut is a channel's scope.
type ScopeOut struct {
	DomainIDs           []string `json:"domain_ids"`
	ConnectionIDs       []string `json:"connection_ids"`
	DatasetIDs          []string `json:"dataset_ids"`
	IssueTypes          []string `json:"issue_types"`
	IncludeAutoMonitors bool     `json:"include_auto_monitors"`
}

// ChannelOut is a notification channel.
type ChannelOut struct {
	ID                 string           `json:"id"`
	Name               string           `json:"name"`
	Kind               string           `json:"kind" enum:"webhook"`
	Config             ChannelConfigOut `json:"config"`
	MinSeverity        string           `json:"min_severity" enum:"info,warning,critical"`
	Digest             bool             `json:"digest"`
	EventKinds         []string         `json:"event_kinds"`
	Scope              ScopeOut         `json:"scope"`
	TeamID             *string          `json:"team_id"`
	Signed             bool             `json:"signed" doc:"false for a channel created before signing existed, until its secret is rotated"`
	LastDeliveryStatus *string          `json:"last_delivery_status" enum:"delivered,failed,skipped"`
	LastDeliveryAt     *time.Time       `json:"last_delivery_at"`
	LastDeliveryError  *string          `json:"last_delivery_error" doc:"Stable short text, e.g. http 500, timeout, destination refused"`
	CreatedAt          time.Time        `json:"created_at"`
	UpdatedAt          time.Time        `json:"updated_at"`
}

// ChannelCreatedOut is a new channel with its signing secret, shown this once.
type ChannelCreatedOut struct {
	ChannelOut
	SigningSecret string `json:"signing_secret" doc:"whsec_…; the whole text is the HMAC key; shown once"`
}

// SigningSecretOut is a rotated signing secret, shown once.
type SigningSecretOut struct {
	SigningSecret string `json:"signing_secret"`
}

// ChannelTestOut is the result of one test delivery.
type ChannelTestOut struct {
	OK         bool   `json:"ok"`
	Result     string `json:"result" enum:"accepted_signed,accepted_unsigned,signature_refused,http_error,timeout,destination_refused,failed"`
	Message    string `json:"message" doc:"In the caller's language; never the URL"`
	StatusCode *int   `json:"status_code"`
	DeliveryID string `json:"delivery_id" doc:"X-Service-Delivery of the test"`
	Signed     bool   `json:"signed"`
}

// ChannelPreviewOut is how many alerts would have reached a channel.
type ChannelPreviewOut struct {
	Days       int `json:"days"`
	Alerts     int `json:"alerts" doc:"Alerts the channel's filters let through"`
	Deliveries int `json:"deliveries" doc:"service.alerts deliveries they would have made (one per scan)"`
	Held       int `json:"held" doc:"Of those, alerts the mutes active now would hold back"`
}

// DeliveryAttemptOut is one send of a delivery.
type DeliveryAttemptOut struct {
	N          int       `json:"n"`
	At         time.Time `json:"at"`
	StatusCode *int      `json:"status_code"`
	Error      *string   `json:"error"`
	Outcome    string    `json:"outcome" enum:"delivered,retry,failed,refused"`
	DurationMS int64     `json:"duration_ms"`
}

// DeliveryOut is an entry of a channel's delivery log.
type DeliveryOut struct {
	ID             string               `json:"id" doc:"X-Service-Delivery"`
	Event          string               `json:"event"`
	Status         string               `json:"status" enum:"pending,delivered,failed,skipped"`
	Test           bool                 `json:"test"`
	IdempotencyKey *string              `json:"idempotency_key"`
	Attempts       []DeliveryAttemptOut `json:"attempts"`
	NextAttemptAt  *time.Time           `json:"next_attempt_at"`
	LastStatusCode *int                 `json:"last_status_code"`
	LastError      *string              `json:"last_error"`
	CreatedAt      time.Time            `json:"created_at"`
	FinishedAt     *time.Time           `json:"finished_at"`
}

// NotificationOut is an item of the in-app notification list.
type NotificationOut struct {
	ID         string         `json:"id"`
	Event      string         `json:"event"`
	Code       string         `json:"code"`
	Title      string         `json:"title" doc:"Plain text in the caller's language"`
	Body       string         `json:"body" doc:"Plain text in the caller's language"`
	Params     map[string]any `json:"params"`
	Severity   *string        `json:"severity"`
	DatasetIDs []string       `json:"dataset_ids"`
	DomainID   *string        `json:"domain_id"`
	IssueID    *string        `json:"issue_id"`
	ScanID     *string        `json:"scan_id"`
	Held       bool           `json:"held" doc:"Held back by a mute: not delivered to channels"`
	MuteIDs    []string       `json:"mute_ids"`
	Deliveries int            `json:"deliveries" doc:"Channel deliveries it made"`
	CreatedAt  time.Time      `json:"created_at"`
}

// MuteIn creates an alert mute.
type MuteIn struct {
	Scope        string    `json:"scope" enum:"workspace,connection,dataset,issue_types"`
	ConnectionID *string   `json:"connection_id,omitempty"`
	DatasetID    *string   `json:"dataset_id,omitempty"`
	IssueTypes   []string  `json:"issue_types,omitempty" maxItems:"20" doc:"e.g. anomaly, schema_drift, policy_violation"`
	EndsAt       time.Time `json:"ends_at" doc:"Within the next 366 days"`
	Reason       string    `json:"reason,omitempty" maxLength:"500"`
}

// MuteOut is an alert mute.
type MuteOut struct {
	ID           string    `json:"id"`
	Scope        string    `json:"scope" enum:"workspace,connection,dataset,issue_types"`
	ConnectionID *string   `json:"connection_id"`
	DatasetID    *string   `json:"dataset_id"`
	IssueTypes   []string  `json:"issue_types"`
	Reason       string    `json:"reason"`
	EndsAt       time.Time `json:"ends_at"`
	CreatedBy    string    `json:"created_by"`
	CreatedAt    time.Time `json:"created_at"`
}

// RotaLevelIO is a level of the on-call rota.
type RotaLevelIO struct {
	UserID  string `json:"user_id"`
	Minutes int    `json:"minutes" minimum:"1" maximum:"10080" doc:"Minutes to acknowledge before the next level"`
}

// RotaIn sets the on-call rota.
type RotaIn struct {
	Levels      []RotaLevelIO `json:"levels" minItems:"1" maxItems:"10" doc:"Level 0 is the first on call"`
	TeamID      *string       `json:"team_id,omitempty" doc:"Where an exhausted rota goes"`
	MinSeverity *string       `json:"min_severity,omitempty" enum:"warning,critical" doc:"Default critical"`
}

// RotaOut is the on-call rota.
type RotaOut struct {
	Levels      []RotaLevelIO `json:"levels"`
	TeamID      *string       `json:"team_id"`
	MinSeverity string        `json:"min_severity" enum:"warning,critical"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
}

// TicketIntegrationIn creates a ticket integration.
type TicketIntegrationIn struct {
	Name     string  `json:"name" maxLength:"100"`
	Provider string  `json:"provider" enum:"jira,linear,generic"`
	BaseURL  *string `json:"base_url,omitempty" maxLength:"2048"`
	Project  *string `json:"project,omitempty" maxLength:"32" doc:"Project or team key tickets must belong to"`
	// Credentials are optional here; PUT /api/v1/tickets/integrations/{integration_id}/credentials sets them later.
	Credentials *TicketCredentialsIn `json:"credentials,omitempty" doc:"API credentials for polling and write-back; never returned"`
}

// TicketCredentialsIn sets a ticket integration's API credentials (write-only).
type TicketCredentialsIn struct {
	Email    *string `json:"email,omitempty" maxLength:"254" doc:"Jira only: the Atlassian account's email (HTTP Basic with api_token)"`
	APIToken *string `json:"api_token" maxLength:"4096" doc:"Required: Jira API token, Linear API key or the generic provider's bearer token; empty removes the credentials. Never returned"`
}

// TicketIntegrationOut is a ticket integration; its webhook secret is never returned.
type TicketIntegrationOut struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Provider         string     `json:"provider" enum:"jira,linear,generic"`
	BaseURL          *string    `json:"base_url"`
	Project          *string    `json:"project"`
	WebhookSecretSet bool       `json:"webhook_secret_set"`
	WebhookPath      *string    `json:"webhook_path" doc:"Where the tracker posts events; null without a secret"`
	IntervalMin      int        `json:"interval_min"`
	Comment          bool       `json:"comment"`
	Transition       bool       `json:"transition"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	CredentialsSet   bool       `json:"credentials_set" doc:"API credentials are set (they are never returned): polling and write-back run"`
	LastPollAt       *time.Time `json:"last_poll_at"`
	NextPollAt       *time.Time `json:"next_poll_at" doc:"null: due as soon as credentials are set"`
	LastError        *string    `json:"last_error" doc:"Stable code of the last run's provider failure (http_429, http_401, http_5xx, timeout, destination_refused…); null after a good run"`
	LastErrorAt      *time.Time `json:"last_error_at"`
	BackoffUntil     *time.Time `json:"backoff_until" doc:"The provider failed: nothing is sent before; the wait doubles up to 6 hours"`
	TicketErrors     int        `json:"ticket_errors" doc:"Linked tickets whose last read failed on their own (e.g. ticket_not_found)"`
	PendingWrites    int        `json:"pending_writes" doc:"Comments and transitions waiting to be sent"`
	FailedWrites     int        `json:"failed_writes" doc:"Comments and transitions that failed for good"`
}

// TicketIssueTypeOut is an issue type of a ticket target.
type TicketIssueTypeOut struct {
	ID      string `json:"id" doc:"The provider's id of the issue type"`
	Name    string `json:"name"`
	Subtask bool   `json:"subtask" doc:"A Jira sub-task type (a ticket of it needs a parent); false elsewhere"`
}

// TicketTargetOut is where an integration's tickets live: a Jira project with its issue
// types, a Linear team (no issue types) or a generic tracker's target.
type TicketTargetOut struct {
	Key        string               `json:"key" doc:"Project or team key (OPS, ENG)"`
	Name       string               `json:"name"`
	IssueTypes []TicketIssueTypeOut `json:"issue_types" doc:"Empty for Linear teams"`
}

// TicketTargetsOut is the targets of an integration, read from its provider.
type TicketTargetsOut struct {
	Targets          []TicketTargetOut   `json:"targets" maxItems:"100" doc:"At most 100, in the provider's order"`
	Truncated        bool                `json:"truncated" doc:"The provider has more than the targets listed"`
	DefaultProject   *string             `json:"default_project" doc:"The integration's project when it is among the targets, else null"`
	DefaultIssueType *TicketIssueTypeOut `json:"default_issue_type" doc:"The default project's first type that is not a sub-task named Task (Tarefa, Tarea), else Bug, else its first type that is not a sub-task, else its first; null without a default project or for teams"`
}

// TicketSyncIn sets an integration's synchronisation; absent fields keep their value.
type TicketSyncIn struct {
	WebhookSecret *string `json:"webhook_secret,omitempty" maxLength:"256" doc:"16 or more characters; empty disables inbound webhooks"`
	IntervalMin   *int    `json:"interval_min,omitempty" minimum:"5" maximum:"1440"`
	Comment       *bool   `json:"comment,omitempty"`
	Transition    *bool   `json:"transition,omitempty"`
}

// TicketLinkIn links an issue to a ticket.
type TicketLinkIn struct {
	IssueID       string  `json:"issue_id"`
	IntegrationID *string `json:"integration_id,omitempty"`
	Key           string  `json:"key" maxLength:"100"`
	URL           string  `json:"url" maxLength:"2048"`
}

// TicketLinkOut is an issue-ticket link.
type TicketLinkOut struct {
	ID            string    `json:"id"`
	IntegrationID string    `json:"integration_id"`
	Provider      string    `json:"provider"`
	IssueID       string    `json:"issue_id"`
	Key           string    `json:"key"`
	URL           string    `json:"url"`
	CreatedAt     time.Time `json:"created_at"`
}

// GenericTicketEventIn is the generic provider's inbound event (docs/webhooks.md).
// Jira and Linear send their own documents, signed in their own headers.
type GenericTicketEventIn struct {
	TicketKey      string `json:"ticket_key"`
	StatusCategory string `json:"status_category" enum:"todo,in_progress,done"`
	Timestamp      int64  `json:"timestamp" doc:"Unix seconds; refused when more than 5 minutes away"`
}

// TicketEventOut is what Vigia did with an inbound event.
type TicketEventOut struct {
	Status string `json:"status" enum:"applied,unchanged,ignored,unknown_ticket,workspace_disabled"`
}

var (
	channelIDParam     = param{Name: "channel_id", In: "path", Type: "string", Required: true, MaxLen: 64}
	integrationIDParam = param{Name: "integration_id", In: "path", Type: "string", Required: true, MaxLen: 64}
)

func (s *Server) webhookRoutes() {
	const tag = "notifications"
	const sessionOnly = " Session of an admin or member only: API tokens get 403 token_read_only."
	s.register(operation{ID: "createNotificationChannel", Method: http.MethodPost, Path: "/api/v1/notification-channels", Tag: tag,
		Summary: "Create a webhook channel; its signing secret is returned once", Body: ChannelIn{}, Response: ChannelCreatedOut{},
		Status: http.StatusCreated, Desc: "The URL is checked (https, no user information, public addresses only) and never echoed; " +
			"a sent signing_secret is ignored. Without a team, only admins create channels when restricted-access domains exist." + sessionOnly},
		s.handleChannelCreate)
	s.register(operation{ID: "listNotificationChannels", Method: http.MethodGet, Path: "/api/v1/notification-channels", Tag: tag,
		Summary: "Channels of the workspace", List: true, Response: []ChannelOut{}, Desc: sessionOnly}, s.handleChannelList)
	s.register(operation{ID: "getNotificationChannel", Method: http.MethodGet, Path: "/api/v1/notification-channels/{channel_id}", Tag: tag,
		Summary: "One channel", Params: []param{channelIDParam}, Response: ChannelOut{}, Desc: sessionOnly}, s.handleChannelGet)
	s.register(operation{ID: "updateNotificationChannel", Method: http.MethodPatch, Path: "/api/v1/notification-channels/{channel_id}", Tag: tag,
		Summary: "Change a channel", Params: []param{channelIDParam}, Body: ChannelPatchIn{}, Response: ChannelOut{},
		Desc: "Permission rules are checked on the channel as it is and as it will be. A URL change keeps the secret." + sessionOnly},
		s.handleChannelPatch)
	s.register(operation{ID: "deleteNotificationChannel", Method: http.MethodDelete, Path: "/api/v1/notification-channels/{channel_id}", Tag: tag,
		Summary: "Delete a channel and its delivery log", Params: []param{channelIDParam}, Status: http.StatusNoContent, Desc: sessionOnly},
		s.handleChannelDelete)
	s.register(operation{ID: "rotateNotificationChannelSecret", Method: http.MethodPost, Path: "/api/v1/notification-channels/{channel_id}/rotate-secret",
		Tag: tag, Summary: "New signing secret, returned once; immediate switch (admins only)", Params: []param{channelIDParam},
		Response: SigningSecretOut{}}, s.handleChannelRotate)
	s.register(operation{ID: "testNotificationChannel", Method: http.MethodPost, Path: "/api/v1/notification-channels/{channel_id}/test",
		Tag: tag, Summary: "Send one service.test delivery now, without retry", Params: []param{channelIDParam}, Response: ChannelTestOut{},
		Desc: "Results: accepted and signed (2xx), signature refused (401, 403), accepted but unsigned, HTTP error or timeout, " +
			"destination refused. The URL is never in the answer." + sessionOnly}, s.handleChannelTest)
	s.register(operation{ID: "previewNotificationChannel", Method: http.MethodGet, Path: "/api/v1/notification-channels/{channel_id}/preview",
		Tag: tag, Summary: "How many alerts of the last days would have reached the channel", Response: ChannelPreviewOut{},
		Params: []param{channelIDParam, {Name: "days", In: "query", Type: "integer", Min: intp(1), Max: intp(366), Default: int64(30)}},
		Desc:   sessionOnly}, s.handleChannelPreview)
	s.register(operation{ID: "listNotificationChannelDeliveries", Method: http.MethodGet, Path: "/api/v1/notification-channels/{channel_id}/deliveries",
		Tag: tag, Summary: "Delivery log with every attempt, newest first (admins only)", Params: []param{channelIDParam}, List: true,
		ListDefault: notify.PageDefault, Response: []DeliveryOut{}}, s.handleChannelDeliveries)
	s.register(operation{ID: "syncTicketIntegration", Method: http.MethodPut, Path: "/api/v1/notification-channels/tickets/{integration_id}/sync",
		Tag: "tickets", Summary: "Webhook secret, polling interval, comments and transitions of a ticket integration (admins)",
		Params: []param{integrationIDParam}, Body: TicketSyncIn{}, Response: TicketIntegrationOut{},
		Errors: map[int]string{http.StatusBadRequest: "ticket_sync_unsupported: the provider has no comments or transitions"},
		Desc: "Answers webhook_path. Providers without comments and transitions answer 400 ticket_sync_unsupported to comment or " +
			"transition true."}, s.handleTicketSync)
	s.register(operation{ID: "receiveTicketEvent", Method: http.MethodPost, Path: "/api/v1/webhooks/tickets/{integration_id}", Tag: "tickets",
		Public: true, Summary: "Signed inbound tracker event about a linked ticket",
		Params: []param{{Name: "integration_id", In: "path", Type: "string", Required: true}}, Body: GenericTicketEventIn{}, RawBody: true,
		Response: TicketEventOut{}, Errors: map[int]string{http.StatusUnauthorized: "signature_invalid: bad signature, unknown integration or no secret",
			http.StatusBadRequest: "timestamp_invalid (missing or older than 5 minutes) or bad_request (a body the provider's format does not read)"},
		Desc: "Checks in order: 429 (120 per minute per integration and IP), 413 (1 MB), 401 " +
			"signature_invalid (bad signature, unknown integration or no secret: identical answers), 400 timestamp_invalid " +
			"(missing or older than 5 minutes), then applies: a closed ticket resolves its linked issues. Jira signs X-Hub-Signature: " +
			"sha256=<hex>, Linear Linear-Signature: <hex>, the generic provider X-Ticket-Signature (docs/webhooks.md)."},
		s.handleTicketEvent)
	s.register(operation{ID: "listNotifications", Method: http.MethodGet, Path: "/api/v1/notifications", Tag: tag,
		Summary: "In-app notifications, held ones included, newest first", List: true, ListDefault: notify.PageDefault, Response: []NotificationOut{},
		Params: []param{{Name: "held", In: "query", Type: "boolean"}, {Name: "event", In: "query", Type: "string", MaxLen: 64}}},
		s.handleNotificationList)
	s.register(operation{ID: "listNotificationMutes", Method: http.MethodGet, Path: "/api/v1/notification-mutes", Tag: tag,
		Summary: "Alert mutes that have not ended", List: true, Response: []MuteOut{}}, s.handleMuteList)
	s.register(operation{ID: "createNotificationMute", Method: http.MethodPost, Path: "/api/v1/notification-mutes", Tag: tag,
		Summary: "Mute alerts of the workspace, a connection, a dataset or problem types until ends_at", Body: MuteIn{},
		Response: MuteOut{}, Status: http.StatusCreated, Desc: "Holds back what part 6 says mutes cover; held items stay in " +
			"GET /api/v1/notifications." + sessionOnly}, s.handleMuteCreate)
	s.register(operation{ID: "deleteNotificationMute", Method: http.MethodDelete, Path: "/api/v1/notification-mutes/{mute_id}", Tag: tag,
		Summary: "End a mute now", Params: []param{{Name: "mute_id", In: "path", Type: "string", Required: true, MaxLen: 64}},
		Status: http.StatusNoContent, Desc: sessionOnly}, s.handleMuteDelete)
	s.register(operation{ID: "getOnCallRota", Method: http.MethodGet, Path: "/api/v1/oncall/rota", Tag: tag,
		Summary: "The workspace's on-call rota (admins)", Response: RotaOut{}}, s.handleRotaGet)
	s.register(operation{ID: "setOnCallRota", Method: http.MethodPut, Path: "/api/v1/oncall/rota", Tag: tag,
		Summary: "Set the on-call rota: levels of people with minutes to acknowledge, then a team (admins)", Body: RotaIn{},
		Response: RotaOut{}}, s.handleRotaSet)
	s.register(operation{ID: "deleteOnCallRota", Method: http.MethodDelete, Path: "/api/v1/oncall/rota", Tag: tag,
		Summary: "Remove the on-call rota (admins)", Status: http.StatusNoContent}, s.handleRotaDelete)
	s.register(operation{ID: "listTicketIntegrations", Method: http.MethodGet, Path: "/api/v1/tickets/integrations", Tag: "tickets",
		Summary: "Ticket integrations of the workspace", List: true, Response: []TicketIntegrationOut{}}, s.handleIntegrationList)
	s.register(operation{ID: "createTicketIntegration", Method: http.MethodPost, Path: "/api/v1/tickets/integrations", Tag: "tickets",
		Summary: "Add a ticket integration (admins)", Body: TicketIntegrationIn{}, Response: TicketIntegrationOut{},
		Status: http.StatusCreated, Desc: "credentials (optional) are checked and sealed as PUT …/credentials does."}, s.handleIntegrationCreate)
	s.register(operation{ID: "getTicketIntegration", Method: http.MethodGet, Path: "/api/v1/tickets/integrations/{integration_id}",
		Tag: "tickets", Summary: "One ticket integration with its polling state", Params: []param{integrationIDParam},
		Response: TicketIntegrationOut{}, Desc: "Credentials and the webhook secret are never returned, only credentials_set and " +
			"webhook_secret_set."}, s.handleIntegrationGet)
	s.register(operation{ID: "setTicketIntegrationCredentials", Method: http.MethodPut,
		Path: "/api/v1/tickets/integrations/{integration_id}/credentials", Tag: "tickets",
		Summary: "Set or remove the API credentials polling and write-back use (admins)", Params: []param{integrationIDParam},
		Body: TicketCredentialsIn{}, Response: TicketIntegrationOut{}, Desc: "Jira: email and API token (HTTP Basic); Linear: API key; " +
			"generic: bearer token. Sealed at rest and never returned, logged or audited; an empty api_token removes them. The base " +
			"URL is checked as channel URLs are (https, public addresses; 422 on base_url). Setting them makes the first poll due " +
			"now and ends any back-off. Session of an admin only: API tokens get 403."}, s.handleIntegrationCredentials)
	s.register(operation{ID: "listTicketTargets", Method: http.MethodGet, Path: "/api/v1/tickets/integrations/{integration_id}/targets",
		Tag: "tickets", Summary: "Projects (with issue types) or teams the integration's tracker offers, read from the provider",
		Params: []param{integrationIDParam}, Response: TicketTargetsOut{}, Desc: "Up to 100 targets: Jira projects with their " +
			"issue types, Linear teams (empty issue_types), the generic provider's GET {base_url}/targets (docs/webhooks.md), plus " +
			"default_project and default_issue_type. Called with the integration's API credentials, which never come back; the " +
			"read does not change the polling state. Vigia has no plans: this operation never answers 402.",
		Errors: map[int]string{http.StatusConflict: "ticket_credentials_missing: the integration has no API credentials",
			http.StatusBadGateway: "ticket_provider_failed (the provider answered 5xx, 401, 403, 429, a redirect or an undocumented " +
				"answer, timed out or could not be reached) or ticket_destination_refused (anti-SSRF refused its address)"}},
		s.handleTicketTargets)
	s.register(operation{ID: "linkTicket", Method: http.MethodPost, Path: "/api/v1/tickets/link", Tag: "tickets",
		Summary: "Link an issue to a ticket", Body: TicketLinkIn{}, Response: TicketLinkOut{}, Status: http.StatusCreated,
		Desc: "The key must be the URL's key and belong to the integration's project (422 otherwise); without integration_id " +
			"the integration whose base URL has the ticket's host is used."}, s.handleTicketLink)
}

func toChannelOut(c notify.Channel) ChannelOut {
	out := ChannelOut{ID: c.ID, Name: c.Name, Kind: c.Kind, Config: ChannelConfigOut{WebhookURL: c.DisplayURL, Locale: c.Locale},
		MinSeverity: c.MinSeverity, Digest: c.Digest, EventKinds: nonNilStrings(c.EventKinds),
		Scope: ScopeOut{DomainIDs: nonNilStrings(c.Scope.DomainIDs), ConnectionIDs: nonNilStrings(c.Scope.ConnectionIDs),
			DatasetIDs: nonNilStrings(c.Scope.DatasetIDs), IssueTypes: nonNilStrings(c.Scope.IssueTypes),
			IncludeAutoMonitors: c.Scope.IncludeAutoMonitors},
		TeamID: c.TeamID, Signed: c.Signed, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Last != nil {
		status, at := c.Last.Status, c.Last.At
		out.LastDeliveryStatus, out.LastDeliveryAt, out.LastDeliveryError = &status, &at, c.Last.Error
	}
	return out
}

func toScopeInput(in *ScopeIn) *notify.ScopeInput {
	if in == nil {
		return nil
	}
	return &notify.ScopeInput{DomainIDs: in.DomainIDs, ConnectionIDs: in.ConnectionIDs, DatasetIDs: in.DatasetIDs,
		IssueTypes: in.IssueTypes, IncludeAutoMonitors: in.IncludeAutoMonitors}
}

// nullableString reads a JSON value that may be a string or null: isNull reports an
// explicit null; absent (empty raw) gives neither.
func nullableString(raw json.RawMessage, loc ...string) (v *string, isNull bool, err error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false, vigia.Invalid(vigia.Field("string_type", nil, loc...))
	}
	return &s, false, nil
}

func (s *Server) handleChannelCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body ChannelIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	locale, _, err := nullableString(body.Config.Locale, "config", "locale")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, secret, err := s.deps.Notify.CreateChannel(r.Context(), notify.ChannelInput{Name: body.Name, Kind: body.Kind,
		WebhookURL: body.Config.WebhookURL, Locale: locale, MinSeverity: body.MinSeverity, Digest: body.Digest,
		EventKinds: body.EventKinds, Scope: toScopeInput(body.Scope), TeamID: body.TeamID})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, ChannelCreatedOut{ChannelOut: toChannelOut(c), SigningSecret: secret})
}

func (s *Server) handleChannelList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Notify.ListChannels(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ChannelOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, toChannelOut(c))
	}
	list(w, res.Total, out)
}

func (s *Server) handleChannelGet(w http.ResponseWriter, r *http.Request, in *input) {
	c, err := s.deps.Notify.Channel(r.Context(), in.Path("channel_id"))
	s.reply(w, r, err, func() any { return toChannelOut(c) })
}

func (s *Server) handleChannelPatch(w http.ResponseWriter, r *http.Request, in *input) {
	var body ChannelPatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	up := notify.ChannelUpdate{Name: body.Name, MinSeverity: body.MinSeverity, Digest: body.Digest, EventKinds: body.EventKinds,
		Scope: toScopeInput(body.Scope)}
	if body.Kind != nil && *body.Kind != notify.KindWebhook {
		s.writeError(w, r, invalid("enum", "kind"))
		return
	}
	if body.Config != nil {
		if body.Config.WebhookURL != "" {
			up.WebhookURL = &body.Config.WebhookURL
		}
		var err error
		if up.Locale, up.ClearLocale, err = nullableString(body.Config.Locale, "config", "locale"); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	var err error
	if up.TeamID, up.ClearTeam, err = nullableString(body.TeamID, "team_id"); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.deps.Notify.UpdateChannel(r.Context(), in.Path("channel_id"), up)
	s.reply(w, r, err, func() any { return toChannelOut(c) })
}

func (s *Server) handleChannelDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Notify.DeleteChannel(r.Context(), in.Path("channel_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleChannelRotate(w http.ResponseWriter, r *http.Request, in *input) {
	secret, err := s.deps.Notify.RotateSecret(r.Context(), in.Path("channel_id"))
	s.reply(w, r, err, func() any { return SigningSecretOut{SigningSecret: secret} })
}

func (s *Server) handleChannelTest(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Notify.TestChannel(r.Context(), in.Path("channel_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ChannelTestOut{OK: res.OK, Result: res.Result, Message: res.Message, StatusCode: res.StatusCode,
		DeliveryID: res.DeliveryID, Signed: res.Signed})
}

func (s *Server) handleChannelPreview(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := s.deps.Notify.PreviewChannel(r.Context(), in.Path("channel_id"), in.Int("days"))
	s.reply(w, r, err, func() any {
		return ChannelPreviewOut{Days: p.Days, Alerts: p.Alerts, Deliveries: p.Deliveries, Held: p.Held}
	})
}

func toDeliveryOut(d notify.Delivery) DeliveryOut {
	out := DeliveryOut{ID: d.ID, Event: d.Event, Status: d.Status, Test: d.Test, IdempotencyKey: d.IdempotencyKey,
		Attempts: make([]DeliveryAttemptOut, 0, len(d.AttemptLog)), NextAttemptAt: d.NextAttemptAt,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError, CreatedAt: d.CreatedAt, FinishedAt: d.FinishedAt}
	for _, a := range d.AttemptLog {
		at := DeliveryAttemptOut{N: a.N, At: a.At, Outcome: a.Outcome, DurationMS: a.DurationMS}
		if a.StatusCode != 0 {
			code := a.StatusCode
			at.StatusCode = &code
		}
		if a.Error != "" {
			e := a.Error
			at.Error = &e
		}
		out.Attempts = append(out.Attempts, at)
	}
	return out
}

func (s *Server) handleChannelDeliveries(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Notify.Deliveries(r.Context(), in.Path("channel_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DeliveryOut, 0, len(res.Items))
	for _, d := range res.Items {
		out = append(out, toDeliveryOut(d))
	}
	list(w, res.Total, out)
}

func toNotificationOut(n notify.Notification) NotificationOut {
	params := n.Params
	if params == nil {
		params = map[string]any{}
	}
	return NotificationOut{ID: n.ID, Event: n.Event, Code: n.Code, Title: n.Title, Body: n.Body, Params: params,
		Severity: n.Severity, DatasetIDs: nonNilStrings(n.DatasetIDs), DomainID: n.DomainID, IssueID: n.IssueID, ScanID: n.ScanID,
		Held: n.Held, MuteIDs: nonNilStrings(n.MuteIDs), Deliveries: n.Deliveries, CreatedAt: n.CreatedAt}
}

func (s *Server) handleNotificationList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Notify.Notifications(r.Context(), notify.NotificationFilter{Held: in.Bool("held"),
		Event: in.String("event"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]NotificationOut, 0, len(res.Items))
	for _, n := range res.Items {
		out = append(out, toNotificationOut(n))
	}
	list(w, res.Total, out)
}

func toMuteOut(m notify.Mute) MuteOut {
	return MuteOut{ID: m.ID, Scope: m.Scope, ConnectionID: m.ConnectionID, DatasetID: m.DatasetID,
		IssueTypes: nonNilStrings(m.IssueTypes), Reason: m.Reason, EndsAt: m.EndsAt, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt}
}

func (s *Server) handleMuteList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Notify.Mutes(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]MuteOut, 0, len(res.Items))
	for _, m := range res.Items {
		out = append(out, toMuteOut(m))
	}
	list(w, res.Total, out)
}

func (s *Server) handleMuteCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body MuteIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := s.deps.Notify.CreateMute(r.Context(), notify.MuteInput{Scope: body.Scope, ConnectionID: body.ConnectionID,
		DatasetID: body.DatasetID, IssueTypes: body.IssueTypes, EndsAt: body.EndsAt, Reason: body.Reason})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toMuteOut(m))
}

func (s *Server) handleMuteDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Notify.DeleteMute(r.Context(), in.Path("mute_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func toRotaOut(rt oncall.Rota) RotaOut {
	out := RotaOut{TeamID: rt.TeamID, MinSeverity: rt.MinSeverity, CreatedAt: rt.CreatedAt, UpdatedAt: rt.UpdatedAt,
		Levels: make([]RotaLevelIO, 0, len(rt.Levels))}
	for _, l := range rt.Levels {
		out.Levels = append(out.Levels, RotaLevelIO{UserID: l.UserID, Minutes: l.Minutes})
	}
	return out
}

func (s *Server) handleRotaGet(w http.ResponseWriter, r *http.Request, _ *input) {
	rt, err := s.deps.OnCall.OnCallRota(r.Context())
	s.reply(w, r, err, func() any { return toRotaOut(rt) })
}

func (s *Server) handleRotaSet(w http.ResponseWriter, r *http.Request, in *input) {
	var body RotaIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	levels := make([]oncall.RotaLevel, 0, len(body.Levels))
	for _, l := range body.Levels {
		levels = append(levels, oncall.RotaLevel{UserID: l.UserID, Minutes: l.Minutes})
	}
	rt, err := s.deps.OnCall.SetOnCallRota(r.Context(), oncall.RotaInput{Levels: levels, TeamID: body.TeamID, MinSeverity: body.MinSeverity})
	s.reply(w, r, err, func() any { return toRotaOut(rt) })
}

func (s *Server) handleRotaDelete(w http.ResponseWriter, r *http.Request, _ *input) {
	if err := s.deps.OnCall.DeleteOnCallRota(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func toIntegrationOut(t ticket.Integration) TicketIntegrationOut {
	return TicketIntegrationOut{ID: t.ID, Name: t.Name, Provider: t.Provider, BaseURL: t.BaseURL, Project: t.Project,
		WebhookSecretSet: t.SecretSet, WebhookPath: t.WebhookPath(), IntervalMin: t.IntervalMin, Comment: t.Comment,
		Transition: t.Transition, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, CredentialsSet: t.CredentialsSet,
		LastPollAt: t.LastPollAt, NextPollAt: t.NextPollAt, LastError: t.LastError, LastErrorAt: t.LastErrorAt,
		BackoffUntil: t.BackoffUntil, TicketErrors: t.TicketErrors, PendingWrites: t.PendingWrites, FailedWrites: t.FailedWrites}
}

func toCredentialsInput(in *TicketCredentialsIn) *ticket.CredentialsInput {
	if in == nil {
		return nil
	}
	c := &ticket.CredentialsInput{Email: in.Email}
	if in.APIToken != nil {
		c.APIToken = *in.APIToken
	}
	return c
}

func (s *Server) handleIntegrationGet(w http.ResponseWriter, r *http.Request, in *input) {
	t, err := s.deps.Tickets.Integration(r.Context(), in.Path("integration_id"))
	s.reply(w, r, err, func() any { return toIntegrationOut(t) })
}

func (s *Server) handleTicketTargets(w http.ResponseWriter, r *http.Request, in *input) {
	tt, err := s.deps.Tickets.Targets(r.Context(), in.Path("integration_id"))
	s.reply(w, r, err, func() any { return toTargetsOut(tt) })
}

func toIssueTypeOut(it ticket.IssueType) TicketIssueTypeOut {
	return TicketIssueTypeOut{ID: it.ID, Name: it.Name, Subtask: it.Subtask}
}

func toTargetsOut(tt ticket.Targets) TicketTargetsOut {
	out := TicketTargetsOut{Targets: make([]TicketTargetOut, 0, len(tt.Targets)), Truncated: tt.Truncated,
		DefaultProject: tt.DefaultProject}
	for _, tg := range tt.Targets {
		types := make([]TicketIssueTypeOut, 0, len(tg.IssueTypes))
		for _, it := range tg.IssueTypes {
			types = append(types, toIssueTypeOut(it))
		}
		out.Targets = append(out.Targets, TicketTargetOut{Key: tg.Key, Name: tg.Name, IssueTypes: types})
	}
	if tt.DefaultIssueType != nil {
		it := toIssueTypeOut(*tt.DefaultIssueType)
		out.DefaultIssueType = &it
	}
	return out
}

func (s *Server) handleIntegrationCredentials(w http.ResponseWriter, r *http.Request, in *input) {
	var body TicketCredentialsIn
	err := in.Decode(&body, 0)
	if err == nil {
		err = required(present("api_token", body.APIToken != nil))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Tickets.SetCredentials(r.Context(), in.Path("integration_id"), *toCredentialsInput(&body))
	s.reply(w, r, err, func() any { return toIntegrationOut(t) })
}

func (s *Server) handleIntegrationList(w http.ResponseWriter, r *http.Request, _ *input) {
	ts, err := s.deps.Tickets.Integrations(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]TicketIntegrationOut, 0, len(ts))
	for _, t := range ts {
		out = append(out, toIntegrationOut(t))
	}
	list(w, len(out), out)
}

func (s *Server) handleIntegrationCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body TicketIntegrationIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Tickets.CreateIntegration(r.Context(), ticket.IntegrationInput{Name: body.Name, Provider: body.Provider,
		BaseURL: body.BaseURL, Project: body.Project, Credentials: toCredentialsInput(body.Credentials)})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toIntegrationOut(t))
}

func (s *Server) handleTicketSync(w http.ResponseWriter, r *http.Request, in *input) {
	var body TicketSyncIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.deps.Tickets.UpdateSync(r.Context(), in.Path("integration_id"), ticket.SyncInput{WebhookSecret: body.WebhookSecret,
		IntervalMin: body.IntervalMin, Comment: body.Comment, Transition: body.Transition})
	s.reply(w, r, err, func() any { return toIntegrationOut(t) })
}

func (s *Server) handleTicketLink(w http.ResponseWriter, r *http.Request, in *input) {
	var body TicketLinkIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.deps.Tickets.LinkTicket(r.Context(), ticket.LinkInput{IssueID: body.IssueID, IntegrationID: body.IntegrationID,
		Key: body.Key, URL: body.URL})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, TicketLinkOut{ID: l.ID, IntegrationID: l.IntegrationID, Provider: l.Provider, IssueID: l.IssueID,
		Key: l.Key, URL: l.URL, CreatedAt: l.CreatedAt})
}

func (s *Server) handleTicketEvent(w http.ResponseWriter, r *http.Request, in *input) {
	status, err := s.deps.Tickets.ReceiveTicketEvent(r.Context(), ticket.InboundRequest{IntegrationID: in.Path("integration_id"),
		ClientIP: s.clientAddr.of(r), Header: r.Header, Body: r.Body})
	s.reply(w, r, err, func() any { return TicketEventOut{Status: status} })
}
