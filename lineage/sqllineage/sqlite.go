package sqllineage

import "regexp"

// createViewIfNotExists finds SQLite's "CREATE [TEMP] VIEW IF NOT EXISTS", which
// Postgres does not accept; submatch 1 is the IF NOT EXISTS to blank out.
var createViewIfNotExists = regexp.MustCompile(`(?is)^\s*create\s+(?:temp\s+|temporary\s+)?view\s+(if\s+not\s+exists)\s`)

// sqliteToPostgres rewrites what SQLite accepts and Postgres does not, byte for byte
// so that offsets stay the same: `name` and [name] identifiers become "name", and
// IF NOT EXISTS after CREATE VIEW becomes spaces. Everything else is left to the
// Postgres parser, which rejects what it cannot read.
func sqliteToPostgres(sql string) string {
	b := []byte(sql)
	if m := createViewIfNotExists.FindSubmatchIndex(b); m != nil {
		for i := m[2]; i < m[3]; i++ {
			b[i] = ' '
		}
	}
	const (
		plain = iota
		single
		double
		backtick
		bracket
		lineComment
		blockComment
	)
	state := plain
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch state {
		case plain:
			switch {
			case ch == '\'':
				state = single
			case ch == '"':
				state = double
			case ch == '`':
				state, b[i] = backtick, '"'
			case ch == '[':
				state, b[i] = bracket, '"'
			case ch == '-' && i+1 < len(b) && b[i+1] == '-':
				state = lineComment
			case ch == '/' && i+1 < len(b) && b[i+1] == '*':
				state = blockComment
			}
		case single:
			if ch == '\'' {
				state = plain // a doubled '' reopens at once on the next byte
			}
		case double:
			if ch == '"' {
				state = plain
			}
		case backtick:
			if ch == '`' {
				if i+1 < len(b) && b[i+1] == '`' {
					// `` inside a backtick name is one backtick; keep both bytes
					i++
					continue
				}
				state, b[i] = plain, '"'
			}
		case bracket:
			if ch == ']' {
				state, b[i] = plain, '"'
			}
		case lineComment:
			if ch == '\n' {
				state = plain
			}
		case blockComment:
			if ch == '*' && i+1 < len(b) && b[i+1] == '/' {
				state = plain
				i++
			}
		}
	}
	return string(b)
}
