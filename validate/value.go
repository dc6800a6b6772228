package validate

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"

	"github.com/vigia-data/vigia/rulesql"
)

// value is one field of a record as the source would hold it: NULL, or a text (the
// form CAST(column AS text) gives), with its number when the JSON value was a number
// or a text that reads as one.
type value struct {
	null bool
	text string
	// num is set for JSON numbers and for texts that read as a decimal number.
	num *big.Rat
	// composite marks a JSON object or array: no rule of Vigia compares one.
	composite bool
}

// valueOf reads one JSON field. A missing field is NULL: a row loaded without the
// column gets NULL unless the table declares a default, which Vigia does not know.
func valueOf(raw json.RawMessage, present bool) value {
	if !present {
		return value{null: true}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return value{null: true}
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return value{null: true}
		}
		return value{text: s, num: decimal(s)}
	case '{', '[':
		return value{composite: true, text: string(raw)}
	case 't', 'f':
		return value{text: string(raw)}
	default:
		s := string(raw)
		return value{text: s, num: decimal(s)}
	}
}

// decimal reads s as an exact decimal number (what a numeric column accepts), nil
// otherwise. Exact, because the source compares decimals exactly.
func decimal(s string) *big.Rat {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 100 {
		return nil
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return nil
		}
	}
	if i := strings.IndexAny(t, "eE"); i >= 0 && len(strings.TrimLeft(t[i+1:], "+-")) > 3 {
		// An exponent of four digits would make an exact number of thousands of digits.
		return nil
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil
	}
	return r
}

// PatternCompatible reports whether a rule's pattern reads the same in Go as in the
// source's regular-expression flavour (Postgres ARE, MySQL/MariaDB ICU or PCRE, SQLite
// with Vigia's Go function), so that a record's answer agrees with the scan's. Only the
// common core is accepted: literals, escaped punctuation, \d and \D, bracket
// expressions with ASCII ranges, [:digit:], groups (capturing or (?:...)),
// alternation, anchors and counted repetition up to 255. Word and space classes,
// back-references, look-arounds, flags and POSIX classes that follow the locale read
// differently from one engine to another and make the rule not applicable to records.
func PatternCompatible(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '\\':
			if i+1 >= len(pattern) {
				return false
			}
			n := pattern[i+1]
			if n == 'd' || n == 'D' || strings.IndexByte(`.\+*?()|[]{}^$-/`, n) >= 0 {
				i++
				continue
			}
			return false
		case '(':
			if i+1 < len(pattern) && pattern[i+1] == '?' {
				if i+2 < len(pattern) && pattern[i+2] == ':' {
					continue
				}
				return false
			}
		case '[':
			if strings.HasPrefix(pattern[i:], "[:") && !strings.HasPrefix(pattern[i:], "[:digit:]") {
				return false
			}
			if strings.HasPrefix(pattern[i:], "[=") || strings.HasPrefix(pattern[i:], "[.") {
				return false
			}
		case '{':
			j := strings.IndexByte(pattern[i:], '}')
			if j < 0 {
				return false
			}
			for _, part := range strings.Split(pattern[i+1:i+j], ",") {
				if len(part) > 3 || len(part) == 3 && part > "255" {
					return false
				}
			}
		}
		if c >= 0x80 {
			// Non-ASCII pattern text compares by the source's collation on MySQL.
			return false
		}
	}
	return true
}

// compilePattern compiles a compatible pattern the way the sources read it: a search
// (not a full match), case-sensitive, with . matching a line break as in Postgres
// ARE's default mode.
func compilePattern(pattern string, dialect rulesql.Dialect) (*regexp.Regexp, bool) {
	if !PatternCompatible(pattern) {
		return nil, false
	}
	flags := "(?s)"
	if dialect == rulesql.SQLite || dialect == rulesql.DuckDB {
		// SQLite calls Vigia's function, which compiles the pattern as it is; DuckDB's
		// regexp_matches is RE2, whose defaults are Go's (. does not match a newline).
		flags = ""
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, false
	}
	return re, true
}
