package lineage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/lineage/lineagetest"
)

// fakeStore answers the reads traversals make; any other call panics (nil embedded).
type fakeStore struct {
	lineage.Store
	names  map[string]string
	hidden map[string]bool
}

func (f *fakeStore) DatasetInfos(_ context.Context, v catalog.Viewer, ids []string, _ bool) (map[string]lineage.DatasetInfo, error) {
	out := map[string]lineage.DatasetInfo{}
	for _, id := range ids {
		if n, ok := f.names[id]; ok {
			out[id] = lineage.DatasetInfo{ID: id, Name: n, Visible: v.Admin || !f.hidden[id], Columns: []string{"a", "b"}}
		}
	}
	return out, nil
}

func (f *fakeStore) Exposures(context.Context, string, []string) (map[string]lineage.Exposure, error) {
	return map[string]lineage.Exposure{}, nil
}

func (f *fakeStore) Reach(context.Context, string, []string) (map[string]int, error) {
	return map[string]int{}, nil
}

type fixture struct {
	svc   *lineage.Service
	g     *lineagetest.MemGraph
	store *fakeStore
	ws    string
	ctx   context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{g: lineagetest.NewMemGraph(), store: &fakeStore{names: map[string]string{}, hidden: map[string]bool{}}, ws: vigia.NewID()}
	f.svc = lineage.NewService(lineage.Deps{Store: f.store, Graph: f.g, Clock: vigia.SystemClock{}})
	f.ctx = vigia.WithPrincipal(context.Background(), vigia.Principal{WorkspaceID: f.ws, UserID: "u", Role: vigia.RoleMember})
	return f
}

// datasets makes n named datasets.
func (f *fixture) datasets(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = vigia.NewID()
		f.store.names[ids[i]] = fmt.Sprintf("s.t%03d", len(f.store.names))
	}
	return ids
}

func (f *fixture) edges(t *testing.T, es ...lineage.Edge) {
	t.Helper()
	if err := f.g.Apply(context.Background(), f.ws, lineage.Change{UpsertEdges: es}); err != nil {
		t.Fatal(err)
	}
}

func e(src, dst string, cols ...string) lineage.Edge {
	ed := lineage.Edge{Source: src, Target: dst, Kind: lineage.KindParsed, ColumnLevel: true}
	for i := 0; i+1 < len(cols); i += 2 {
		ed.Columns = append(ed.Columns, lineage.ColumnPair{From: cols[i], To: cols[i+1]})
	}
	return ed
}

func TestTraverseCapsDatasetsAndEdges(t *testing.T) {
	t.Run("FortyDatasets", func(t *testing.T) {
		f := newFixture(t)
		ids := f.datasets(51)
		for _, d := range ids[1:] {
			f.edges(t, e(ids[0], d))
		}
		r, err := f.svc.Traverse(f.ctx, ids[0], lineage.TraverseOpts{Direction: lineage.Downstream, Hops: vigia.Ptr(1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Nodes) != lineage.MaxTraverseNodes || len(r.Edges) != lineage.MaxTraverseNodes-1 || !r.Truncated {
			t.Fatalf("%d nodes, %d edges, truncated %v", len(r.Nodes), len(r.Edges), r.Truncated)
		}
	})
	t.Run("SixtyEdges", func(t *testing.T) {
		f := newFixture(t)
		ids := f.datasets(21)
		root, as, bs := ids[0], ids[1:11], ids[11:21]
		for _, a := range as {
			f.edges(t, e(root, a))
			for _, b := range bs {
				f.edges(t, e(a, b))
			}
		}
		r, err := f.svc.Traverse(f.ctx, root, lineage.TraverseOpts{Direction: lineage.Downstream, Hops: vigia.Ptr(2)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Edges) != lineage.MaxTraverseEdges || !r.Truncated || len(r.Nodes) > lineage.MaxTraverseNodes {
			t.Fatalf("%d nodes, %d edges, truncated %v", len(r.Nodes), len(r.Edges), r.Truncated)
		}
	})
	t.Run("BadOptionsAreInvalid", func(t *testing.T) {
		f := newFixture(t)
		ids := f.datasets(1)
		for _, o := range []lineage.TraverseOpts{{Hops: vigia.Ptr(4)}, {Hops: vigia.Ptr(-1)}, {Hops: vigia.Ptr(0)}, {Direction: "sideways"}} {
			if _, err := f.svc.Traverse(f.ctx, ids[0], o); !vigia.IsKind(err, vigia.KindInvalid) {
				t.Fatalf("%+v: %v", o, err)
			}
		}
	})
}

func TestTraverseManyBatchesEveryRootIntoOneCallPerHop(t *testing.T) {
	f := newFixture(t)
	ids := f.datasets(160)
	roots := ids[:40]
	for i, r := range roots {
		f.edges(t, e(r, ids[40+i]), e(ids[40+i], ids[80+i]), e(ids[120+i], r))
	}
	before := f.g.NeighbourCalls()
	res, err := f.svc.TraverseMany(f.ctx, roots, lineage.TraverseOpts{Direction: lineage.Both, Hops: vigia.Ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	calls := f.g.NeighbourCalls() - before
	// At most two hops and one look past the last ring, in each direction, whatever
	// the number of roots (upstream stops after one hop here: nothing feeds the feeders).
	if calls > 6 || calls < 4 || len(res) != 40 {
		t.Fatalf("%d backend calls for %d results", calls, len(res))
	}
	for i, r := range roots {
		if got := len(res[r].Nodes); got != 4 {
			t.Fatalf("root %d: %d nodes", i, got)
		}
	}
}

func TestRestrictedNeighboursAreMasked(t *testing.T) {
	f := newFixture(t)
	ids := f.datasets(3)
	f.store.hidden[ids[1]] = true
	f.edges(t, e(ids[0], ids[1], "a", "a"), e(ids[1], ids[2], "a", "b"))
	r, err := f.svc.Traverse(f.ctx, ids[0], lineage.TraverseOpts{Direction: lineage.Downstream, Hops: vigia.Ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Nodes) != 3 {
		t.Fatalf("nodes: %+v", r.Nodes)
	}
	hidden := r.Nodes[1]
	if !hidden.Restricted || hidden.ID != "" || hidden.Name != "" || hidden.Ref != "restricted-1" {
		t.Fatalf("hidden node: %+v", hidden)
	}
	for _, ed := range r.Edges {
		if ed.Columns != nil || ed.Origin != "" {
			t.Fatalf("edge touching a restricted dataset keeps its map: %+v", ed)
		}
	}
	if r.Nodes[2].Name == "" || r.Edges[1].Source != "restricted-1" {
		t.Fatalf("beyond the restricted dataset: %+v %+v", r.Nodes[2], r.Edges[1])
	}
	if _, err := f.svc.Traverse(f.ctx, ids[1], lineage.TraverseOpts{}); !vigia.IsKind(err, vigia.KindNotFound) {
		t.Fatalf("restricted root: %v", err)
	}
	if _, err := f.svc.Path(f.ctx, ids[0], ids[1]); !vigia.IsKind(err, vigia.KindNotFound) {
		t.Fatalf("restricted target: %v", err)
	}
	p, err := f.svc.Path(f.ctx, ids[0], ids[2])
	if err != nil || !p.Found || !p.Nodes[1].Restricted || *p.Hops != 2 {
		t.Fatalf("path through a restricted dataset: %+v %v", p, err)
	}
}

func TestImpactFollowsColumnsThroughEveryHop(t *testing.T) {
	f := newFixture(t)
	ids := f.datasets(5)
	// 0.a → 1.x → 2.y; 0.b → 3.z; 1 → 4 without a column of a.
	f.edges(t, e(ids[0], ids[1], "a", "x", "b", "w"), e(ids[1], ids[2], "x", "y", "w", "v"), e(ids[0], ids[3], "b", "z"),
		e(ids[1], ids[4], "w", "q"))
	col := "a"
	r, err := f.svc.Impact(f.ctx, ids[0], &col)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range r.Datasets {
		got[n.Ref] = fmt.Sprint(n.Impact, n.Columns)
	}
	want := map[string]string{ids[1]: "column[x]", ids[2]: "column[y]", ids[3]: "table[]", ids[4]: "table[]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("impact %v, want %v", got, want)
	}
	bad := "nope"
	if _, err := f.svc.Impact(f.ctx, ids[0], &bad); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Fatalf("unknown column: %v", err)
	}
}

func TestReachCountsDistinctDownstreamDatasets(t *testing.T) {
	for _, c := range []struct {
		name  string
		edges [][2]string
		want  map[string]int
	}{
		{"Chain", [][2]string{{"a", "b"}, {"b", "c"}}, map[string]int{"a": 2, "b": 1, "c": 0}},
		{"Diamond", [][2]string{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}}, map[string]int{"a": 3, "b": 1, "c": 1, "d": 0}},
		{"Cycle", [][2]string{{"a", "b"}, {"b", "a"}}, map[string]int{"a": 1, "b": 1}},
		{"ExposuresDoNotCount", [][2]string{{"a", "exposure:x"}}, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var es []lineage.Edge
			for _, p := range c.edges {
				es = append(es, lineage.Edge{Source: p[0], Target: p[1]})
			}
			got := lineage.Reach(es)
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("%s: %d, want %d (%v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestImpactOfAColumnWithoutColumnMapsSaysSo(t *testing.T) {
	f := newFixture(t)
	ids := f.datasets(2)
	f.edges(t, lineage.Edge{Source: ids[0], Target: ids[1], Kind: lineage.KindDeclared})
	col := "a"
	r, err := f.svc.Impact(f.ctx, ids[0], &col)
	if err != nil {
		t.Fatal(err)
	}
	if r.ImpactNote == nil || *r.ImpactNote != lineage.NoteNoColumnLineage || len(r.Datasets) != 1 || r.Datasets[0].Impact != lineage.ImpactTable {
		t.Fatalf("impact: %+v", r)
	}
}

func TestImpactManyBatchesEveryRoot(t *testing.T) {
	f := newFixture(t)
	ids := f.datasets(120)
	roots := ids[:40]
	for i, r := range roots {
		f.edges(t, e(r, ids[40+i], "a", "x"), e(ids[40+i], ids[80+i], "x", "y"))
	}
	col := "a"
	before := f.g.NeighbourCalls()
	res, errs, err := f.svc.ImpactMany(f.ctx, append(roots, vigia.NewID()), &col)
	if err != nil {
		t.Fatal(err)
	}
	if calls := f.g.NeighbourCalls() - before; calls > lineage.MaxHops+1 {
		t.Fatalf("%d backend calls for 40 roots", calls)
	}
	if len(res) != 40 || len(errs) != 1 {
		t.Fatalf("%d results, %d errors", len(res), len(errs))
	}
	for _, r := range roots {
		if n := res[r].Datasets; len(n) != 2 || n[1].Impact != lineage.ImpactColumn || n[1].Columns[0] != "y" {
			t.Fatalf("impact of %s: %+v", r, n)
		}
	}
}
