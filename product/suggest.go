package product

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
)

// DomainLinks are a workspace's domains and their member datasets, with the live
// datasets of the workspace (whoever can see them).
type DomainLinks struct {
	Names     map[string]string   // domain id → name
	Owners    map[string]string   // domain id → owner name (domains with one)
	ByDataset map[string][]string // dataset id → domain ids
	Datasets  []LinkDataset
}

// LinkDataset is a live dataset with its display name (schema.table).
type LinkDataset struct {
	ID   string
	Name string
}

// DomainVote is one candidate domain with its votes.
type DomainVote struct {
	DomainID   string
	DomainName string
	Votes      int
}

// DomainSuggestion proposes a domain for a dataset without one, by the majority (at
// least half, no tie) of its lineage links.
type DomainSuggestion struct {
	DatasetID    string
	DatasetName  string
	DomainID     string
	DomainName   string
	Votes        int
	TotalLinks   int
	ViaColumns   []string
	EdgeKinds    []lineage.EdgeKind
	InferredOnly bool
	Signature    string
	Candidates   []DomainVote // ambiguous entries: the tied domains
}

// DomainSuggestions is the answer of GET /domains/suggestions (its lineage part).
type DomainSuggestions struct {
	HasLineage  bool
	Suggestions []DomainSuggestion
	Ambiguous   []DomainSuggestion
}

// SuggestDomains suggests a domain for each dataset without one from the domains of its
// lineage neighbours. Admins see every suggestion, domain managers (a team with a
// manager grant) those of their domains; anyone else gets KindForbidden.
func (s *Service) SuggestDomains(ctx context.Context) (DomainSuggestions, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return DomainSuggestions{}, err
	}
	v := catalog.ViewerOf(p)
	var managed []string
	if !v.Admin {
		if p.IsToken() || len(p.TeamIDs) == 0 {
			return DomainSuggestions{}, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
		}
		managed, err = s.store.ManagedDomains(ctx, p.WorkspaceID, p.TeamIDs)
		if err != nil {
			return DomainSuggestions{}, err
		}
		if len(managed) == 0 {
			return DomainSuggestions{}, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
		}
	}
	links, err := s.store.DomainLinks(ctx, p.WorkspaceID)
	if err != nil {
		return DomainSuggestions{}, err
	}
	edges, err := s.lineage.DatasetLinks(ctx, p.WorkspaceID)
	if err != nil {
		return DomainSuggestions{}, err
	}
	out := DomainSuggestions{Suggestions: []DomainSuggestion{}, Ambiguous: []DomainSuggestion{}, HasLineage: len(edges) > 0}
	nb := neighbourLinks(edges)
	ids := make([]string, 0, len(links.Datasets))
	for _, d := range links.Datasets {
		ids = append(ids, d.ID)
	}
	visible, err := s.store.VisibleDatasetNames(ctx, v, ids)
	if err != nil {
		return DomainSuggestions{}, err
	}
	for _, d := range links.Datasets {
		if _, ok := visible[d.ID]; len(links.ByDataset[d.ID]) > 0 || !ok || len(nb[d.ID]) == 0 {
			continue
		}
		if sg, ambiguous, ok := suggestFor(d, nb[d.ID], links, managed); ok && ambiguous {
			out.Ambiguous = append(out.Ambiguous, sg)
		} else if ok {
			out.Suggestions = append(out.Suggestions, sg)
		}
	}
	sort.Slice(out.Suggestions, func(i, j int) bool { return out.Suggestions[i].DatasetName < out.Suggestions[j].DatasetName })
	sort.Slice(out.Ambiguous, func(i, j int) bool { return out.Ambiguous[i].DatasetName < out.Ambiguous[j].DatasetName })
	return out, nil
}

// link is what joins a dataset to one neighbour: the kinds of the edges between them
// and the dataset's columns they carry.
type link struct {
	kinds   []lineage.EdgeKind
	columns []string
}

// neighbourLinks indexes the edges both ways: dataset → neighbour → link.
func neighbourLinks(edges []lineage.Edge) map[string]map[string]*link {
	nb := map[string]map[string]*link{}
	add := func(a, b string, kind lineage.EdgeKind, cols []string) {
		if nb[a] == nil {
			nb[a] = map[string]*link{}
		}
		l := nb[a][b]
		if l == nil {
			l = &link{}
			nb[a][b] = l
		}
		if !slices.Contains(l.kinds, kind) {
			l.kinds = append(l.kinds, kind)
		}
		for _, c := range cols {
			if !slices.Contains(l.columns, c) {
				l.columns = append(l.columns, c)
			}
		}
	}
	for _, e := range edges {
		var from, to []string
		for _, c := range e.Columns {
			from, to = append(from, c.From), append(to, c.To)
		}
		add(e.Source, e.Target, e.Kind, from)
		add(e.Target, e.Source, e.Kind, to)
	}
	return nb
}

// suggestFor counts the domains of a dataset's neighbours: a majority (at least half
// of its links) without a tie is a suggestion, a tie at the top an ambiguous entry; a
// domain manager sees only those naming one of the managed domains (managed nil: all).
func suggestFor(d LinkDataset, nb map[string]*link, links DomainLinks, managed []string) (DomainSuggestion, bool, bool) {
	votes := map[string]int{}
	neighbours := make([]string, 0, len(nb))
	for n := range nb {
		neighbours = append(neighbours, n)
		for _, dom := range links.ByDataset[n] {
			votes[dom]++
		}
	}
	sort.Strings(neighbours)
	total := len(neighbours)
	var cands []DomainVote
	for dom, n := range votes {
		cands = append(cands, DomainVote{DomainID: dom, DomainName: links.Names[dom], Votes: n})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].Votes != cands[j].Votes {
			return cands[i].Votes > cands[j].Votes
		}
		return cands[i].DomainName < cands[j].DomainName
	})
	if len(cands) == 0 || 2*cands[0].Votes < total {
		return DomainSuggestion{}, false, false
	}
	sg := DomainSuggestion{DatasetID: d.ID, DatasetName: d.Name, TotalLinks: total,
		ViaColumns: []string{}, EdgeKinds: []lineage.EdgeKind{}, InferredOnly: true}
	if len(cands) > 1 && cands[1].Votes == cands[0].Votes {
		var tied []DomainVote
		for _, c := range cands {
			if c.Votes == cands[0].Votes {
				tied = append(tied, c)
			}
		}
		if managed != nil && !slices.ContainsFunc(tied, func(c DomainVote) bool { return slices.Contains(managed, c.DomainID) }) {
			return DomainSuggestion{}, false, false
		}
		sg.Votes, sg.Candidates = cands[0].Votes, tied
		return sg, true, true
	}
	win := cands[0]
	if managed != nil && !slices.Contains(managed, win.DomainID) {
		return DomainSuggestion{}, false, false
	}
	sg.DomainID, sg.DomainName, sg.Votes = win.DomainID, win.DomainName, win.Votes
	var voters []string
	for _, n := range neighbours {
		if !slices.Contains(links.ByDataset[n], win.DomainID) {
			continue
		}
		voters = append(voters, n)
		l := nb[n]
		for _, k := range l.kinds {
			if !slices.Contains(sg.EdgeKinds, k) {
				sg.EdgeKinds = append(sg.EdgeKinds, k)
			}
			if k != lineage.KindInferred {
				sg.InferredOnly = false
			}
		}
		for _, c := range l.columns {
			if len(sg.ViaColumns) < 3 && !slices.Contains(sg.ViaColumns, c) {
				sg.ViaColumns = append(sg.ViaColumns, c)
			}
		}
	}
	slices.Sort(sg.EdgeKinds)
	h := sha256.Sum256([]byte(d.ID + "|" + win.DomainID + "|" + strings.Join(voters, ",")))
	sg.Signature = hex.EncodeToString(h[:8])
	return sg, false, true
}
