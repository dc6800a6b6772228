package notify

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// Bounds of channel fields.
const (
	maxNameLen    = 100
	maxScopeItems = 100
	maxIssueTypes = 20
)

var issueTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ChannelInput is a new channel. Nil fields take their defaults: min_severity warning,
// no digest, event_kinds [alerts], an empty scope that includes automatic monitors.
type ChannelInput struct {
	Name        string
	Kind        string
	WebhookURL  string
	Locale      *string
	MinSeverity *string
	Digest      *bool
	EventKinds  []string // nil: [alerts]
	Scope       *ScopeInput
	TeamID      *string
}

// ScopeInput sets a scope; nil fields keep their current value (their default on
// creation).
type ScopeInput struct {
	DomainIDs           []string
	ConnectionIDs       []string
	DatasetIDs          []string
	IssueTypes          []string
	IncludeAutoMonitors *bool
}

// ChannelUpdate changes a channel; nil fields keep their value. ClearLocale and
// ClearTeam set those fields back to null. A new WebhookURL keeps the secret.
type ChannelUpdate struct {
	Name        *string
	WebhookURL  *string
	Locale      *string
	ClearLocale bool
	MinSeverity *string
	Digest      *bool
	EventKinds  []string // nil keeps the current value
	Scope       *ScopeInput
	TeamID      *string
	ClearTeam   bool
}

func field(typ string, ctx map[string]any, loc ...string) vigia.FieldError {
	return vigia.Field(typ, ctx, loc...)
}

// CreateChannel adds a webhook channel and returns it with its signing secret, which is
// shown this once. Any session of an admin or member may call it within the permission
// rules (without a team, only admins when restricted-access domains exist; the channel
// of a team that reads nothing the caller cannot read). It returns KindForbidden
// (token_read_only for API tokens, forbidden otherwise), KindInvalid for bad fields or a
// refused URL (the URL is never echoed), and KindNotFound for a team, domain,
// connection or dataset the caller cannot see.
func (s *Service) CreateChannel(ctx context.Context, in ChannelInput) (Channel, string, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Channel{}, "", err
	}
	now := s.clock.Now()
	c := Channel{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Name: strings.TrimSpace(in.Name), Kind: in.Kind,
		MinSeverity: SeverityWarning, EventKinds: []string{EventKindAlerts}, Scope: Scope{IncludeAutoMonitors: true},
		Signed: true, CreatedBy: actor(p), CreatedAt: now, UpdatedAt: now, TeamID: in.TeamID}
	if c.Kind == "" {
		c.Kind = KindWebhook
	}
	var fields []vigia.FieldError
	fields = append(fields, checkName(c.Name)...)
	if c.Kind != KindWebhook {
		fields = append(fields, field("enum", nil, "kind"))
	}
	if in.WebhookURL == "" {
		fields = append(fields, field("missing", nil, "config", "webhook_url"))
	}
	if in.Locale != nil {
		l, f := checkLocale(*in.Locale)
		fields = append(fields, f...)
		c.Locale = l
	}
	if in.MinSeverity != nil {
		c.MinSeverity = *in.MinSeverity
		fields = append(fields, checkSeverity(c.MinSeverity)...)
	}
	if in.Digest != nil {
		c.Digest = *in.Digest
	}
	if in.EventKinds != nil {
		kinds, f := checkEventKinds(in.EventKinds)
		fields = append(fields, f...)
		c.EventKinds = kinds
	}
	if in.Scope != nil {
		fields = append(fields, applyScope(&c.Scope, *in.Scope)...)
	}
	if c.TeamID != nil && !vigia.ValidID(*c.TeamID) {
		fields = append(fields, field("uuid_parsing", nil, "team_id"))
	}
	if len(fields) > 0 {
		return Channel{}, "", vigia.Invalid(fields...)
	}
	if err := s.checkReferences(ctx, p, c); err != nil {
		return Channel{}, "", err
	}
	if err := s.canManage(ctx, p, c); err != nil {
		return Channel{}, "", err
	}
	if err := s.validateURL(ctx, in.WebhookURL); err != nil {
		return Channel{}, "", err
	}
	signing := delivery.NewSecret()
	if c.SealedURL, err = s.box.Seal([]byte(in.WebhookURL), urlAAD(c.ID)); err != nil {
		return Channel{}, "", vigia.Internal(err)
	}
	if c.SealedSecret, err = s.box.Seal([]byte(signing), secretAAD(c.ID)); err != nil {
		return Channel{}, "", vigia.Internal(err)
	}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateChannel(ctx, c); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_channel.create", "notification_channel", c.ID,
			map[string]any{"name": c.Name}, now)
	})
	if err != nil {
		return Channel{}, "", err
	}
	c.DisplayURL = displayURL(in.WebhookURL)
	return c, signing, nil
}

// Channels lists the workspace's channels (session of an admin or member). URLs come
// reduced to scheme and host. It returns KindForbidden for API tokens and viewers.
func (s *Service) Channels(ctx context.Context) ([]Channel, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return nil, err
	}
	cs, err := s.store.Channels(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		s.fillDisplay(&cs[i])
	}
	return cs, nil
}

// ListChannels is Channels one page at a time, with the total.
func (s *Service) ListChannels(ctx context.Context, page vigia.Page) (vigia.List[Channel], error) {
	all, err := s.Channels(ctx)
	if err != nil {
		return vigia.List[Channel]{}, err
	}
	out := vigia.List[Channel]{Total: len(all)}
	if page.Offset < len(all) {
		out.Items = all[page.Offset:min(len(all), page.Offset+page.Limit)]
	}
	return out, nil
}

// Channel returns one channel (session of an admin or member); KindNotFound for an
// unknown id or another workspace's, KindForbidden for API tokens and viewers.
func (s *Service) Channel(ctx context.Context, id string) (Channel, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Channel{}, err
	}
	c, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return Channel{}, err
	}
	s.fillDisplay(&c)
	return c, nil
}

func (s *Service) channel(ctx context.Context, workspaceID, id string) (Channel, error) {
	if !vigia.ValidID(id) {
		return Channel{}, vigia.NotFound()
	}
	return s.store.ChannelByID(ctx, workspaceID, id)
}

// UpdateChannel changes a channel. The permission rules are checked on the channel as
// it is and as it will be; a new URL is validated and keeps the secret. It returns
// KindNotFound, KindForbidden or KindInvalid as CreateChannel does, and KindConflict
// (managed_by_config) for a channel configuration as code manages, outside apply.
func (s *Service) UpdateChannel(ctx context.Context, id string, up ChannelUpdate) (Channel, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Channel{}, err
	}
	cur, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return Channel{}, err
	}
	if err := s.canManage(ctx, p, cur); err != nil {
		return Channel{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedChannel, cur.ID); err != nil {
		return Channel{}, err
	}
	next := cur
	next.EventKinds = slices.Clone(cur.EventKinds)
	var fields []vigia.FieldError
	if up.Name != nil {
		next.Name = strings.TrimSpace(*up.Name)
		fields = append(fields, checkName(next.Name)...)
	}
	switch {
	case up.ClearLocale:
		next.Locale = nil
	case up.Locale != nil:
		l, f := checkLocale(*up.Locale)
		fields = append(fields, f...)
		next.Locale = l
	}
	if up.MinSeverity != nil {
		next.MinSeverity = *up.MinSeverity
		fields = append(fields, checkSeverity(next.MinSeverity)...)
	}
	if up.Digest != nil {
		next.Digest = *up.Digest
	}
	if up.EventKinds != nil {
		kinds, f := checkEventKinds(up.EventKinds)
		fields = append(fields, f...)
		next.EventKinds = kinds
	}
	if up.Scope != nil {
		fields = append(fields, applyScope(&next.Scope, *up.Scope)...)
	}
	switch {
	case up.ClearTeam:
		next.TeamID = nil
	case up.TeamID != nil:
		next.TeamID = up.TeamID
		if !vigia.ValidID(*up.TeamID) {
			fields = append(fields, field("uuid_parsing", nil, "team_id"))
		}
	}
	if up.WebhookURL != nil && *up.WebhookURL == "" {
		fields = append(fields, field("missing", nil, "config", "webhook_url"))
	}
	if len(fields) > 0 {
		return Channel{}, vigia.Invalid(fields...)
	}
	if err := s.checkReferences(ctx, p, next); err != nil {
		return Channel{}, err
	}
	if err := s.canManage(ctx, p, next); err != nil {
		return Channel{}, err
	}
	var newURL string
	if up.WebhookURL != nil {
		if err := s.validateURL(ctx, *up.WebhookURL); err != nil {
			return Channel{}, err
		}
		newURL = *up.WebhookURL
		if next.SealedURL, err = s.box.Seal([]byte(newURL), urlAAD(next.ID)); err != nil {
			return Channel{}, vigia.Internal(err)
		}
	}
	next.UpdatedAt = s.clock.Now()
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateChannel(ctx, next); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_channel.update", "notification_channel", next.ID,
			map[string]any{"url_changed": newURL != ""}, next.UpdatedAt)
	})
	if err != nil {
		return Channel{}, err
	}
	s.fillDisplay(&next)
	return next, nil
}

// DeleteChannel removes a channel with its delivery log. The permission rules are
// checked on the channel as it is. It returns KindNotFound or KindForbidden, and
// KindConflict (managed_by_config) for a channel configuration as code manages.
func (s *Service) DeleteChannel(ctx context.Context, id string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return err
	}
	cur, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return err
	}
	if err := s.canManage(ctx, p, cur); err != nil {
		return err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedChannel, cur.ID); err != nil {
		return err
	}
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteChannel(ctx, p.WorkspaceID, id); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_channel.delete", "notification_channel", id,
			map[string]any{"name": cur.Name}, s.clock.Now())
	})
}

// RotateSecret gives the channel a new signing secret and returns it, this once. The
// switch is immediate: the next attempt of every delivery is signed with it, and an
// unsigned channel becomes signed. Admin sessions only: KindForbidden otherwise,
// KindNotFound for an unknown channel.
func (s *Service) RotateSecret(ctx context.Context, id string) (string, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return "", err
	}
	cur, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return "", err
	}
	signing := delivery.NewSecret()
	sealed, err := s.box.Seal([]byte(signing), secretAAD(cur.ID))
	if err != nil {
		return "", vigia.Internal(err)
	}
	now := s.clock.Now()
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetChannelSecret(ctx, p.WorkspaceID, cur.ID, sealed, now); err != nil {
			return err
		}
		return s.audit(ctx, p.WorkspaceID, actor(p), "notification_channel.rotate_secret", "notification_channel", cur.ID, nil, now)
	})
	if err != nil {
		return "", err
	}
	return signing, nil
}

// canManage applies the contract's rule: admins manage every channel; without a team,
// others only while no restricted-access domain exists; the channel of a team, anyone
// who can read everything that team reads.
func (s *Service) canManage(ctx context.Context, p vigia.Principal, c Channel) error {
	if p.Role == vigia.RoleAdmin {
		return nil
	}
	var ok bool
	var err error
	if c.TeamID == nil {
		var restricted bool
		restricted, err = s.store.HasRestrictedDomains(ctx, p.WorkspaceID)
		ok = !restricted
	} else {
		ok, err = s.store.TeamReadsWithin(ctx, p.WorkspaceID, *c.TeamID, p.TeamIDs)
	}
	if err != nil {
		return err
	}
	if !ok {
		return vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
	}
	return nil
}

// checkReferences answers KindNotFound, the same as for an unknown id, when the team or
// a scoped domain, connection or dataset is not one the caller can see.
func (s *Service) checkReferences(ctx context.Context, p vigia.Principal, c Channel) error {
	if err := vigia.CheckRefs(ctx, s.store, p.WorkspaceID, vigia.RefOf(vigia.RefTeam, c.TeamID)...); err != nil {
		return err
	}
	ok, err := s.store.ScopeVisible(ctx, viewerOf(p), c.Scope)
	if err != nil {
		return err
	}
	if !ok {
		return vigia.NotFound()
	}
	return nil
}

// validateURL checks a webhook URL on save: https, no user information, a host that
// resolves only to public addresses (or is allowlisted). The URL is never echoed; the
// 422 item names the reason's stable code.
func (s *Service) validateURL(ctx context.Context, raw string) error {
	err := netguard.ValidateURL(ctx, raw, s.policy, s.resolver)
	if err == nil {
		return nil
	}
	code := netguard.URLErrorCode(err)
	if code == "" {
		code = netguard.CodeURLInvalid
	}
	return vigia.Invalid(field(code, nil, "config", "webhook_url"))
}

func (s *Service) fillDisplay(c *Channel) {
	raw, err := s.box.Open(c.SealedURL, urlAAD(c.ID))
	if err != nil {
		c.DisplayURL = ""
		return
	}
	c.DisplayURL = displayURL(string(raw))
}

// displayURL keeps scheme and host of a URL, so people recognise the receiver while the
// path and query, which often hold a token, stay secret.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

func urlAAD(channelID string) []byte    { return []byte("notification_channel.url:" + channelID) }
func secretAAD(channelID string) []byte { return []byte("notification_channel.secret:" + channelID) }

func actor(p vigia.Principal) string {
	if p.IsToken() {
		return "token:" + p.TokenID
	}
	return p.UserID
}

func checkName(name string) []vigia.FieldError {
	switch n := len([]rune(name)); {
	case n == 0:
		return []vigia.FieldError{field("string_too_short", map[string]any{"min_length": 1}, "name")}
	case n > maxNameLen:
		return []vigia.FieldError{field("string_too_long", map[string]any{"max_length": maxNameLen}, "name")}
	}
	return nil
}

func checkLocale(l string) (*string, []vigia.FieldError) {
	n := i18n.Normalize(l)
	if n == "" {
		return nil, []vigia.FieldError{field("enum", nil, "config", "locale")}
	}
	return &n, nil
}

func checkSeverity(sev string) []vigia.FieldError {
	if _, ok := severityRank[sev]; !ok {
		return []vigia.FieldError{field("enum", nil, "min_severity")}
	}
	return nil
}

func checkEventKinds(kinds []string) ([]string, []vigia.FieldError) {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if !slices.Contains(EventKinds, k) {
			return nil, []vigia.FieldError{field("enum", nil, "event_kinds")}
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// applyScope sets the given fields of a scope, validating their shape.
func applyScope(sc *Scope, in ScopeInput) []vigia.FieldError {
	var fields []vigia.FieldError
	ids := func(name string, v []string, dst *[]string) {
		if v == nil {
			return
		}
		if len(v) > maxScopeItems {
			fields = append(fields, field("too_long", map[string]any{"max_length": maxScopeItems}, "scope", name))
			return
		}
		out := make([]string, 0, len(v))
		for _, id := range v {
			if !vigia.ValidID(id) {
				fields = append(fields, field("uuid_parsing", nil, "scope", name))
				return
			}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
		*dst = out
	}
	ids("domain_ids", in.DomainIDs, &sc.DomainIDs)
	ids("connection_ids", in.ConnectionIDs, &sc.ConnectionIDs)
	ids("dataset_ids", in.DatasetIDs, &sc.DatasetIDs)
	if in.IssueTypes != nil {
		if len(in.IssueTypes) > maxIssueTypes {
			fields = append(fields, field("too_long", map[string]any{"max_length": maxIssueTypes}, "scope", "issue_types"))
		} else {
			out := make([]string, 0, len(in.IssueTypes))
			for _, t := range in.IssueTypes {
				if !issueTypeRE.MatchString(t) {
					fields = append(fields, field("string_pattern_mismatch", nil, "scope", "issue_types"))
					break
				}
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
			sc.IssueTypes = out
		}
	}
	if in.IncludeAutoMonitors != nil {
		sc.IncludeAutoMonitors = *in.IncludeAutoMonitors
	}
	return fields
}

// audit appends an entry to the workspace activity log.
func (s *Service) audit(ctx context.Context, workspaceID, actor, action, subjectType, subjectID string, details map[string]any, at time.Time) error {
	return s.store.AddActivity(ctx, event.Activity{WorkspaceID: workspaceID, Actor: actor, Action: action,
		SubjectType: subjectType, SubjectID: subjectID, Details: details, CreatedAt: at})
}
