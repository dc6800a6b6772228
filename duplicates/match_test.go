package duplicates

import (
	"testing"
)

func TestNormalize(t *testing.T) {
	r := Record{NIF: "PT 123-456-789", Email: "  Ana.Silva@Mail.PT ", Phone: "+351 912 345 678", Name: "  JOÃO  Conceição-Sá "}.Normalize()
	if r.NIF != "123456789" || r.Email != "ana.silva@mail.pt" || r.Phone != "912345678" || r.Name != "joao conceicao sa" {
		t.Fatalf("%+v", r)
	}
	if NormalizePhone("00351912345678") != "912345678" || NormalizePhone("(+351) 912-345-678") != "912345678" {
		t.Fatal("phone")
	}
}

func TestCompare(t *testing.T) {
	a := Record{NIF: "123456789", Email: "ana.silva@mail.pt", Phone: "912345678", Name: "ana maria silva"}
	if s, f, ok := Compare(a, a); !ok || s != 1 || len(f) != 4 {
		t.Fatalf("exact: %v %v %v", s, f, ok)
	}
	b := a
	b.Name = "ana mraia silva"
	if s, _, ok := Compare(a, b); !ok || s >= 1 || s < HighThreshold {
		t.Fatalf("one typo in the name: %v %v", s, ok)
	}
	c := a
	c.NIF = "987654321"
	if _, _, ok := Compare(a, c); ok {
		t.Fatal("different NIFs compared")
	}
	d := Record{Name: "ana maria silva", Email: "x@y.pt"}
	e := Record{Name: "ana maria silva", Phone: "912345678"}
	if _, _, ok := Compare(d, e); ok {
		t.Fatal("one field in common is no comparison")
	}
	if levenshtein([]rune("abcd"), []rune("abdc")) != 1 || levenshtein([]rune("kitten"), []rune("sitting")) != 3 {
		t.Fatal("distance")
	}
}

func TestMatchClusters(t *testing.T) {
	recs := []Record{
		{Dataset: 0, Key: "1", NIF: "123456789", Email: "ana.silva@mail.pt", Phone: "912345678", Name: "ana maria silva"},
		{Dataset: 1, Key: "7", NIF: "123456789", Email: "ana.silva@mail.pt", Phone: "912345678", Name: "ana maria silva"},
		{Dataset: 1, Key: "8", NIF: "", Email: "ana.slva@mail.pt", Phone: "912345678", Name: "ana maria silav"},
		{Dataset: 0, Key: "2", NIF: "223456780", Email: "rui@mail.pt", Phone: "913000000", Name: "rui costa"},
		{Dataset: 0, Key: "3", NIF: "323456781", Email: "ze@mail.pt", Phone: "912345678", Name: "jose silva"},
	}
	cs, trunc := Match(recs)
	if trunc || len(cs) != 1 {
		t.Fatalf("clusters %+v", cs)
	}
	c := cs[0]
	if len(c.Members) != 3 || c.Confidence >= 1 || c.Band == BandExact {
		t.Fatalf("cluster %+v", c)
	}
	for _, m := range c.Members {
		if (m.Key == "1" || m.Key == "7") != m.Exact() {
			t.Fatalf("member %+v", m)
		}
	}
}

func TestReferencePrecision(t *testing.T) {
	p := ReferencePrecision()
	t.Logf("reference: %d records, precision %v, pairs %v, recall %v", p.Records, p.ByBand, p.Pairs, p.Recall)
	if p.ByBand[BandExact] != 1 || p.Pairs[BandExact] == 0 || p.Pairs[BandHigh] == 0 || p.Pairs[BandLow] == 0 {
		t.Fatalf("%+v", p)
	}
	if p.Recall < 0.9 || p.ByBand[BandHigh] < 0.9 {
		t.Fatalf("the matcher lost its quality on the reference set: %+v", p)
	}
}

func TestReferencePrecisionAcross(t *testing.T) {
	p := ReferencePrecisionAcross()
	t.Logf("reference across connections (hashes only): %d records, precision %v, pairs %v, recall %v", p.Records, p.ByBand, p.Pairs, p.Recall)
	if p.ByBand[BandExact] != 1 || p.Pairs[BandExact] == 0 || p.Pairs[BandHigh] == 0 {
		t.Fatalf("%+v", p)
	}
	if p.Recall < 0.85 || p.ByBand[BandHigh] < 0.9 {
		t.Fatalf("the cross-connection matcher lost its quality on the reference set: %+v", p)
	}
}
