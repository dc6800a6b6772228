package vigia_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia"
)

func TestCheckJSONText(t *testing.T) {
	cases := []struct {
		name, body string
		loc        string // "" when the body passes
	}{
		{"Plain", `{"name":"clientes","tags":["a","b"]}`, ""},
		{"EscapedBackslashU", `{"name":"C:\\u0000dir"}`, ""},
		{"ReplacementCharSent", `{"name":"\ufffd and \uFFFD and �"}`, ""},
		{"NulValue", `{"name":"a\u0000b"}`, "[body name]"},
		{"NulInArray", `{"tags":["ok","\u0000"]}`, "[body tags 1]"},
		{"NulDeep", `{"a":{"b":[{"c":1},{"d":"x\u0000"}]}}`, "[body a b 1 d]"},
		{"NulInKey", `{"na\u0000me":"x"}`, "[body ?]"},
		{"NulAfterNested", `{"a":{"b":"ok"},"c":"\u0000"}`, "[body c]"},
		{"InvalidUTF8", "{\"name\":\"a\xffb\"}", "[body name]"},
		{"InvalidUTF8InArrayOfObjects", "[{\"x\":1},{\"y\":\"\xc3\"}]", "[body 1 y]"},
		{"LoneSurrogate", `{"name":"\ud800"}`, "[body name]"},
		{"PairedSurrogates", `{"name":"\ud83d\ude00"}`, ""},
		{"NDJSONSecondLine", "{\"a\":\"ok\"}\n{\"a\":\"\\u0000\"}", "[body a]"},
		{"NotJSONButInvalidUTF8", "{\"a\":\xff", "[body]"},
		{"NotJSON", `{"a":`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := vigia.CheckJSONText([]byte(c.body), "body")
			if c.loc == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e := vigia.AsError(err)
			if err == nil || e.Kind != vigia.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Type != "value_error" ||
				fmt.Sprint(e.Fields[0].Loc) != c.loc {
				t.Fatalf("got %#v, want value_error at %s", err, c.loc)
			}
		})
	}
}

func TestBadText(t *testing.T) {
	for s, bad := range map[string]bool{"ok": false, "ação": false, "a\x00": true, "a\xff": true, "": false} {
		if vigia.BadText(s) != bad {
			t.Errorf("BadText(%q) = %v", s, !bad)
		}
	}
}
