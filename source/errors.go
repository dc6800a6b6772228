package source

import (
	"errors"
	"strings"
)

// Reasons an operation on a source fails. They are stable snake_case codes.
const (
	ReasonInvalidDSN   = "invalid_dsn" // the DSN does not parse, or uses a refused option
	ReasonUnsupported  = "unsupported" // unknown kind
	ReasonUnreachable  = "unreachable" // the network connection failed (or the dialer refused the address)
	ReasonAuth         = "auth_failed" // the source refused the credentials
	ReasonNotFound     = "not_found"   // database, file, schema or table does not exist
	ReasonPermission   = "permission_denied"
	ReasonTimeout      = "timeout" // the statement timeout or the context deadline expired
	ReasonCanceled     = "canceled"
	ReasonQuery        = "query_failed" // the source rejected a statement
	ReasonResult       = "bad_result"   // the source answered something this package cannot read
	ReasonClosed       = "closed"
	ReasonInvalidTable = "invalid_table" // the Table given to Profile is unusable
	// ReasonNotPopulated: a materialized view that was never refreshed (Postgres 55000)
	// cannot be read until REFRESH MATERIALIZED VIEW runs.
	ReasonNotPopulated  = "not_populated"
	ReasonInternalError = "internal"
)

// Error is the only error type this package returns. It never holds the DSN, a password,
// a host name or a value: driver errors are reduced to a reason and, where it is safe, the
// driver's code (SQLSTATE for Postgres, the error number for MySQL, the result code for
// SQLite). The driver's message is dropped, because drivers echo DSNs and values in it.
type Error struct {
	Op     string // open, validate, ping, discover, profile
	Kind   Kind
	Reason string // one of the Reason constants
	Code   string // driver code, or "" when none
	// cause is kept only for context errors, so errors.Is(err, context.DeadlineExceeded)
	// works; it never holds a driver error.
	cause error
}

// Error renders the error as "source KIND OP: REASON (CODE)"; nothing else is in it.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("source")
	if e.Kind != "" {
		b.WriteString(" ")
		b.WriteString(string(e.Kind))
	}
	if e.Op != "" {
		b.WriteString(" ")
		b.WriteString(e.Op)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Code != "" {
		b.WriteString(" (")
		b.WriteString(e.Code)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns context.Canceled or context.DeadlineExceeded when the operation ended
// because of its context, nil otherwise.
func (e *Error) Unwrap() error { return e.cause }

// IsReason reports whether err is an *Error with the given reason.
func IsReason(err error, reason string) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == reason
}

// NewError builds an *Error; cause may only be context.Canceled or
// context.DeadlineExceeded (never a driver error), so errors.Is works on it.
func NewError(kind Kind, op, reason, code string, cause error) *Error {
	return &Error{Op: op, Kind: kind, Reason: reason, Code: code, cause: cause}
}
