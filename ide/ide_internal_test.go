package ide

import (
	"fmt"
	"testing"
)

func TestParseRef(t *testing.T) {
	cases := []struct {
		in   string
		want string // parts as name/quoted, or "bad"
	}{
		{`sales.orders`, `[{sales false} {orders false}]`},
		{`"Sales"."Orders"`, `[{Sales true} {Orders true}]`},
		{`"Sales".orders`, `[{Sales true} {orders false}]`},
		{`shop."Sales"."Orders"`, `[{Sales true} {Orders true}]`},
		{"`Sales`.`Orders`", `[{Sales true} {Orders true}]`},
		{`"we""ird"."a.b"`, `[{we"ird true} {a.b true}]`},
		{`orders`, `[{orders false}]`},
		{`a.b.c.d`, "bad"},
		{`sales.`, "bad"},
		{`.orders`, "bad"},
		{`"Sales`, "bad"},
		{`""."x"`, "bad"},
		{`sales orders`, "bad"},
		{`sales.orders;drop`, "bad"},
		{`"a"x.b`, "bad"},
	}
	for _, c := range cases {
		got, ok := parseRef(c.in)
		s := fmt.Sprint(got)
		if !ok {
			s = "bad"
		}
		if s != c.want {
			t.Errorf("%s: %s, want %s", c.in, s, c.want)
		}
	}
}
