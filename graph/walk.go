package graph

import (
	"context"
	"strings"
	"sync"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/graph/model"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/product"
)

// walkPages bounds the pages of 500 a whole-workspace list read for a walk costs
// (incidents and domains a dataset is part of): 10 pages, 5,000 items.
const walkPages = 10

// neighbour resolves a lineage node ref to its dataset through the request's detail
// loader; a restricted ref (one the caller cannot see) stays a RestrictedDataset, with
// neither name nor id, as REST masks it.
func (r *Resolver) neighbour(ctx context.Context, ref string, restricted bool) (model.DatasetNeighbour, error) {
	if restricted || strings.HasPrefix(ref, "restricted-") {
		return model.RestrictedDataset{Ref: ref, Restricted: true}, nil
	}
	d, err := r.datasetByID(ctx, ref)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// datasetByID is a dataset through the request's detail loader, with the caller's role.
func (r *Resolver) datasetByID(ctx context.Context, id string) (*model.Dataset, error) {
	d, err := r.detail(ctx, id)
	if err != nil {
		return nil, err
	}
	p, _ := vigia.PrincipalFrom(ctx)
	out := toDataset(*d, catalog.DatasetAccessRole(p, *d))
	return &out, nil
}

// neighbours walks hops of lineage in one direction through the traverse loader (so a
// page of datasets costs one traversal per hop, not one per dataset) and resolves the
// nodes met, nearest first, the starting dataset left out.
func (r *Resolver) neighbours(ctx context.Context, id string, dir lineage.Direction, hops *int) ([]model.DatasetNeighbour, error) {
	res, err := r.traverse(ctx, id, lineage.TraverseOpts{Direction: dir, Hops: hops})
	if err != nil {
		return nil, err
	}
	r.primeDetails(ctx, []lineage.TraverseResult{res})
	out := []model.DatasetNeighbour{}
	for _, n := range res.Nodes {
		if n.Hops == 0 || (!n.Restricted && n.ID == id) {
			continue
		}
		nb, err := r.neighbour(ctx, n.Ref, n.Restricted)
		if err != nil {
			return nil, err
		}
		out = append(out, nb)
	}
	return out, nil
}

// primeDetails puts the visible datasets of traversals in the request's pending detail
// batch, so that resolving them costs one batch, not one per node.
func (r *Resolver) primeDetails(ctx context.Context, res []lineage.TraverseResult) {
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok {
		return
	}
	var ids []string
	for _, t := range res {
		for _, n := range t.Nodes {
			if !n.Restricted && n.ID != "" {
				ids = append(ids, n.ID)
			}
		}
	}
	l.details.Prime(ctx, ids)
}

// whole reads every page (of 500) of a list, at most walkPages of them.
func whole[T any](ctx context.Context, list func(ctx context.Context, page vigia.Page) (vigia.List[T], error)) ([]T, error) {
	var out []T
	for i := 0; i < walkPages; i++ {
		res, err := list(ctx, vigia.Page{Limit: vigia.MaxLimit, Offset: i * vigia.MaxLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if len(res.Items) < vigia.MaxLimit || len(out) >= res.Total {
			break
		}
	}
	return out, nil
}

// once memoizes a request-wide read.
type once[T any] struct {
	o   sync.Once
	v   T
	err error
}

func (o *once[T]) get(read func() (T, error)) (T, error) {
	o.o.Do(func() { o.v, o.err = read() })
	return o.v, o.err
}

// walkReads are the request-wide lists the walk filters per dataset.
type walkReads struct {
	incidents once[[]incident.View]
	domains   once[[]product.Domain]
}

func (r *Resolver) walkReads(ctx context.Context) *walkReads {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok && l.walk != nil {
		return l.walk
	}
	return &walkReads{}
}

// datasetIncidents are the incidents, among those whose root the caller can see, that
// hold the dataset: one read of the incident list per request.
func (r *Resolver) datasetIncidents(ctx context.Context, id string) ([]model.Incident, error) {
	all, err := r.walkReads(ctx).incidents.get(func() ([]incident.View, error) {
		return whole(ctx, func(ctx context.Context, page vigia.Page) (vigia.List[incident.View], error) {
			return r.IncidentService.Incidents(ctx, incident.Filter{Page: page})
		})
	})
	if err != nil {
		return nil, err
	}
	out := []model.Incident{}
	for _, v := range all {
		for _, d := range v.DatasetIDs {
			if d == id {
				out = append(out, toIncident(v))
				break
			}
		}
	}
	return out, nil
}

// datasetDomains are the data products the caller can see that hold the dataset: one
// read of the domain list per request.
func (r *Resolver) datasetDomains(ctx context.Context, id string) ([]model.Domain, error) {
	all, err := r.walkReads(ctx).domains.get(func() ([]product.Domain, error) {
		return whole(ctx, r.Products.Domains)
	})
	if err != nil {
		return nil, err
	}
	out := []model.Domain{}
	for _, d := range all {
		for _, m := range d.DatasetIDs {
			if m == id {
				out = append(out, toDomain(d))
				break
			}
		}
	}
	return out, nil
}

// issueFilter checks Dataset.issues' filters as the issue list checks them.
func issueFilter(severity, status []string) error {
	var errs []vigia.FieldError
	for _, s := range severity {
		if s != "critical" && s != "warning" && s != "info" {
			errs = append(errs, vigia.Field("enum", map[string]any{"expected": "critical, warning, info"}, "severity"))
			break
		}
	}
	for _, s := range status {
		if s != "open" && s != "acknowledged" && s != "resolved" && s != "ignored" {
			errs = append(errs, vigia.Field("enum", map[string]any{"expected": "open, acknowledged, resolved, ignored"}, "status"))
			break
		}
	}
	if len(errs) > 0 {
		return vigia.Invalid(errs...)
	}
	return nil
}

func keep(xs []string, x string) bool {
	if len(xs) == 0 {
		return true
	}
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
