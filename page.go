package vigia

import "time"

// Page is the window of a list: limit 1-500, offset >= 0.
type Page struct {
	Limit  int
	Offset int
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
