package vigia_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia"
)

// Every list window is checked by one rule: limit 1-500, offset >= 0, items named by
// field; not given takes the list's default.
func TestPageValidate(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		limit, offset *int
		want          string
	}{
		{nil, nil, "<nil>"},
		{n(1), n(0), "<nil>"},
		{n(500), n(10000), "<nil>"},
		{n(0), nil, "[{greater_than_equal [limit] map[ge:1]}]"},
		{n(-3), nil, "[{greater_than_equal [limit] map[ge:1]}]"},
		{n(501), nil, "[{less_than_equal [limit] map[le:500]}]"},
		{nil, n(-1), "[{greater_than_equal [offset] map[ge:0]}]"},
		{n(0), n(-1), "[{greater_than_equal [limit] map[ge:1]} {greater_than_equal [offset] map[ge:0]}]"},
	} {
		p := vigia.PageOf(c.limit, c.offset, 100)
		got := "<nil>"
		if err := p.Validate(); err != nil {
			e := vigia.AsError(err)
			if e.Kind != vigia.KindInvalid || e.Code != vigia.CodeValidation {
				t.Fatalf("%+v: %v", c, err)
			}
			got = fmt.Sprint(e.Fields)
		}
		if got != c.want {
			t.Errorf("limit %v offset %v: %s, want %s", c.limit, c.offset, got, c.want)
		}
	}
	if p := vigia.PageOf(nil, nil, 100); p.Limit != 100 || p.Offset != 0 {
		t.Fatalf("default %+v", p)
	}
}
