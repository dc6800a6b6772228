//go:build duckdb

package duckview

import "strings"

// A small lexer of DuckDB's token boundaries (its scanner is Postgres's): enough to
// take the CREATE VIEW head off a view's text and to split a script into statements.
// The SQL itself is always read by DuckDB.

type tokKind int

const (
	tokWord tokKind = iota
	tokIdent
	tokString
	tokPunct
)

type token struct {
	kind       tokKind
	text       string // words upper-cased, identifiers unquoted
	start, end int
}

// lex splits s into tokens; ok is false for an unterminated quote or comment.
func lex(s string) ([]token, bool) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			depth := 0
			for {
				if i+1 >= len(s) {
					return nil, false
				}
				if s[i] == '/' && s[i+1] == '*' {
					depth++
					i += 2
				} else if s[i] == '*' && s[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		case c == '\'' || ((c == 'E' || c == 'e') && i+1 < len(s) && s[i+1] == '\''):
			start := i
			backslash := c != '\''
			if backslash {
				i++
			}
			j, ok := closeQuote(s, i, '\'', backslash)
			if !ok {
				return nil, false
			}
			i = j
			out = append(out, token{kind: tokString, text: s[start:i], start: start, end: i})
		case c == '"':
			start := i
			j, ok := closeQuote(s, i, '"', false)
			if !ok {
				return nil, false
			}
			i = j
			out = append(out, token{kind: tokIdent, text: strings.ReplaceAll(s[start+1:i-1], `""`, `"`), start: start, end: i})
		case c == '$':
			start := i
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) && !(j == i+1 && s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			if j < len(s) && s[j] == '$' {
				tag := s[i : j+1]
				end := strings.Index(s[j+1:], tag)
				if end < 0 {
					return nil, false
				}
				i = j + 1 + end + len(tag)
				out = append(out, token{kind: tokString, text: s[start:i], start: start, end: i})
				continue
			}
			i++
			out = append(out, token{kind: tokPunct, text: "$", start: start, end: i})
		case isWordByte(c):
			start := i
			for i < len(s) && (isWordByte(s[i]) || s[i] == '$') {
				i++
			}
			out = append(out, token{kind: tokWord, text: strings.ToUpper(s[start:i]), start: start, end: i})
		default:
			out = append(out, token{kind: tokPunct, text: s[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return out, true
}

// closeQuote returns the offset just past the quote opened at s[i].
func closeQuote(s string, i int, q byte, backslash bool) (int, bool) {
	i++
	for i < len(s) {
		switch {
		case backslash && s[i] == '\\':
			i += 2
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			i += 2
		case s[i] == q:
			return i + 1, true
		default:
			i++
		}
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// splitCreateView returns the SELECT of a view's text and the view's column list: the
// text itself when it does not start with CREATE; ok is false for a CREATE statement
// that is not CREATE [OR REPLACE] [TEMP] VIEW [IF NOT EXISTS] name [(cols)] AS.
// Unreadable text is returned whole, for DuckDB to reject.
func splitCreateView(sql string) (body string, cols []string, ok bool) {
	toks, good := lex(sql)
	if !good || len(toks) == 0 || toks[0].kind != tokWord || toks[0].text != "CREATE" {
		return sql, nil, true
	}
	i := 1
	word := func(w string) bool {
		if i < len(toks) && toks[i].kind == tokWord && toks[i].text == w {
			i++
			return true
		}
		return false
	}
	punct := func(p string) bool {
		if i < len(toks) && toks[i].kind == tokPunct && toks[i].text == p {
			i++
			return true
		}
		return false
	}
	ident := func() (string, bool) {
		if i < len(toks) && (toks[i].kind == tokIdent || toks[i].kind == tokWord) {
			t := toks[i]
			i++
			if t.kind == tokWord {
				return sql[t.start:t.end], true
			}
			return t.text, true
		}
		return "", false
	}
	if word("OR") && !word("REPLACE") {
		return "", nil, false
	}
	if !word("TEMP") {
		word("TEMPORARY")
	}
	if !word("VIEW") {
		return "", nil, false
	}
	if word("IF") && !(word("NOT") && word("EXISTS")) {
		return "", nil, false
	}
	if _, ok := ident(); !ok {
		return "", nil, false
	}
	for punct(".") {
		if _, ok := ident(); !ok {
			return "", nil, false
		}
	}
	if punct("(") {
		for {
			c, ok := ident()
			if !ok {
				return "", nil, false
			}
			cols = append(cols, c)
			if punct(")") {
				break
			}
			if !punct(",") {
				return "", nil, false
			}
		}
	}
	if i >= len(toks) || toks[i].kind != tokWord || toks[i].text != "AS" {
		return "", nil, false
	}
	return sql[toks[i].end:], cols, true
}

// splitStatements splits a script at its semicolons; ok is false when it cannot be
// read (an unterminated quote or comment).
func splitStatements(sql string) ([]string, bool) {
	toks, ok := lex(sql)
	if !ok {
		return nil, false
	}
	var out []string
	start := 0
	for _, t := range toks {
		if t.kind == tokPunct && t.text == ";" {
			if s := strings.TrimSpace(sql[start:t.start]); s != "" {
				out = append(out, s)
			}
			start = t.end
		}
	}
	if s := strings.TrimSpace(sql[start:]); s != "" {
		if rest, _ := lex(s); len(rest) > 0 {
			out = append(out, s)
		}
	}
	return out, true
}

// words returns up to n leading keywords of a statement, upper-cased.
func words(st string, n int) []string {
	toks, _ := lex(st)
	var out []string
	for _, t := range toks {
		if len(out) == n {
			break
		}
		if t.kind != tokWord {
			break
		}
		out = append(out, t.text)
	}
	return out
}
