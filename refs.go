package vigia

import "context"

// RefKind names a kind of object a request body may refer to by id.
type RefKind string

// The kinds of object a body refers to that a service checks with CheckRefs (the
// other services read the referenced object through their visibility rules, which
// answer 404 for another workspace's id already).
const (
	RefChannel RefKind = "channel"
	RefTeam    RefKind = "team"
	RefUser    RefKind = "user"
)

// Ref is one id a body holds, with its kind.
type Ref struct {
	Kind RefKind
	ID   string
}

// RefsOf lists ids of one kind as refs.
func RefsOf(kind RefKind, ids ...string) []Ref {
	out := make([]Ref, 0, len(ids))
	for _, id := range ids {
		out = append(out, Ref{Kind: kind, ID: id})
	}
	return out
}

// RefOf is the ref of an optional id (none when id is nil).
func RefOf(kind RefKind, id *string) []Ref {
	if id == nil {
		return nil
	}
	return []Ref{{Kind: kind, ID: *id}}
}

// Refs tells how many of the given distinct ids of a kind are objects of a workspace.
// The store implements it; every service checks the ids of a body with CheckRefs.
type Refs interface {
	CountRefs(ctx context.Context, workspaceID string, kind RefKind, ids []string) (int, error)
}

// CheckRefs is the one check of the ids inside a request body: every id must name an
// object of the caller's workspace, else the answer is 404 not_found, the same whether
// the id is malformed, unknown or another workspace's. Empty ids (an absent optional
// reference) are skipped. It reads nothing but the ids.
func CheckRefs(ctx context.Context, refs Refs, workspaceID string, list ...Ref) error {
	byKind := map[RefKind]map[string]bool{}
	var kinds []RefKind
	for _, r := range list {
		if r.ID == "" {
			continue
		}
		if !ValidID(r.ID) {
			return NotFound()
		}
		if byKind[r.Kind] == nil {
			byKind[r.Kind] = map[string]bool{}
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind][r.ID] = true
	}
	for _, k := range kinds {
		ids := make([]string, 0, len(byKind[k]))
		for id := range byKind[k] {
			ids = append(ids, id)
		}
		n, err := refs.CountRefs(ctx, workspaceID, k, ids)
		if err != nil {
			return err
		}
		if n != len(ids) {
			return NotFound()
		}
	}
	return nil
}
