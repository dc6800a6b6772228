package source

import (
	"math"
	"strings"
)

// ValueWidth is the storage size in bytes of one value of a fixed-width column type as
// Postgres and MySQL/MariaDB keep it (integer 4, bigint 8, timestamp 8, date 4, boolean
// 1...), and 0 for types whose values vary in length (text, numeric, json...), which
// ProfileBytes measures by their mean length instead.
func ValueWidth(dataType string) int {
	t := strings.ToLower(strings.TrimSpace(dataType))
	if i := strings.IndexByte(t, '('); i >= 0 && !strings.HasPrefix(t, "timestamp") && !strings.HasPrefix(t, "time") {
		t = strings.TrimSpace(t[:i]) + strings.TrimSpace(t[strings.IndexByte(t, ')')+1:])
	}
	t = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(t, "unsigned")), " zerofill")
	switch {
	case t == "boolean" || t == "bool" || t == "tinyint" || t == "bit" || t == "year":
		return 1
	case t == "smallint" || t == "int2":
		return 2
	case t == "mediumint":
		return 3
	case t == "integer" || t == "int" || t == "int4" || t == "real" || t == "float4" || t == "float" || t == "date" || t == "serial":
		return 4
	case t == "bigint" || t == "int8" || t == "bigserial" || t == "double precision" || t == "double" || t == "float8" ||
		t == "money" || strings.HasPrefix(t, "timestamp") || t == "datetime" || strings.HasPrefix(t, "time"):
		if strings.HasPrefix(t, "timetz") || strings.HasPrefix(t, "time with time zone") {
			return 12
		}
		return 8
	case t == "uuid" || t == "interval":
		return 16
	}
	return 0
}

// ProfileBytes is how many bytes of values a profile read: for each column, its non-null
// values (the profile's row count less its null count) times the type's storage size
// (ValueWidth), or, for types of varying length, times the column's mean length in
// characters (one byte each for ASCII text; the profile measures characters). A column
// without either (a varying type of no text class) counts 8 bytes a value. Rows are those
// the profile read: the whole table at depths standard and deep, the first rows at basic.
func ProfileBytes(cols []Column, p *TableProfile) int64 {
	if p == nil {
		return 0
	}
	byName := make(map[string]ColumnProfile, len(p.Columns))
	for _, c := range p.Columns {
		byName[c.Name] = c
	}
	var total float64
	for _, c := range cols {
		cp, ok := byName[c.Name]
		if !ok {
			continue
		}
		values := float64(p.RowCount - cp.NullCount)
		if values <= 0 {
			continue
		}
		switch w := ValueWidth(c.DataType); {
		case w > 0:
			total += values * float64(w)
		case cp.AvgLength != nil:
			total += values * *cp.AvgLength
		default:
			total += values * 8
		}
	}
	return int64(math.Round(total))
}
