package lineage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/vigia-data/vigia"
)

// DomainLinks are a workspace's domains and their datasets.
type DomainLinks struct {
	Names     map[string]string   // domain id → name
	ByDataset map[string][]string // dataset id → domain ids
	Datasets  []NamedDataset      // the live datasets of the workspace
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
	EdgeKinds    []EdgeKind
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
	p, v, err := principal(ctx)
	if err != nil {
		return DomainSuggestions{}, err
	}
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
	ex, err := s.graph.Export(ctx, p.WorkspaceID)
	if err != nil {
		return DomainSuggestions{}, err
	}
	out := DomainSuggestions{Suggestions: []DomainSuggestion{}, Ambiguous: []DomainSuggestion{}}
	type link struct {
		kinds   []EdgeKind
		columns []string
	}
	nb := map[string]map[string]*link{} // dataset → neighbour → link
	add := func(a, b string, e Edge, cols []string) {
		if nb[a] == nil {
			nb[a] = map[string]*link{}
		}
		l := nb[a][b]
		if l == nil {
			l = &link{}
			nb[a][b] = l
		}
		if !slices.Contains(l.kinds, e.Kind) {
			l.kinds = append(l.kinds, e.Kind)
		}
		for _, c := range cols {
			if !slices.Contains(l.columns, c) {
				l.columns = append(l.columns, c)
			}
		}
	}
	for _, e := range ex.Edges {
		if IsExposure(e.Source) || IsExposure(e.Target) || e.Source == e.Target {
			continue
		}
		out.HasLineage = true
		var from, to []string
		for _, c := range e.Columns {
			from, to = append(from, c.From), append(to, c.To)
		}
		add(e.Source, e.Target, e, from)
		add(e.Target, e.Source, e, to)
	}
	var ids []string
	for _, d := range links.Datasets {
		ids = append(ids, d.ID)
	}
	info, err := s.store.DatasetInfos(ctx, v, ids, false)
	if err != nil {
		return DomainSuggestions{}, err
	}
	for _, d := range links.Datasets {
		if len(links.ByDataset[d.ID]) > 0 || !info[d.ID].Visible || len(nb[d.ID]) == 0 {
			continue
		}
		votes := map[string]int{}
		var neighbours []string
		for n := range nb[d.ID] {
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
			continue
		}
		sg := DomainSuggestion{DatasetID: d.ID, DatasetName: datasetName(d.Schema, d.Table), TotalLinks: total,
			ViaColumns: []string{}, EdgeKinds: []EdgeKind{}, InferredOnly: true}
		if len(cands) > 1 && cands[1].Votes == cands[0].Votes {
			var tied []DomainVote
			for _, c := range cands {
				if c.Votes == cands[0].Votes {
					tied = append(tied, c)
				}
			}
			if managed != nil && !slices.ContainsFunc(tied, func(c DomainVote) bool { return slices.Contains(managed, c.DomainID) }) {
				continue
			}
			sg.Votes, sg.Candidates = cands[0].Votes, tied
			out.Ambiguous = append(out.Ambiguous, sg)
			continue
		}
		win := cands[0]
		if managed != nil && !slices.Contains(managed, win.DomainID) {
			continue
		}
		sg.DomainID, sg.DomainName, sg.Votes = win.DomainID, win.DomainName, win.Votes
		var voters []string
		for _, n := range neighbours {
			if !slices.Contains(links.ByDataset[n], win.DomainID) {
				continue
			}
			voters = append(voters, n)
			l := nb[d.ID][n]
			for _, k := range l.kinds {
				if !slices.Contains(sg.EdgeKinds, k) {
					sg.EdgeKinds = append(sg.EdgeKinds, k)
				}
				if k != KindInferred {
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
		out.Suggestions = append(out.Suggestions, sg)
	}
	sort.Slice(out.Suggestions, func(i, j int) bool { return out.Suggestions[i].DatasetName < out.Suggestions[j].DatasetName })
	sort.Slice(out.Ambiguous, func(i, j int) bool { return out.Ambiguous[i].DatasetName < out.Ambiguous[j].DatasetName })
	return out, nil
}
