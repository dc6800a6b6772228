package sqllineage

import "strings"

// MapCatalog is a Catalog held in memory: "schema.table" or "table" → columns in
// order. A lookup tries the exact name first, then (for an unqualified reference) a
// lone table of that name in any schema, then the same without regard to case, which
// is how MySQL and SQLite compare names.
type MapCatalog map[string][]string

// Columns returns the columns of t, if the map knows it.
func (m MapCatalog) Columns(t TableRef) ([]string, bool) {
	key := t.String()
	if cols, ok := m[key]; ok {
		return cols, true
	}
	var found []string
	n := 0
	for k, cols := range m {
		if strings.EqualFold(k, key) || (t.Schema == "" && suffixTable(k, t.Name)) {
			found = cols
			n++
		}
	}
	if n == 1 {
		return found, true
	}
	return nil, false
}

// suffixTable reports whether key is schema.name for some schema.
func suffixTable(key, name string) bool {
	i := strings.LastIndexByte(key, '.')
	return i >= 0 && strings.EqualFold(key[i+1:], name)
}
