package product

import (
	"context"
	"slices"
	"sort"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
)

// OwnerSuggestion proposes an owner for a dataset without one: the dataset belongs to
// one domain or more and none has an owner (the metadata-quality problem
// missing_owner). The owner proposed is the one most of its lineage neighbours'
// domains have (at least half of its links, no tie), and it would be set on the
// dataset's first ownerless domain by name (Target*), since Vigia keeps owners on
// domains, not on datasets.
type OwnerSuggestion struct {
	DatasetID        string
	DatasetName      string
	TargetDomainID   string
	TargetDomainName string
	OwnerName        string
	Votes            int
	TotalLinks       int
	// FromDomains are the neighbours' domains with that owner, by name.
	FromDomains []DomainVote
}

// SuggestOwners suggests an owner for each dataset the caller can see that is in a
// domain but has no owner, from the owners of its lineage neighbours' domains. Admins
// see every suggestion, domain managers those whose target domain they manage; anyone
// else gets KindForbidden.
func (s *Service) SuggestOwners(ctx context.Context) ([]OwnerSuggestion, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	v := catalog.ViewerOf(p)
	var managed []string
	if !v.Admin {
		if p.IsToken() || len(p.TeamIDs) == 0 {
			return nil, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
		}
		if managed, err = s.store.ManagedDomains(ctx, p.WorkspaceID, p.TeamIDs); err != nil {
			return nil, err
		}
		if len(managed) == 0 {
			return nil, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
		}
	}
	links, err := s.store.DomainLinks(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	edges, err := s.lineage.DatasetLinks(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	nb := neighbourLinks(edges)
	ids := make([]string, 0, len(links.Datasets))
	for _, d := range links.Datasets {
		ids = append(ids, d.ID)
	}
	visible, err := s.store.VisibleDatasetNames(ctx, v, ids)
	if err != nil {
		return nil, err
	}
	out := []OwnerSuggestion{}
	for _, d := range links.Datasets {
		if _, ok := visible[d.ID]; !ok || len(nb[d.ID]) == 0 {
			continue
		}
		if sg, ok := ownerFor(d, nb[d.ID], links); ok && (managed == nil || slices.Contains(managed, sg.TargetDomainID)) {
			out = append(out, sg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DatasetName < out[j].DatasetName })
	return out, nil
}

// ownerFor applies the rule to one dataset: it must be in a domain and none of its
// domains may have an owner; each lineage neighbour (one vote per neighbour, whatever
// the number of edges) votes once for every distinct owner of its domains; an owner
// with at least half of the links and no tie at the top is proposed.
func ownerFor(d LinkDataset, nb map[string]*link, links DomainLinks) (OwnerSuggestion, bool) {
	mine := links.ByDataset[d.ID]
	if len(mine) == 0 {
		return OwnerSuggestion{}, false
	}
	for _, dom := range mine {
		if links.Owners[dom] != "" {
			return OwnerSuggestion{}, false
		}
	}
	votes := map[string]int{}
	from := map[string]map[string]int{} // owner → domain → votes
	for n := range nb {
		seen := map[string]bool{}
		for _, dom := range links.ByDataset[n] {
			o := links.Owners[dom]
			if o == "" {
				continue
			}
			if from[o] == nil {
				from[o] = map[string]int{}
			}
			from[o][dom]++
			if !seen[o] {
				seen[o] = true
				votes[o]++
			}
		}
	}
	type cand struct {
		owner string
		votes int
	}
	var cands []cand
	for o, n := range votes {
		cands = append(cands, cand{o, n})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].votes != cands[j].votes {
			return cands[i].votes > cands[j].votes
		}
		return cands[i].owner < cands[j].owner
	})
	total := len(nb)
	if len(cands) == 0 || 2*cands[0].votes < total || (len(cands) > 1 && cands[1].votes == cands[0].votes) {
		return OwnerSuggestion{}, false
	}
	target := slices.Clone(mine)
	sort.Slice(target, func(i, j int) bool {
		if links.Names[target[i]] != links.Names[target[j]] {
			return links.Names[target[i]] < links.Names[target[j]]
		}
		return target[i] < target[j]
	})
	win := cands[0]
	sg := OwnerSuggestion{DatasetID: d.ID, DatasetName: d.Name, TargetDomainID: target[0], TargetDomainName: links.Names[target[0]],
		OwnerName: win.owner, Votes: win.votes, TotalLinks: total, FromDomains: []DomainVote{}}
	for dom, n := range from[win.owner] {
		sg.FromDomains = append(sg.FromDomains, DomainVote{DomainID: dom, DomainName: links.Names[dom], Votes: n})
	}
	sort.Slice(sg.FromDomains, func(i, j int) bool { return sg.FromDomains[i].DomainName < sg.FromDomains[j].DomainName })
	return sg, true
}
