package vigia

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BadText reports whether s cannot be stored as text: it holds a NUL character or is
// not valid UTF-8. Both transports refuse such input at the edge (422 value_error), so
// no service or store ever sees it.
func BadText(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s)
}

// CheckText refuses a string input that BadText rejects, naming it by loc.
func CheckText(s string, loc ...string) error {
	if BadText(s) {
		return Invalid(Field("value_error", nil, loc...))
	}
	return nil
}

// CheckJSONText refuses a JSON document whose strings (keys or values) hold a NUL
// character, invalid UTF-8 or a lone surrogate escape: encoding/json would silently
// replace the last two with U+FFFD, so they are found on the raw bytes. The error is a
// 422 value_error whose loc is root followed by the path of the first bad string (a
// key that is no plain name is shown as "?"). A document that is not valid JSON is
// left to the decoder, except that invalid UTF-8 anywhere is refused at root. NDJSON
// (several values) is read value by value.
func CheckJSONText(raw []byte, root ...string) error {
	if !bytes.Contains(raw, []byte(`\u`)) && utf8.Valid(raw) {
		return nil // the fast path: no escape could hide a NUL or a surrogate
	}
	loc, found := findBadJSONText(raw)
	if !found {
		if !utf8.Valid(raw) {
			return Invalid(Field("value_error", nil, root...))
		}
		return nil
	}
	return Invalid(Field("value_error", nil, append(append([]string{}, root...), loc...)...))
}

type jsonFrame struct {
	obj     bool
	wantKey bool
	key     string
	idx     int
}

// findBadJSONText walks the tokens of raw and returns the path of the first bad string.
func findBadJSONText(raw []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []jsonFrame
	path := func(last string, withLast bool) []string {
		out := make([]string, 0, len(stack)+1)
		for i, f := range stack {
			if i == len(stack)-1 && !withLast {
				break
			}
			if f.obj {
				out = append(out, SafeName(f.key))
			} else {
				out = append(out, strconv.Itoa(f.idx))
			}
		}
		if last != "" {
			out = append(out, last)
		}
		return out
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return nil, false
		}
		if err != nil {
			return nil, false
		}
		seg := raw[start:dec.InputOffset()]
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.obj && top.wantKey {
			top.key, top.wantKey = s, false
			if badJSONString(s, seg) {
				return path("?", false), true
			}
			continue
		}
		if top != nil {
			if top.obj {
				top.wantKey = true
			} else {
				top.idx++
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			stack = append(stack, jsonFrame{obj: t == '{', wantKey: t == '{', idx: -1})
		case string:
			if badJSONString(t, seg) {
				return path("", true), true
			}
		}
	}
}

// badJSONString reports a decoded string with a NUL, or one whose raw form seg held
// invalid UTF-8 or a lone surrogate (both decoded as U+FFFD).
func badJSONString(s string, seg []byte) bool {
	if strings.IndexByte(s, 0) >= 0 || !utf8.Valid(seg) {
		return true
	}
	n := strings.Count(s, "\uFFFD")
	if n == 0 {
		return false
	}
	lower := bytes.ToLower(seg)
	return n > bytes.Count(seg, []byte("\uFFFD"))+bytes.Count(lower, []byte(`\ufffd`))
}

// SafeName keeps a name (a JSON key, a field) only when it looks like one, so that a
// crafted name cannot carry a value into a response; anything else is "?".
func SafeName(s string) string {
	if s == "" || len(s) > 64 {
		return "?"
	}
	for _, c := range s {
		if !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "?"
		}
	}
	return s
}
