package connect

import (
	"github.com/vigia-data/vigia/source"
	"regexp"
	"strings"
)

// NormalizeStatement returns stmt as the query log shows it: string and numeric literals
// become ?, comments are dropped, runs of whitespace fold to one space, and lists of
// placeholders such as IN (?, ?, ?) fold to (?, ...). Quoted identifiers ("x", `x`) are
// kept: they are names, not values. Positional parameters ($1) are kept. The kind decides
// whether a backslash escapes a quote inside a string (MySQL) or not (Postgres, SQLite),
// so that a literal is never cut short and half of it shown.
func NormalizeStatement(kind source.Kind, stmt string) string {
	backslash := kind == source.MySQL
	var b strings.Builder
	b.Grow(len(stmt))
	space := false
	emit := func(s string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s)
	}
	for i := 0; i < len(stmt); {
		c := stmt[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
			for i < len(stmt) && stmt[i] != '\n' {
				i++
			}
			space = true
		case c == '/' && i+1 < len(stmt) && stmt[i+1] == '*':
			end := strings.Index(stmt[i+2:], "*/")
			if end < 0 {
				i = len(stmt)
			} else {
				i += end + 4
			}
			space = true
		case c == '\'':
			i = skipQuoted(stmt, i, '\'', backslash)
			emit("?")
		case c == '"' || c == '`':
			j := skipQuoted(stmt, i, c, false)
			emit(stmt[i:j])
			i = j
		case c == '$' && i+1 < len(stmt) && isDigit(stmt[i+1]):
			// Positional parameter: kept, it holds no value.
			j := i + 1
			for j < len(stmt) && isDigit(stmt[j]) {
				j++
			}
			emit(stmt[i:j])
			i = j
		case c == '$' && i+1 < len(stmt) && (stmt[i+1] == '$' || isIdentStart(stmt[i+1])):
			// Dollar-quoted string: $$...$$ or $tag$...$tag$.
			j := i + 1
			for j < len(stmt) && stmt[j] != '$' && isIdentChar(stmt[j]) {
				j++
			}
			if j < len(stmt) && stmt[j] == '$' {
				tag := stmt[i : j+1]
				end := strings.Index(stmt[j+1:], tag)
				if end < 0 {
					i = len(stmt)
				} else {
					i = j + 1 + end + len(tag)
				}
				emit("?")
				continue
			}
			emit(stmt[i:j])
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(stmt) && isDigit(stmt[i+1])):
			emit("?")
			i = skipNumber(stmt, i)
		case isIdentStart(c):
			j := i
			for j < len(stmt) && isIdentChar(stmt[j]) {
				j++
			}
			word := stmt[i:j]
			// E'...', X'...', B'...', N'...' prefixes of string literals.
			if j < len(stmt) && stmt[j] == '\'' && len(word) == 1 && strings.ContainsAny(word, "eEbBxXnN") {
				i = skipQuoted(stmt, j, '\'', backslash || word == "e" || word == "E")
				emit("?")
				continue
			}
			emit(word)
			i = j
		default:
			// Punctuation: no space before , ) and none after (.
			if c == ',' || c == ')' {
				space = false
			}
			if space && b.Len() > 0 && c != ',' && c != ')' {
				b.WriteByte(' ')
			}
			space = false
			b.WriteByte(c)
			i++
			if c == '(' {
				for i < len(stmt) && (stmt[i] == ' ' || stmt[i] == '\n' || stmt[i] == '\t' || stmt[i] == '\r') {
					i++
				}
			}
		}
	}
	return placeholderList.ReplaceAllString(b.String(), "(?, ...)")
}

var placeholderList = regexp.MustCompile(`\(\?(?:, ?\?)+\)`)

// skipQuoted returns the index just past the quoted token starting at i. A doubled quote
// inside is an escaped quote; with backslash, a backslash escapes the next byte (MySQL
// strings and Postgres E” strings; harmless elsewhere for a log).
func skipQuoted(s string, i int, q byte, backslash bool) int {
	j := i + 1
	for j < len(s) {
		switch s[j] {
		case '\\':
			if backslash {
				j += 2
				continue
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return len(s)
}

// skipNumber returns the index just past the numeric literal starting at i: digits with a
// decimal point and exponent, or 0x hexadecimal.
func skipNumber(s string, i int) int {
	j := i
	if s[j] == '0' && j+1 < len(s) && (s[j+1] == 'x' || s[j+1] == 'X') {
		j += 2
		for j < len(s) && isHexDigit(s[j]) {
			j++
		}
		return j
	}
	for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
		j++
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			j = k
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
	}
	return j
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }
