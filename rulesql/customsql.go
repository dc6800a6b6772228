package rulesql

import (
	"strconv"
	"strings"
)

// A custom_sql rule is a SELECT that returns the number of failing rows. When that
// SELECT is a plain count over rows,
//
//	[WITH ...] SELECT COUNT(*) [AS name] FROM <from and where>
//
// the rows it counts are exactly the rows of SELECT * FROM <from and where>, so the
// failing-rows query keeps the user's text and swaps only the select list. Anything
// that changes what is counted (GROUP BY, HAVING, DISTINCT, set operations, a limit,
// several statements) has no such row query, and neither has text the lexer cannot
// read with certainty: it answers "not row level" rather than guess.

// tokKind is the class of a lexical token.
type tokKind int

const (
	tokWord   tokKind = iota // keyword, unquoted identifier or number
	tokQuoted                // quoted identifier or string literal
	tokPunct                 // any other single character
)

type token struct {
	kind       tokKind
	text       string // the token's text; words keep their case
	start, end int    // byte offsets in the source text
}

// keywordsNotRowLevel are clauses that, at the top level after FROM, make the count
// something other than a count of the rows that FROM and WHERE select.
var keywordsNotRowLevel = map[string]bool{
	"GROUP": true, "HAVING": true, "ORDER": true, "LIMIT": true, "OFFSET": true,
	"FETCH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true, "MINUS": true,
	"QUALIFY": true, "WINDOW": true, "INTO": true, "FOR": true, "CONNECT": true,
	"OPTION": true, "LOCK": true, "PROCEDURE": true, "CLUSTER": true,
	"DISTRIBUTE": true, "SORT": true, "SETTINGS": true,
}

// keywordsWriting make a statement write or change state; a failing-rows query must
// be safe to run, so text holding one anywhere is refused.
var keywordsWriting = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "TRUNCATE": true,
	"DROP": true, "ALTER": true, "CREATE": true, "GRANT": true, "REVOKE": true,
	"CALL": true, "EXEC": true, "EXECUTE": true, "COPY": true, "ATTACH": true,
	"DETACH": true, "PRAGMA": true, "VACUUM": true, "REFRESH": true, "UNLOAD": true,
}

// rewriteCount turns a custom count query into its row query in dialect d, ending with
// the dialect's row limit. ok is false when the text is not a plain count over rows.
func rewriteCount(d Dialect, src string, limit int) (string, bool) {
	toks, ok := lex(d, src)
	if !ok || len(toks) == 0 {
		return "", false
	}
	if t := toks[len(toks)-1]; t.kind == tokPunct && t.text == ";" {
		toks = toks[:len(toks)-1]
	}
	depth := 0
	selectAt := -1
	for i, t := range toks {
		if t.kind == tokWord && keywordsWriting[strings.ToUpper(t.text)] {
			return "", false
		}
		if t.kind != tokPunct {
			if depth == 0 && selectAt < 0 && isWord(t, "SELECT") {
				selectAt = i
			}
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth < 0 {
				return "", false
			}
		case ";":
			return "", false
		}
	}
	if depth != 0 || selectAt < 0 {
		return "", false
	}
	// Only a WITH clause may come before the main SELECT.
	if selectAt > 0 && !isWord(toks[0], "WITH") {
		return "", false
	}
	fromAt, ok := countListEnd(toks, selectAt+1)
	if !ok {
		return "", false
	}
	depth = 0
	for _, t := range toks[fromAt:] {
		switch {
		case t.kind == tokPunct && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tokPunct && (t.text == ")" || t.text == "]" || t.text == "}"):
			depth--
		case t.kind == tokWord && depth == 0 && keywordsNotRowLevel[strings.ToUpper(t.text)]:
			return "", false
		}
	}
	lim := strconv.Itoa(limit)
	var b strings.Builder
	b.WriteString(src[:toks[selectAt].start])
	b.WriteString("SELECT ")
	if d == MSSQL {
		b.WriteString("TOP (" + lim + ") ")
	}
	b.WriteString("*\n")
	// Text after the last token is whitespace, comments or the semicolon: dropped, so
	// that a trailing line comment cannot swallow the limit.
	b.WriteString(src[toks[fromAt].start:toks[len(toks)-1].end])
	if d != MSSQL {
		b.WriteString("\nLIMIT " + lim)
	}
	b.WriteString(";\n")
	return b.String(), true
}

// countListEnd checks that toks[i:] starts with COUNT(*) or COUNT(<integer>), an
// optional alias, and FROM, and returns the index of FROM.
func countListEnd(toks []token, i int) (int, bool) {
	want := func(k int, f func(token) bool) bool { return k < len(toks) && f(toks[k]) }
	punct := func(s string) func(token) bool {
		return func(t token) bool { return t.kind == tokPunct && t.text == s }
	}
	if !want(i, func(t token) bool { return isWord(t, "COUNT") }) || !want(i+1, punct("(")) {
		return 0, false
	}
	arg := func(t token) bool { return t.kind == tokPunct && t.text == "*" || isInteger(t) }
	if !want(i+2, arg) || !want(i+3, punct(")")) {
		return 0, false
	}
	k := i + 4
	if want(k, func(t token) bool { return isWord(t, "AS") }) {
		k++
		if !want(k, func(t token) bool { return t.kind != tokPunct }) {
			return 0, false
		}
		k++
	} else if want(k, func(t token) bool { return t.kind != tokPunct && !isWord(t, "FROM") }) {
		k++
	}
	if !want(k, func(t token) bool { return isWord(t, "FROM") }) {
		return 0, false
	}
	return k, true
}

func isWord(t token, upper string) bool {
	return t.kind == tokWord && strings.EqualFold(t.text, upper)
}

func isInteger(t token) bool {
	if t.kind != tokWord || t.text == "" {
		return false
	}
	for i := 0; i < len(t.text); i++ {
		if t.text[i] < '0' || t.text[i] > '9' {
			return false
		}
	}
	return true
}

// lexer reads SQL text the way dialect d does, as far as token boundaries go.
type lexer struct {
	d         Dialect
	s         string
	i         int
	out       []token
	backslash bool // MySQL only: read backslash escapes (the default sql_mode)
}

// lex splits s into tokens, skipping whitespace and comments. ok is false for text it
// cannot split with certainty: an unterminated quote or comment, a MySQL executable
// comment, a BigQuery triple-quoted literal, a nested comment where nesting is unclear.
func lex(d Dialect, s string) ([]token, bool) {
	toks, ok := lexMode(d, s, true)
	if !ok || d != MySQL {
		return toks, ok
	}
	// Whether a MySQL backslash escapes depends on the server's sql_mode
	// (NO_BACKSLASH_ESCAPES, ANSI_QUOTES). Text is read with certainty only when both
	// readings split it the same way.
	other, ok := lexMode(d, s, false)
	if !ok || len(other) != len(toks) {
		return nil, false
	}
	for i := range toks {
		if toks[i].start != other[i].start || toks[i].end != other[i].end {
			return nil, false
		}
	}
	return toks, true
}

func lexMode(d Dialect, s string, backslash bool) ([]token, bool) {
	// About one token per four bytes in typical SQL; growing the slice dominated.
	l := &lexer{d: d, s: s, backslash: backslash, out: make([]token, 0, len(s)/4+8)}
	for l.i < len(s) {
		if !l.next() {
			return nil, false
		}
	}
	return l.out, true
}

func (l *lexer) emit(k tokKind, start int) {
	l.out = append(l.out, token{kind: k, text: l.s[start:l.i], start: start, end: l.i})
}

func (l *lexer) peek(off int) byte {
	if l.i+off < len(l.s) {
		return l.s[l.i+off]
	}
	return 0
}

func (l *lexer) next() bool {
	c, start := l.s[l.i], l.i
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		l.i++
		return true
	case c == '-' && l.peek(1) == '-' && l.lineComment():
		return true
	case c == '#' && (l.d == MySQL || l.d == BigQuery),
		c == '/' && l.peek(1) == '/' && l.d == Snowflake:
		l.skipLine()
		return true
	case c == '/' && l.peek(1) == '*':
		return l.blockComment()
	case c == '\'':
		if l.d == BigQuery && strings.HasPrefix(l.s[l.i:], "'''") {
			return false
		}
		return l.quoted(start, '\'', l.backslashStrings())
	case c == '"':
		if l.d == BigQuery && strings.HasPrefix(l.s[l.i:], `"""`) {
			return false
		}
		// A string in MySQL, BigQuery and Databricks, an identifier elsewhere.
		return l.quoted(start, '"', l.backslashStrings() && l.d != Snowflake)
	case c == '`':
		return l.quoted(start, '`', l.d == BigQuery)
	case c == '[' && (l.d == MSSQL || l.d == SQLite):
		return l.quoted(start, ']', false)
	case c == '$' && (l.d == Postgres || l.d == DuckDB || l.d == Snowflake):
		if ok, handled := l.dollarQuoted(start); handled {
			return ok
		}
		l.i++
		l.emit(tokPunct, start)
		return true
	case isWordByte(c):
		for l.i < len(l.s) && (isWordByte(l.s[l.i]) || l.s[l.i] == '$') {
			l.i++
		}
		// Postgres (and DuckDB) E'...' strings read backslash escapes.
		if (l.d == Postgres || l.d == DuckDB) && l.i-start == 1 && (c == 'E' || c == 'e') && l.peek(0) == '\'' {
			return l.quoted(start, '\'', true)
		}
		l.emit(tokWord, start)
		return true
	default:
		l.i++
		l.emit(tokPunct, start)
		return true
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (l *lexer) backslashStrings() bool {
	return l.d == MySQL && l.backslash || l.d == BigQuery || l.d == Snowflake || l.d == Databricks
}

// lineComment skips a -- comment and reports whether there was one: MySQL reads "--"
// as a comment only when a space or control character follows.
func (l *lexer) lineComment() bool {
	if l.d == MySQL {
		if c := l.peek(2); c != 0 && c > ' ' {
			return false
		}
	}
	l.skipLine()
	return true
}

func (l *lexer) skipLine() {
	for l.i < len(l.s) && l.s[l.i] != '\n' && l.s[l.i] != '\r' {
		l.i++
	}
}

// blockComment skips a /* */ comment. Postgres, DuckDB, SQL Server and Databricks nest them;
// for the others a /* inside a comment is read differently by different versions, so
// the text is refused.
func (l *lexer) blockComment() bool {
	if l.d == MySQL && l.peek(2) == '!' {
		return false // executable comment: its body is SQL
	}
	nests := l.d == Postgres || l.d == DuckDB || l.d == MSSQL || l.d == Databricks
	depth := 0
	for l.i < len(l.s) {
		switch {
		case l.s[l.i] == '/' && l.peek(1) == '*':
			if depth > 0 && !nests {
				return false
			}
			depth++
			l.i += 2
		case l.s[l.i] == '*' && l.peek(1) == '/':
			depth--
			l.i += 2
			if depth == 0 {
				return true
			}
		default:
			l.i++
		}
	}
	return false
}

// quoted reads a quoted token whose opening character is at l.i (start is earlier
// for a prefixed literal like E'abc'), closed by closer; a doubled closer stands for
// itself, and with backslash a backslash escapes the next byte.
func (l *lexer) quoted(start int, closer byte, backslash bool) bool {
	l.i++
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case backslash && c == '\\':
			l.i += 2
		case c == closer && l.peek(1) == closer:
			l.i += 2
		case c == closer:
			l.i++
			l.emit(tokQuoted, start)
			return true
		default:
			l.i++
		}
	}
	return false
}

// dollarQuoted reads a $tag$ ... $tag$ string. handled is false when the $ does not
// open one (a positional parameter, a $ inside a name).
func (l *lexer) dollarQuoted(start int) (ok, handled bool) {
	j := l.i + 1
	for j < len(l.s) && (isWordByte(l.s[j]) && !(j == l.i+1 && l.s[j] >= '0' && l.s[j] <= '9')) {
		j++
	}
	if j >= len(l.s) || l.s[j] != '$' {
		return false, false
	}
	tag := l.s[l.i : j+1]
	if l.d == Snowflake && tag != "$$" {
		return false, false
	}
	end := strings.Index(l.s[j+1:], tag)
	if end < 0 {
		return false, true
	}
	l.i = j + 1 + end + len(tag)
	l.emit(tokQuoted, start)
	return true, true
}
