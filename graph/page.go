package graph

import "github.com/vigia-data/vigia"

// pageOf checks limit (1-500) and offset (>= 0) of a list argument pair.
func pageOf(limit, offset *int, def int) (vigia.Page, error) {
	p := vigia.Page{Limit: def}
	if limit != nil {
		p.Limit = *limit
	}
	if offset != nil {
		p.Offset = *offset
	}
	var fields []vigia.FieldError
	if p.Limit < 1 || p.Limit > 500 {
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": 500}, "args", "limit"))
	}
	if p.Offset < 0 {
		fields = append(fields, vigia.Field("greater_than_equal", map[string]any{"ge": 0}, "args", "offset"))
	}
	if len(fields) > 0 {
		return p, vigia.Invalid(fields...)
	}
	return p, nil
}
