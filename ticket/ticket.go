package ticket

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// Ticket providers. The two issue trackers support inbound webhooks, comments and
// transitions; the generic provider is Vigia's own documented inbound contract
// (docs/webhooks.md), with no comments or transitions.
const (
	ProviderJira    = "jira"
	ProviderLinear  = "linear"
	ProviderGeneric = "generic"
)

// Providers lists the ticket providers.
var Providers = []string{ProviderJira, ProviderLinear, ProviderGeneric}

// TicketIntegration is a connection to an issue tracker. Its webhook secret and API
// credentials are sealed and never returned.
type Integration struct {
	ID             string
	WorkspaceID    string
	Name           string
	Provider       string
	BaseURL        *string
	Project        *string
	SecretSet      bool
	CredentialsSet bool
	IntervalMin    int
	Comment        bool
	Transition     bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
	SealedSecret   []byte

	// SealedCredentials are the API credentials polling and write-back use.
	SealedCredentials []byte
	// Sync state: the last and next poll, the code of the last run's provider failure
	// (nil after a good run), and the back-off it caused.
	LastPollAt     *time.Time
	NextPollAt     *time.Time
	LastError      *string
	LastErrorAt    *time.Time
	BackoffUntil   *time.Time
	BackoffSeconds int
	// TicketErrors counts linked tickets whose last read failed on their own;
	// PendingWrites and FailedWrites count write-backs.
	TicketErrors  int
	PendingWrites int
	FailedWrites  int
}

// WebhookPath is where the tracker sends its events, or nil while the integration has
// no webhook secret or its provider has no inbound webhooks.
func (t Integration) WebhookPath() *string {
	if !t.SecretSet || !capabilities[t.Provider].inbound {
		return nil
	}
	p := "/api/v1/webhooks/tickets/" + t.ID
	return &p
}

// IntegrationInput is a new ticket integration, optionally with its API credentials.
type IntegrationInput struct {
	Name        string
	Provider    string
	BaseURL     *string
	Project     *string
	Credentials *CredentialsInput
}

// SyncInput changes an integration's synchronisation; nil fields keep their value. An
// empty WebhookSecret disables inbound webhooks.
type SyncInput struct {
	WebhookSecret *string
	IntervalMin   *int
	Comment       *bool
	Transition    *bool
}

// TicketLink links an issue to a ticket of an integration.
type Link struct {
	ID            string
	WorkspaceID   string
	IntegrationID string
	Provider      string
	IssueID       string
	Key           string
	URL           string
	CreatedBy     string
	CreatedAt     time.Time
}

// LinkInput links an issue to a ticket; without IntegrationID the workspace's
// integration whose base URL has the ticket URL's host is used.
type LinkInput struct {
	IssueID       string
	IntegrationID *string
	Key           string
	URL           string
}

var (
	projectRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,31}$`)
	ticketKeyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,31}-[0-9]{1,10}$`)
	genericKey  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$`)
)

// minWebhookSecret is the shortest webhook secret accepted.
const minWebhookSecret = 16

// CreateIntegration adds a ticket integration (admin sessions), with its API credentials
// when given (see SetCredentials). Comments default on for the issue trackers and off for
// the generic provider. It returns KindInvalid for a bad name, provider, base URL,
// project or credentials and KindConflict for a name in use.
func (s *Service) CreateIntegration(ctx context.Context, in IntegrationInput) (Integration, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Integration{}, err
	}
	now := s.clock.Now()
	t := Integration{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Name: strings.TrimSpace(in.Name),
		Provider: in.Provider, IntervalMin: DefaultIntervalMin, CreatedAt: now, UpdatedAt: now}
	fields := checkName(t.Name)
	if !slices.Contains(Providers, in.Provider) {
		fields = append(fields, field("enum", nil, "provider"))
	}
	t.Comment = capabilities[in.Provider].outbound
	if in.BaseURL != nil {
		u, err := url.Parse(*in.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(*in.BaseURL) > 2048 {
			fields = append(fields, field("value_error", nil, "base_url"))
		} else {
			b := strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/")
			t.BaseURL = &b
		}
	}
	if in.Project != nil {
		if !projectRE.MatchString(*in.Project) {
			fields = append(fields, field("string_pattern_mismatch", nil, "project"))
		}
		proj := strings.ToUpper(*in.Project)
		t.Project = &proj
	}
	if len(fields) > 0 {
		return Integration{}, vigia.Invalid(fields...)
	}
	if in.Credentials != nil {
		if t.SealedCredentials, err = s.sealCredentials(ctx, t, *in.Credentials); err != nil {
			return Integration{}, err
		}
		t.CredentialsSet = t.SealedCredentials != nil
	}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateIntegration(ctx, t); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "ticket_integration.create", "ticket_integration", t.ID,
			map[string]any{"provider": t.Provider, "credentials_set": t.CredentialsSet}, now)
	})
	return t, err
}

// Integrations lists the workspace's ticket integrations.
func (s *Service) Integrations(ctx context.Context) ([]Integration, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Integrations(ctx, p.WorkspaceID)
}

// UpdateSync sets an integration's synchronisation (admin sessions): the webhook secret
// (16 or more characters; empty disables inbound webhooks), the polling interval (5-1440
// minutes), and whether Vigia comments on and transitions linked tickets. Providers
// without comments and transitions refuse them with KindBadRequest. It returns
// KindInvalid for bounds, KindNotFound for an unknown integration.
func (s *Service) UpdateSync(ctx context.Context, id string, in SyncInput) (Integration, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Integration{}, err
	}
	if !vigia.ValidID(id) {
		return Integration{}, vigia.NotFound()
	}
	t, err := s.store.IntegrationByID(ctx, p.WorkspaceID, id)
	if err != nil {
		return Integration{}, err
	}
	var fields []vigia.FieldError
	if in.WebhookSecret != nil && *in.WebhookSecret != "" && len(*in.WebhookSecret) < minWebhookSecret {
		fields = append(fields, field("string_too_short", map[string]any{"min_length": minWebhookSecret}, "webhook_secret"))
	}
	if in.WebhookSecret != nil && len(*in.WebhookSecret) > 256 {
		fields = append(fields, field("string_too_long", map[string]any{"max_length": 256}, "webhook_secret"))
	}
	if in.IntervalMin != nil && (*in.IntervalMin < 5 || *in.IntervalMin > 1440) {
		typ, ctxb := "greater_than_equal", map[string]any{"ge": 5}
		if *in.IntervalMin > 1440 {
			typ, ctxb = "less_than_equal", map[string]any{"le": 1440}
		}
		fields = append(fields, field(typ, ctxb, "interval_min"))
	}
	if len(fields) > 0 {
		return Integration{}, vigia.Invalid(fields...)
	}
	spec := capabilities[t.Provider]
	if !spec.outbound && (in.Comment != nil && *in.Comment || in.Transition != nil && *in.Transition) {
		return Integration{}, vigia.BadRequest("ticket_sync_unsupported", "error.ticket_sync_unsupported")
	}
	if !spec.inbound && in.WebhookSecret != nil && *in.WebhookSecret != "" {
		return Integration{}, vigia.BadRequest("ticket_sync_unsupported", "error.ticket_sync_unsupported")
	}
	if in.IntervalMin != nil {
		t.IntervalMin = *in.IntervalMin
	}
	if in.Comment != nil {
		t.Comment = *in.Comment
	}
	if in.Transition != nil {
		t.Transition = *in.Transition
	}
	secretChanged := in.WebhookSecret != nil
	if secretChanged {
		if *in.WebhookSecret == "" {
			t.SealedSecret, t.SecretSet = nil, false
		} else {
			if t.SealedSecret, err = s.box.Seal([]byte(*in.WebhookSecret), integrationAAD(t.ID)); err != nil {
				return Integration{}, vigia.Internal(err)
			}
			t.SecretSet = true
		}
	}
	t.UpdatedAt = s.clock.Now()
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateIntegrationSync(ctx, t, secretChanged); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "ticket_integration.sync", "ticket_integration", t.ID,
			map[string]any{"webhook_secret_changed": secretChanged, "interval_min": t.IntervalMin, "comment": t.Comment,
				"transition": t.Transition}, t.UpdatedAt)
	})
	return t, err
}

// LinkTicket links an issue the caller can see to a ticket (session of an admin or
// member). The key must be the ticket URL's key and, when the integration has a project,
// belong to it (KindInvalid otherwise). KindNotFound for an invisible issue or an
// unknown integration.
func (s *Service) LinkTicket(ctx context.Context, in LinkInput) (Link, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Link{}, err
	}
	if !vigia.ValidID(in.IssueID) {
		return Link{}, vigia.NotFound()
	}
	u, perr := url.Parse(in.URL)
	if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(in.URL) > 2048 {
		return Link{}, vigia.Invalid(field("value_error", nil, "url"))
	}
	var t Integration
	if in.IntegrationID != nil {
		if !vigia.ValidID(*in.IntegrationID) {
			return Link{}, vigia.NotFound()
		}
		if t, err = s.store.IntegrationByID(ctx, p.WorkspaceID, *in.IntegrationID); err != nil {
			return Link{}, err
		}
	} else {
		all, err := s.store.Integrations(ctx, p.WorkspaceID)
		if err != nil {
			return Link{}, err
		}
		var found []Integration
		for _, it := range all {
			if it.BaseURL != nil {
				if bu, err := url.Parse(*it.BaseURL); err == nil && strings.EqualFold(bu.Host, u.Host) {
					found = append(found, it)
				}
			}
		}
		if len(found) != 1 {
			return Link{}, vigia.Invalid(field("missing", nil, "integration_id"))
		}
		t = found[0]
	}
	key := strings.TrimSpace(in.Key)
	if t.Provider == ProviderGeneric {
		if !genericKey.MatchString(key) {
			return Link{}, vigia.Invalid(field("string_pattern_mismatch", nil, "key"))
		}
	} else {
		if !ticketKeyRE.MatchString(key) {
			return Link{}, vigia.Invalid(field("string_pattern_mismatch", nil, "key"))
		}
		key = strings.ToUpper(key)
	}
	if !urlHasKey(u, key) {
		return Link{}, vigia.Invalid(field("key_mismatch", nil, "key"))
	}
	if t.Project != nil && t.Provider != ProviderGeneric {
		proj, _, _ := strings.Cut(key, "-")
		if !strings.EqualFold(proj, *t.Project) {
			return Link{}, vigia.Invalid(field("project_mismatch", nil, "key"))
		}
	}
	visible, err := s.store.IssueVisible(ctx, catalog.ViewerOf(p), in.IssueID)
	if err != nil {
		return Link{}, err
	}
	if !visible {
		return Link{}, vigia.NotFound()
	}
	l := Link{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, IntegrationID: t.ID, Provider: t.Provider,
		IssueID: in.IssueID, Key: key, URL: in.URL, CreatedBy: actor(p), CreatedAt: s.clock.Now()}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		if l, err = s.store.CreateLink(ctx, l); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "ticket.link", "issue", l.IssueID,
			map[string]any{"integration_id": t.ID, "key": l.Key}, l.CreatedAt)
	})
	return l, err
}

// urlHasKey reports whether a ticket URL names the key as a path segment or as the
// selectedIssue query parameter (some tracker boards link that way).
func urlHasKey(u *url.URL, key string) bool {
	for _, seg := range strings.Split(u.Path, "/") {
		if strings.EqualFold(seg, key) {
			return true
		}
	}
	return strings.EqualFold(u.Query().Get("selectedIssue"), key)
}

func integrationAAD(id string) []byte { return []byte("ticket_integration.webhook_secret:" + id) }
