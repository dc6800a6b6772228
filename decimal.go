package vigia

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Decimal is an exact number as the source database printed it: "9007199254740993",
// "-12345678901234567890.1234567891", "1.5e+300". It never passes through float64, so a
// bigint, a numeric(38,10) or an unsigned 64-bit extreme keeps every digit from the
// source to the JSON.
//
// In JSON it is a number when float64 holds it exactly (a client parsing it as a double
// reads the same value), and a string of the same digits otherwise; it reads back both
// forms.
type Decimal string

// decimalRE is the JSON number grammar: what a Decimal may hold.
var decimalRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ParseDecimal reads a number as a database prints it: leading zeros and a leading "+"
// are dropped, and "NaN", "Infinity" and anything else that is not a finite decimal
// number give ok false.
func ParseDecimal(s string) (Decimal, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	// MySQL prints DECIMAL(5,2) 0.5 as "0.50" and SQLite may print ".5"; trim zeros that
	// JSON forbids before the point, keep one.
	for len(body) > 1 && body[0] == '0' && body[1] >= '0' && body[1] <= '9' {
		body = body[1:]
	}
	if strings.HasPrefix(body, ".") {
		body = "0" + body
	}
	if neg {
		body = "-" + body
	}
	if !decimalRE.MatchString(body) {
		return "", false
	}
	return Decimal(body), true
}

// DecimalFromInt is the exact text of an integer.
func DecimalFromInt(i int64) Decimal { return Decimal(strconv.FormatInt(i, 10)) }

// DecimalFromFloat is the shortest text that reads back as f; ok is false for NaN and
// infinities. Use it only for values the source itself holds as binary floating point.
func DecimalFromFloat(f float64) (Decimal, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	return Decimal(strconv.FormatFloat(f, 'g', -1, 64)), true
}

// Rat returns the exact value.
func (d Decimal) Rat() (*big.Rat, bool) {
	r, ok := new(big.Rat).SetString(string(d))
	return r, ok
}

// Float64 returns the nearest float64 (for statistics that tolerate rounding, never for
// reporting the value itself).
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(string(d), 64)
	return f
}

// ExactFloat reports whether float64 holds the value exactly.
func (d Decimal) ExactFloat() bool {
	r, ok := d.Rat()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(d), 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	fr, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && fr.Cmp(r) == 0
}

// MarshalJSON writes a number when float64 holds the value exactly, else a string.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if !decimalRE.MatchString(string(d)) {
		return nil, errors.New("vigia: not a decimal number")
	}
	if d.ExactFloat() {
		return []byte(d), nil
	}
	return json.Marshal(string(d))
}

// UnmarshalJSON reads a number or a string holding one, keeping its digits.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, ok := ParseDecimal(s)
	if !ok {
		return errors.New("vigia: not a decimal number")
	}
	*d = v
	return nil
}
