package product_test

import (
	"reflect"
	"testing"

	"github.com/vigia-data/vigia/product"
)

func TestDomainVerdictChanges(t *testing.T) {
	m := func(domain, dataset, now string, before ...string) product.MemberVerdict {
		mv := product.MemberVerdict{DomainID: domain, DomainName: "dom " + domain, DatasetID: dataset, DatasetName: "s." + dataset, Verdict: now}
		if len(before) > 0 {
			mv.Before = &before[0]
		}
		return mv
	}
	type change struct{ domain, from, to string }
	for _, c := range []struct {
		name    string
		members []product.MemberVerdict
		want    []change
		changed map[string][]string
	}{
		{name: "a failing member fails the domain",
			members: []product.MemberVerdict{m("d1", "a", "fail", "pass"), m("d1", "b", "pass")},
			want:    []change{{"d1", "pass", "fail"}}, changed: map[string][]string{"d1": {"a"}}},
		{name: "another member still fails: no change",
			members: []product.MemberVerdict{m("d1", "a", "pass", "warn"), m("d1", "b", "fail")},
		},
		{name: "the last failing member recovers",
			members: []product.MemberVerdict{m("d1", "a", "pass", "fail"), m("d1", "b", "warn")},
			want:    []change{{"d1", "fail", "warn"}}},
		{name: "a member without verdict keeps the domain unknown",
			members: []product.MemberVerdict{m("d1", "a", "pass", "warn"), m("d1", "b", "")},
			want:    []change{{"d1", "warn", "unknown"}}},
		{name: "two domains, one changes",
			members: []product.MemberVerdict{m("d2", "a", "warn", "pass"), m("d2", "c", "pass"),
				m("d1", "a", "warn", "pass"), m("d1", "b", "fail")},
			want: []change{{"d2", "pass", "warn"}}},
		{name: "two changes in one domain, listed by name",
			members: []product.MemberVerdict{m("d1", "z", "fail", "pass"), m("d1", "a", "warn", "pass")},
			want:    []change{{"d1", "pass", "fail"}}, changed: map[string][]string{"d1": {"a", "z"}}},
		{name: "a before equal to now is no change",
			members: []product.MemberVerdict{m("d1", "a", "pass", "pass")},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := product.DomainVerdictChanges(c.members)
			var gotC []change
			for _, g := range got {
				gotC = append(gotC, change{g.DomainID, g.From, g.To})
				if g.DomainName != "dom "+g.DomainID {
					t.Errorf("domain name %q", g.DomainName)
				}
				if want, ok := c.changed[g.DomainID]; ok {
					var ids []string
					for _, d := range g.Changed {
						ids = append(ids, d.DatasetID)
					}
					if !reflect.DeepEqual(ids, want) {
						t.Errorf("%s changed datasets %v, want %v", g.DomainID, ids, want)
					}
				}
			}
			if !reflect.DeepEqual(gotC, c.want) {
				t.Errorf("changes %v, want %v", gotC, c.want)
			}
		})
	}
}
