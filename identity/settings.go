package identity

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/plan"
)

// Locales are the locales a person or a workspace may choose (GET/PATCH /auth/me,
// PUT /workspace/locale).
var Locales = []string{"pt-PT", "pt-BR", "en-GB", "en-US", "es-ES", "de-CH", "fr-CH"}

// Currencies are the workspace currencies; none set means EUR.
var Currencies = []string{"EUR", "USD", "GBP", "CHF", "BRL"}

// DefaultLocale and DefaultCurrency apply when nothing is set.
const (
	DefaultLocale   = "pt-PT"
	DefaultCurrency = "EUR"
)

// SettingsStore is the persistence of workspace and account settings.
type SettingsStore interface {
	// UpdateWorkspaceLocale sets the default locale (nil: none) and time zone.
	UpdateWorkspaceLocale(ctx context.Context, workspaceID string, locale *string, timezone string) error
	// UpdateWorkspaceCurrency sets the currency (nil: none, EUR).
	UpdateWorkspaceCurrency(ctx context.Context, workspaceID string, currency *string) error
	// UpdateWorkspacePlan sets the plan.
	UpdateWorkspacePlan(ctx context.Context, workspaceID string, p plan.Plan) error
	// UserByID returns a person of the workspace; KindNotFound if none.
	UserByID(ctx context.Context, workspaceID, userID string) (User, error)
	// UpdateUserSettings writes the person's locale and time zone (nil: the workspace's).
	UpdateUserSettings(ctx context.Context, workspaceID, userID string, locale, timezone *string) error
}

// Account is the calling person with their settings and the workspace defaults they
// fall back to.
type Account struct {
	User      User
	Workspace Workspace
}

// EffectiveLocale is the person's locale, else the workspace's, else pt-PT.
func (a Account) EffectiveLocale() string {
	if a.User.Locale != nil {
		return *a.User.Locale
	}
	return a.Workspace.EffectiveLocale()
}

// EffectiveTimezone is the person's time zone, else the workspace's.
func (a Account) EffectiveTimezone() string {
	if a.User.Timezone != nil {
		return *a.User.Timezone
	}
	return a.Workspace.Timezone
}

// EffectiveLocale is the workspace's default locale, pt-PT when none is set.
func (w Workspace) EffectiveLocale() string {
	if w.Locale != nil {
		return *w.Locale
	}
	return DefaultLocale
}

// EffectiveCurrency is the workspace's currency, EUR when none is set.
func (w Workspace) EffectiveCurrency() string {
	if w.Currency != nil {
		return *w.Currency
	}
	return DefaultCurrency
}

// AccountUpdate changes only what it sets: SetLocale with Locale nil goes back to the
// workspace default (likewise the time zone).
type AccountUpdate struct {
	SetLocale   bool
	Locale      *string
	SetTimezone bool
	Timezone    *string
}

func validZone(tz string) bool {
	if tz == "" || tz == "Local" {
		return false
	}
	_, err := time.LoadLocation(tz)
	return err == nil
}

// CurrentWorkspace returns the caller's workspace with its settings.
func (s *Service) CurrentWorkspace(ctx context.Context) (Workspace, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Workspace{}, err
	}
	return s.store.WorkspaceByRef(ctx, p.WorkspaceID)
}

// SetWorkspaceLocale sets the workspace's default locale (nil: none, pt-PT applies)
// and time zone; admin session only. Returns KindInvalid for a locale outside Locales
// or a time zone that is no IANA name.
func (s *Service) SetWorkspaceLocale(ctx context.Context, locale *string, timezone string) (Workspace, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Workspace{}, err
	}
	var fields []vigia.FieldError
	if locale != nil && !slices.Contains(Locales, *locale) {
		fields = append(fields, vigia.Field("enum", nil, "locale"))
	}
	if !validZone(timezone) {
		fields = append(fields, vigia.Field("timezone", nil, "timezone"))
	}
	if len(fields) > 0 {
		return Workspace{}, vigia.Invalid(fields...)
	}
	details := map[string]any{"timezone": timezone, "locale": nil}
	if locale != nil {
		details["locale"] = *locale
	}
	return s.updateWorkspace(ctx, p, "workspace.locale_changed", details, func(ctx context.Context) error {
		return s.settings.UpdateWorkspaceLocale(ctx, p.WorkspaceID, locale, timezone)
	})
}

// SetWorkspaceCurrency sets the workspace's currency (nil: none, EUR applies); admin
// session only. Returns KindInvalid for a currency outside Currencies.
func (s *Service) SetWorkspaceCurrency(ctx context.Context, currency *string) (Workspace, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Workspace{}, err
	}
	if currency != nil && !slices.Contains(Currencies, *currency) {
		return Workspace{}, vigia.Invalid(vigia.Field("enum", nil, "currency"))
	}
	details := map[string]any{"currency": nil}
	if currency != nil {
		details["currency"] = *currency
	}
	return s.updateWorkspace(ctx, p, "workspace.currency_changed", details, func(ctx context.Context) error {
		return s.settings.UpdateWorkspaceCurrency(ctx, p.WorkspaceID, currency)
	})
}

func (s *Service) updateWorkspace(ctx context.Context, p vigia.Principal, action string, details map[string]any, write func(ctx context.Context) error) (Workspace, error) {
	var w Workspace
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := write(ctx); err != nil {
			return err
		}
		if err := s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: p.UserID,
			Action: action, SubjectType: "workspace", SubjectID: p.WorkspaceID, Details: details, CreatedAt: s.clock.Now()}); err != nil {
			return err
		}
		var err error
		w, err = s.store.WorkspaceByRef(ctx, p.WorkspaceID)
		return err
	})
	return w, err
}

// SetPlan sets a workspace's plan; the operator's command (`vigia workspace set
// --plan`). Returns KindInvalid for an unknown plan and KindNotFound for an unknown
// workspace.
func (s *Service) SetPlan(ctx context.Context, workspaceRef string, p plan.Plan) (Workspace, error) {
	if !p.Valid() {
		return Workspace{}, vigia.Invalid(vigia.Field("enum", nil, "plan"))
	}
	var w Workspace
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		if w, err = s.store.WorkspaceByRef(ctx, workspaceRef); err != nil {
			return err
		}
		from := w.Plan
		if err := s.settings.UpdateWorkspacePlan(ctx, w.ID, p); err != nil {
			return err
		}
		w.Plan = p
		return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: w.ID, Actor: "cli",
			Action: "workspace.plan_changed", SubjectType: "workspace", SubjectID: w.ID,
			Details: map[string]any{"from": string(from), "to": string(p)}, CreatedAt: s.clock.Now()})
	})
	return w, err
}

// WorkspacePlan returns a workspace's plan (the plan.Store port).
func (s *Service) WorkspacePlan(ctx context.Context, workspaceID string) (plan.Plan, error) {
	w, err := s.store.WorkspaceByRef(ctx, workspaceID)
	return w.Plan, err
}

// Me returns the calling person's account; a person's session only (an API token is
// nobody's account: 403 token_read_only).
func (s *Service) Me(ctx context.Context) (Account, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleViewer)
	if err != nil {
		return Account{}, err
	}
	return s.account(ctx, p)
}

func (s *Service) account(ctx context.Context, p vigia.Principal) (Account, error) {
	u, err := s.settings.UserByID(ctx, p.WorkspaceID, p.UserID)
	if err != nil {
		return Account{}, err
	}
	w, err := s.store.WorkspaceByRef(ctx, p.WorkspaceID)
	if err != nil {
		return Account{}, err
	}
	return Account{User: u, Workspace: w}, nil
}

// UpdateMe changes the calling person's locale and time zone; only what the update
// sets changes, nil goes back to the workspace default. Returns KindInvalid for a
// locale outside Locales or a time zone that is no IANA name.
func (s *Service) UpdateMe(ctx context.Context, in AccountUpdate) (Account, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleViewer)
	if err != nil {
		return Account{}, err
	}
	var fields []vigia.FieldError
	if in.SetLocale && in.Locale != nil && !slices.Contains(Locales, *in.Locale) {
		fields = append(fields, vigia.Field("enum", nil, "locale"))
	}
	if in.SetTimezone && in.Timezone != nil && !validZone(strings.TrimSpace(*in.Timezone)) {
		fields = append(fields, vigia.Field("timezone", nil, "timezone"))
	}
	if len(fields) > 0 {
		return Account{}, vigia.Invalid(fields...)
	}
	var a Account
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		u, err := s.settings.UserByID(ctx, p.WorkspaceID, p.UserID)
		if err != nil {
			return err
		}
		locale, tz := u.Locale, u.Timezone
		if in.SetLocale {
			locale = in.Locale
		}
		if in.SetTimezone {
			tz = in.Timezone
		}
		if err := s.settings.UpdateUserSettings(ctx, p.WorkspaceID, p.UserID, locale, tz); err != nil {
			return err
		}
		a, err = s.account(ctx, p)
		return err
	})
	return a, err
}
