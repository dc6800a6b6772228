package vigia

import "context"

// CodeManagedByConfig is the 409 code of a change, made outside `vigia apply`, to an
// object that configuration as code manages.
const CodeManagedByConfig = "managed_by_config"

// The kinds of object configuration as code manages (the kind column of the marks).
const (
	ManagedConnection = "connection"
	ManagedTeam       = "team"
	ManagedDomain     = "domain"
	ManagedChannel    = "channel"
	ManagedRule       = "rule"
)

type configApplyKey struct{}

// WithConfigApply returns ctx marked as carrying a change of `vigia apply`: the only
// changes managed objects accept. No transport sets it.
func WithConfigApply(ctx context.Context) context.Context {
	return context.WithValue(ctx, configApplyKey{}, true)
}

// FromConfigApply reports whether ctx carries a change of `vigia apply`.
func FromConfigApply(ctx context.Context) bool {
	v, _ := ctx.Value(configApplyKey{}).(bool)
	return v
}

// ManagedLookup tells whether configuration as code manages an object; the stores of
// the features whose objects it manages implement it.
type ManagedLookup interface {
	// ManagedByConfig reports whether the object of kind and id of the workspace is
	// managed by configuration as code.
	ManagedByConfig(ctx context.Context, workspaceID, kind, id string) (bool, error)
}

// ManagedByConfig is the 409 answer to a change of a managed object outside apply.
func ManagedByConfig() *Error {
	return Conflict(CodeManagedByConfig, "error.managed_by_config", nil)
}

// RefuseManaged returns ManagedByConfig when the object is managed by configuration as
// code and ctx does not carry a change of `vigia apply`; lookup errors pass through.
func RefuseManaged(ctx context.Context, m ManagedLookup, workspaceID, kind, id string) error {
	if FromConfigApply(ctx) {
		return nil
	}
	managed, err := m.ManagedByConfig(ctx, workspaceID, kind, id)
	if err != nil {
		return err
	}
	if managed {
		return ManagedByConfig()
	}
	return nil
}
