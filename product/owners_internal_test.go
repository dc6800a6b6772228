package product

import (
	"testing"

	"github.com/vigia-data/vigia/lineage"
)

// The owner rule: only datasets in a domain where no domain has an owner; one vote per
// neighbour per distinct owner; at least half of the links and no tie; the target is
// the dataset's first ownerless domain by name.
func TestOwnerForCountsTheNeighboursOwners(t *testing.T) {
	e := func(src, dst string) lineage.Edge {
		return lineage.Edge{Source: src, Target: dst, Kind: lineage.KindParsed}
	}
	links := DomainLinks{
		Names:  map[string]string{"s": "Sales", "s2": "Sales EU", "f": "Finance", "r": "Reports", "a": "Archive", "o": "Ops"},
		Owners: map[string]string{"s": "Ana", "s2": "Ana", "f": "Rui"},
		ByDataset: map[string][]string{"n1": {"s", "s2"}, "n2": {"s"}, "n3": {"f"}, "n4": {"o"}, "n5": {"f"},
			"x": {"r", "a"}, "y": {"r"}, "z": {"r"}, "w": {"s"}},
	}
	nb := neighbourLinks([]lineage.Edge{
		e("n1", "x"), e("x", "n2"), e("n3", "x"), // x: Ana 2 (n1 twice through two domains counts once), Rui 1 of 3
		e("n1", "y"), e("n3", "y"), // y: tie Ana/Rui
		e("n1", "z"), e("n4", "z"), e("n5", "z"), // z: Ana 1, Rui 1, none 1 of 3
		e("n2", "w"), // w: already owned
		e("n4", "v"), // v: no domain
	})
	sg, ok := ownerFor(LinkDataset{ID: "x", Name: "public.x"}, nb["x"], links)
	if !ok || sg.OwnerName != "Ana" || sg.Votes != 2 || sg.TotalLinks != 3 || sg.TargetDomainID != "a" || sg.TargetDomainName != "Archive" ||
		len(sg.FromDomains) != 2 || sg.FromDomains[0].DomainName != "Sales" || sg.FromDomains[0].Votes != 2 || sg.FromDomains[1].DomainName != "Sales EU" {
		t.Fatalf("majority: %+v ok=%v", sg, ok)
	}
	for _, id := range []string{"y", "z", "w", "v"} {
		if sg, ok := ownerFor(LinkDataset{ID: id}, nb[id], links); ok {
			t.Fatalf("%s got %+v", id, sg)
		}
	}
	// Half of the links is enough.
	links.ByDataset["n4"] = nil
	nb = neighbourLinks([]lineage.Edge{e("n1", "z"), e("n4", "z")})
	if sg, ok := ownerFor(LinkDataset{ID: "z"}, nb["z"], links); !ok || sg.OwnerName != "Ana" || sg.TotalLinks != 2 {
		t.Fatalf("half: %+v ok=%v", sg, ok)
	}
}
