package vigia

import "time"

// MaxLimit is the largest page a list answers (contract: limit 1-500, above is 422).
const MaxLimit = 500

// Page is the window of a list: limit 1-MaxLimit, offset >= 0.
type Page struct {
	Limit  int
	Offset int
}

// PageOf is the window a caller asked for: a nil limit is not given and takes def (the
// list's default, declared by its service), a nil offset takes 0. Validate checks it.
func PageOf(limit, offset *int, def int) Page {
	p := Page{Limit: def}
	if limit != nil {
		p.Limit = *limit
	}
	if offset != nil {
		p.Offset = *offset
	}
	return p
}

// Validate is the one check of a list window. Its items name the fields (["limit"],
// ["offset"]); each transport prefixes where they came from (query, args).
func (p Page) Validate() error {
	var fields []FieldError
	if p.Limit < 1 {
		fields = append(fields, Field("greater_than_equal", map[string]any{"ge": 1}, "limit"))
	} else if p.Limit > MaxLimit {
		fields = append(fields, Field("less_than_equal", map[string]any{"le": MaxLimit}, "limit"))
	}
	if p.Offset < 0 {
		fields = append(fields, Field("greater_than_equal", map[string]any{"ge": 0}, "offset"))
	}
	if len(fields) > 0 {
		return Invalid(fields...)
	}
	return nil
}

// List is one page of results with the total the caller may see.
type List[T any] struct {
	Items []T
	Total int
}

// Clock tells the time; tests pass a fixed one.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock, in UTC.
type SystemClock struct{}

// Now returns the current time in UTC.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// Ptr returns a pointer to v, for optional fields.
func Ptr[T any](v T) *T { return &v }
