package product

import (
	"slices"
	"testing"

	"github.com/vigia-data/vigia/lineage"
)

// A domain is suggested by a majority of a dataset's links without a tie; a tie is
// ambiguous; a manager sees only what names a managed domain.
func TestSuggestForCountsTheNeighboursDomains(t *testing.T) {
	edge := func(src, dst string, kind lineage.EdgeKind, from, to string) lineage.Edge {
		return lineage.Edge{Source: src, Target: dst, Kind: kind, Columns: []lineage.ColumnPair{{From: from, To: to}}}
	}
	links := DomainLinks{
		Names:     map[string]string{"sales": "Sales", "fin": "Finance"},
		ByDataset: map[string][]string{"a": {"sales"}, "b": {"sales"}, "c": {"fin"}, "d": {"fin"}},
	}
	nb := neighbourLinks([]lineage.Edge{
		edge("a", "x", lineage.KindParsed, "id", "order_id"), edge("b", "x", lineage.KindInferred, "id", "customer_id"),
		edge("x", "c", lineage.KindDBT, "order_id", "id"),
		edge("c", "y", lineage.KindParsed, "id", "id"), edge("a", "y", lineage.KindParsed, "id", "id"),
	})
	sg, ambiguous, ok := suggestFor(LinkDataset{ID: "x", Name: "public.x"}, nb["x"], links, nil)
	if !ok || ambiguous || sg.DomainID != "sales" || sg.Votes != 2 || sg.TotalLinks != 3 || sg.InferredOnly ||
		!slices.Equal(sg.EdgeKinds, []lineage.EdgeKind{lineage.KindInferred, lineage.KindParsed}) ||
		!slices.Equal(sg.ViaColumns, []string{"order_id", "customer_id"}) || len(sg.Signature) != 16 {
		t.Fatalf("majority: %+v ambiguous=%v ok=%v", sg, ambiguous, ok)
	}
	if _, _, ok := suggestFor(LinkDataset{ID: "x"}, nb["x"], links, []string{"fin"}); ok {
		t.Fatal("a finance manager was shown a sales suggestion")
	}
	sg, ambiguous, ok = suggestFor(LinkDataset{ID: "y", Name: "public.y"}, nb["y"], links, nil)
	if !ok || !ambiguous || len(sg.Candidates) != 2 || sg.Candidates[0].DomainName != "Finance" || sg.DomainID != "" {
		t.Fatalf("tie: %+v ambiguous=%v ok=%v", sg, ambiguous, ok)
	}
	if _, _, ok := suggestFor(LinkDataset{ID: "y"}, nb["y"], links, []string{"other"}); ok {
		t.Fatal("a tie without a managed domain was shown")
	}
	// One link in four is no majority.
	few := neighbourLinks([]lineage.Edge{edge("a", "z", lineage.KindParsed, "id", "id"), edge("p", "z", lineage.KindParsed, "id", "id"),
		edge("q", "z", lineage.KindParsed, "id", "id"), edge("r", "z", lineage.KindParsed, "id", "id")})
	if _, _, ok := suggestFor(LinkDataset{ID: "z"}, few["z"], links, nil); ok {
		t.Fatal("one vote in four was suggested")
	}
}
