// Package identity holds workspaces, people, sessions and API tokens, and turns a
// bearer credential into the Principal every other package works with.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/plan"
)

// Credential prefixes: API tokens (the contract's) and person sessions (ours).
const (
	TokenPrefix   = "svc_"
	SessionPrefix = "ses_"
)

var credentialRE = regexp.MustCompile(`^(svc|ses)_[0-9a-f]{48}$`)

// lastUseGranularity is how often a token's last use is written at most.
const lastUseGranularity = time.Minute

// sessionLifetime is how long a session token is valid.
const sessionLifetime = 30 * 24 * time.Hour

// Workspace is the tenant.
type Workspace struct {
	ID          string
	Name        string
	DataCountry string
	Locale      *string // nil: not set; the effective default is pt-PT
	Timezone    string
	Suspended   bool
	// Currency is nil when not set (EUR applies).
	Currency *string
	// Plan is the workspace's plan (business unless the operator chose another).
	Plan      plan.Plan
	CreatedAt time.Time
}

// User is a person with a role in one workspace.
type User struct {
	ID          string
	WorkspaceID string
	Email       string
	Role        vigia.Role
	Locale      *string
	// Timezone is the person's IANA zone; nil: the workspace's.
	Timezone  *string
	CreatedAt time.Time
}

// APIToken is an API token's metadata; the secret itself is never stored.
type APIToken struct {
	ID          string
	WorkspaceID string
	Name        string
	CreatedBy   string
	CreatedAt   time.Time
	LastUsedAt  *time.Time
	RevokedAt   *time.Time
	// ExpiresAt is the end of the token's validity; nil: valid until revoked.
	ExpiresAt *time.Time
}

// MaxTokenLifetime bounds how far in the future a token's validity may end.
const MaxTokenLifetime = 3 * 366 * 24 * time.Hour

// Session is a person's login; the secret itself is never stored.
type Session struct {
	ID          string
	WorkspaceID string
	UserID      string
	ExpiresAt   time.Time
}

// Credential is what a bearer secret's hash resolves to.
type Credential struct {
	ID                 string
	WorkspaceID        string
	UserID             string // empty for API tokens
	Role               vigia.Role
	UserLocale         *string
	WorkspaceLocale    *string
	WorkspaceSuspended bool
	TeamIDs            []string
	LastUsedAt         *time.Time
	Expired            bool
	ExpiresAt          *time.Time // the end of its validity, if any
}

// Store is the persistence the identity service needs.
type Store interface {
	CreateWorkspace(ctx context.Context, w Workspace) error
	// WorkspaceByRef finds a workspace by id or name; KindNotFound if none.
	WorkspaceByRef(ctx context.Context, ref string) (Workspace, error)
	CreateUser(ctx context.Context, u User) error
	CreateSession(ctx context.Context, s Session, hash []byte) error
	CreateAPIToken(ctx context.Context, t APIToken, hash []byte) error
	// RevokeAPIToken revokes the live token with hash in the workspace; KindNotFound if none.
	RevokeAPIToken(ctx context.Context, workspaceID string, hash []byte, at time.Time) (APIToken, error)
	// CredentialByHash resolves a live token or session; KindNotFound if none.
	CredentialByHash(ctx context.Context, hash []byte, now time.Time) (Credential, error)
	// TouchAPIToken records a use unless one was recorded after notBefore.
	TouchAPIToken(ctx context.Context, id string, at, notBefore time.Time) error
	APITokens(ctx context.Context, workspaceID string) ([]APIToken, error)
	AddActivity(ctx context.Context, a event.Activity) error
	Activities(ctx context.Context, workspaceID string, page vigia.Page) (vigia.List[event.Activity], error)
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Service manages workspaces, people and credentials.
type Service struct {
	store    Store
	settings SettingsStore
	tx       Tx
	clock    vigia.Clock
	tokens   tokenCache
}

// NewService returns the identity service.
func NewService(store Store, settings SettingsStore, tx Tx, clock vigia.Clock) *Service {
	return &Service{store: store, settings: settings, tx: tx, clock: clock}
}

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// CreateWorkspace creates a tenant. Returns KindInvalid for a bad name or country and
// KindConflict when the name is taken.
func (s *Service) CreateWorkspace(ctx context.Context, name, country string) (Workspace, error) {
	name = strings.TrimSpace(name)
	if country == "" {
		country = "PT"
	}
	country = strings.ToUpper(country)
	var fields []vigia.FieldError
	if name == "" || len(name) > 100 {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"min_length": 1, "max_length": 100}, "name"))
	}
	if !countryRE.MatchString(country) {
		fields = append(fields, vigia.Field("country", nil, "country"))
	}
	if len(fields) > 0 {
		return Workspace{}, vigia.Invalid(fields...)
	}
	w := Workspace{ID: vigia.NewID(), Name: name, DataCountry: country, Timezone: "Europe/Lisbon", Plan: plan.Default, CreatedAt: s.clock.Now()}
	if err := s.store.CreateWorkspace(ctx, w); err != nil {
		return Workspace{}, err
	}
	return w, nil
}

// Workspace returns a workspace by id or name; KindNotFound if none.
func (s *Service) Workspace(ctx context.Context, ref string) (Workspace, error) {
	return s.store.WorkspaceByRef(ctx, ref)
}

// CreateUser adds a person to a workspace and opens a session for them, returning the
// session token (shown once). Returns KindInvalid for a bad email or role, KindNotFound
// for an unknown workspace and KindConflict for a taken email.
func (s *Service) CreateUser(ctx context.Context, workspaceRef, email string, role vigia.Role) (User, string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var fields []vigia.FieldError
	if !strings.Contains(email, "@") || len(email) > 254 {
		fields = append(fields, vigia.Field("value_error", nil, "email"))
	}
	if !role.Valid() {
		fields = append(fields, vigia.Field("enum", nil, "role"))
	}
	if len(fields) > 0 {
		return User{}, "", vigia.Invalid(fields...)
	}
	var u User
	var secret string
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		w, err := s.store.WorkspaceByRef(ctx, workspaceRef)
		if err != nil {
			return err
		}
		u = User{ID: vigia.NewID(), WorkspaceID: w.ID, Email: email, Role: role, CreatedAt: s.clock.Now()}
		if err := s.store.CreateUser(ctx, u); err != nil {
			return err
		}
		secret, err = s.openSession(ctx, u)
		if err != nil {
			return err
		}
		return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: w.ID, Actor: "cli",
			Action: "user.created", SubjectType: "user", SubjectID: u.ID,
			Details: map[string]any{"role": string(role)}, CreatedAt: s.clock.Now()})
	})
	return u, secret, err
}

func (s *Service) openSession(ctx context.Context, u User) (string, error) {
	secret, hash := newSecret(SessionPrefix)
	sess := Session{ID: vigia.NewID(), WorkspaceID: u.WorkspaceID, UserID: u.ID, ExpiresAt: s.clock.Now().Add(sessionLifetime)}
	if err := s.store.CreateSession(ctx, sess, hash); err != nil {
		return "", err
	}
	return secret, nil
}

// CreateAPIToken creates an API token and returns it once; only its SHA-256 is kept.
// expiresAt, when set, ends its validity (in the future, within MaxTokenLifetime). The
// creation is written to the workspace activity log. The workspace's plan must include
// API tokens (team and above; else 402 plan_limit). Returns KindNotFound for an unknown
// workspace and KindInvalid for a name over 100 characters or an end out of bounds.
func (s *Service) CreateAPIToken(ctx context.Context, workspaceRef, name, actor string, expiresAt *time.Time) (APIToken, string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "api-token"
	}
	if len(name) > 100 {
		return APIToken{}, "", vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": 100}, "name"))
	}
	now := s.clock.Now()
	if expiresAt != nil && (!expiresAt.After(now) || expiresAt.Sub(now) > MaxTokenLifetime) {
		return APIToken{}, "", vigia.Invalid(vigia.Field("value_error", map[string]any{"max_days": int(MaxTokenLifetime.Hours() / 24)}, "expires_at"))
	}
	var t APIToken
	var secret string
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		w, err := s.store.WorkspaceByRef(ctx, workspaceRef)
		if err != nil {
			return err
		}
		if err := plan.Require(w.Plan, plan.APITokens); err != nil {
			return err
		}
		var hash []byte
		secret, hash = newSecret(TokenPrefix)
		t = APIToken{ID: vigia.NewID(), WorkspaceID: w.ID, Name: name, CreatedBy: actor, CreatedAt: now}
		details := map[string]any{"name": name}
		if expiresAt != nil {
			end := expiresAt.UTC()
			t.ExpiresAt = &end
			details["expires_at"] = end.Format(time.RFC3339)
		}
		if err := s.store.CreateAPIToken(ctx, t, hash); err != nil {
			return err
		}
		return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: w.ID, Actor: actor,
			Action: "api_token.created", SubjectType: "api_token", SubjectID: t.ID,
			Details: details, CreatedAt: now})
	})
	return t, secret, err
}

// RevokeAPIToken revokes a token at once and logs it. Returns KindNotFound when the
// workspace has no live token with that value (a malformed value is also not found).
func (s *Service) RevokeAPIToken(ctx context.Context, workspaceRef, secret, actor string) (APIToken, error) {
	if !strings.HasPrefix(secret, TokenPrefix) || !credentialRE.MatchString(secret) {
		return APIToken{}, vigia.NotFound()
	}
	var t APIToken
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		w, err := s.store.WorkspaceByRef(ctx, workspaceRef)
		if err != nil {
			return err
		}
		t, err = s.store.RevokeAPIToken(ctx, w.ID, hashOf(secret), s.clock.Now())
		if err != nil {
			return err
		}

		return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: w.ID, Actor: actor,
			Action: "api_token.revoked", SubjectType: "api_token", SubjectID: t.ID,
			Details: map[string]any{"name": t.Name}, CreatedAt: s.clock.Now()})
	})
	if err == nil {
		// Gone from this process's cache at once (the database announces the change to
		// every process at commit as well).
		s.tokens.evict("token:" + hex.EncodeToString(hashOf(secret)))
	}
	return t, err
}

// APITokens lists a workspace's tokens (metadata only, with last use).
func (s *Service) APITokens(ctx context.Context, workspaceRef string) ([]APIToken, error) {
	w, err := s.store.WorkspaceByRef(ctx, workspaceRef)
	if err != nil {
		return nil, err
	}
	return s.store.APITokens(ctx, w.ID)
}

// Activities lists the workspace activity log, newest first, for a session.
func (s *Service) Activities(ctx context.Context, page vigia.Page) (vigia.List[event.Activity], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[event.Activity]{}, err
	}
	return s.store.Activities(ctx, p.WorkspaceID, page)
}

// Authenticate resolves a bearer secret. Returns KindUnauthenticated with
// token_invalid for a malformed, unknown, expired or revoked secret, and KindForbidden
// with workspace_suspended for a suspended workspace.
func (s *Service) Authenticate(ctx context.Context, secret string) (vigia.Principal, error) {
	if !credentialRE.MatchString(secret) {
		return vigia.Principal{}, vigia.Unauthenticated(vigia.CodeTokenInvalid)
	}
	now := s.clock.Now()
	hash := hashOf(secret)
	c, cached := s.tokens.get(hash, now)
	var err error
	if !cached {
		epoch := s.tokens.start()
		c, err = s.store.CredentialByHash(ctx, hash, now)
		if err == nil && c.UserID == "" && !c.Expired {
			s.tokens.put(hash, c, epoch, now)
		}
	}
	if vigia.IsKind(err, vigia.KindNotFound) || err == nil && c.Expired {
		return vigia.Principal{}, vigia.Unauthenticated(vigia.CodeTokenInvalid)
	}
	if err != nil {
		return vigia.Principal{}, err
	}
	if c.WorkspaceSuspended {
		return vigia.Principal{}, vigia.Forbidden(vigia.CodeWorkspaceSuspended, "error.workspace_suspended")
	}
	p := vigia.Principal{WorkspaceID: c.WorkspaceID, UserID: c.UserID, TokenID: c.ID, Role: c.Role, TeamIDs: c.TeamIDs}
	if c.UserLocale != nil {
		p.Locale = *c.UserLocale
	}
	if c.WorkspaceLocale != nil {
		p.WorkspaceLocale = *c.WorkspaceLocale
	}
	if c.UserID == "" {
		p.ReadOnly = true
		if c.LastUsedAt == nil || now.Sub(*c.LastUsedAt) >= lastUseGranularity {
			if err := s.store.TouchAPIToken(ctx, c.ID, now, now.Add(-lastUseGranularity)); err != nil {
				return vigia.Principal{}, err
			}
			s.tokens.touched(hash, now)
		}
	}
	return p, nil
}

// WorkspaceLocale returns the workspace's default locale ("" when not set), used for
// the language of responses.
func (s *Service) WorkspaceLocale(ctx context.Context, workspaceID string) (string, error) {
	w, err := s.store.WorkspaceByRef(ctx, workspaceID)
	if err != nil || w.Locale == nil {
		return "", err
	}
	return *w.Locale, nil
}

// newSecret returns a fresh credential (prefix + 48 lowercase hex) and its SHA-256.
func newSecret(prefix string) (string, []byte) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a failure must not yield a weak token.
		panic(err)
	}
	s := prefix + hex.EncodeToString(b[:])
	return s, hashOf(s)
}

// HashToken returns the SHA-256 of a credential, as stored.
func HashToken(secret string) []byte { return hashOf(secret) }

func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
