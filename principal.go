package vigia

import "context"

// Role is a person's role in a workspace.
type Role string

// Workspace roles, weakest first.
const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
)

// Valid reports whether r is one of the workspace roles.
func (r Role) Valid() bool { return r == RoleViewer || r == RoleMember || r == RoleAdmin }

// AtLeast reports whether r grants at least what min grants.
func (r Role) AtLeast(min Role) bool { return roleRank[r] >= roleRank[min] }

var roleRank = map[Role]int{RoleViewer: 1, RoleMember: 2, RoleAdmin: 3}

// Principal is who is calling: a person through a session or a tool through an API token.
type Principal struct {
	WorkspaceID string
	UserID      string // empty for API tokens
	TokenID     string // the API token or session id
	Role        Role
	// ReadOnly is true for API tokens: they read, and write only the marked writes.
	ReadOnly bool
	// Locale is the person's account locale; empty when none is set or for tokens.
	Locale string
	// WorkspaceLocale is the workspace's default locale; empty when not set.
	WorkspaceLocale string
	// TeamIDs are the teams the person belongs to (grants on domains).
	TeamIDs []string
}

// IsToken reports whether the principal is an API token.
func (p Principal) IsToken() bool { return p.UserID == "" }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// MustPrincipal returns the principal in ctx or an auth_required error.
func MustPrincipal(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok || p.WorkspaceID == "" {
		return Principal{}, Unauthenticated(CodeAuthRequired)
	}
	return p, nil
}

// RequireSession returns the principal when it is a person's session with at least
// role min. An API token gets token_read_only; a weaker role gets forbidden.
func RequireSession(ctx context.Context, min Role) (Principal, error) {
	p, err := MustPrincipal(ctx)
	if err != nil {
		return p, err
	}
	if p.ReadOnly || p.IsToken() {
		return p, ReadOnly()
	}
	if !p.Role.AtLeast(min) {
		return p, Forbidden(CodeForbidden, "error.forbidden")
	}
	return p, nil
}

// String returns the role's name.
func (r Role) String() string { return string(r) }
