package vigia

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies an error; each transport maps a kind to its status once.
type Kind int

// The kinds of error a service may return.
const (
	KindInternal         Kind = iota // a fault of ours; the cause is logged, never shown
	KindInvalid                      // 422: invalid parameters or body
	KindBadRequest                   // 400: malformed request outside validation (e.g. stale timestamp)
	KindUnauthenticated              // 401
	KindPaymentRequired              // 402
	KindForbidden                    // 403
	KindNotFound                     // 404: missing, in another workspace, or invisible
	KindConflict                     // 409
	KindTooLarge                     // 413
	KindRateLimited                  // 429
	KindNotImplemented               // 501
	KindBadGateway                   // 502
	KindUnavailable                  // 503
	KindMethodNotAllowed             // 405
)

// Fault reports whether k is a failure on Vigia's side or of a provider it called
// (the 5xx answers): every transport logs its cause, and never shows it.
func (k Kind) Fault() bool {
	return HTTPStatus(k) >= http.StatusInternalServerError
}

// statusByKind is the one table from error kind to HTTP status, for both transports.
var statusByKind = map[Kind]int{
	KindInternal:         http.StatusInternalServerError,
	KindInvalid:          http.StatusUnprocessableEntity,
	KindBadRequest:       http.StatusBadRequest,
	KindUnauthenticated:  http.StatusUnauthorized,
	KindPaymentRequired:  http.StatusPaymentRequired,
	KindForbidden:        http.StatusForbidden,
	KindNotFound:         http.StatusNotFound,
	KindConflict:         http.StatusConflict,
	KindTooLarge:         http.StatusRequestEntityTooLarge,
	KindRateLimited:      http.StatusTooManyRequests,
	KindNotImplemented:   http.StatusNotImplemented,
	KindBadGateway:       http.StatusBadGateway,
	KindUnavailable:      http.StatusServiceUnavailable,
	KindMethodNotAllowed: http.StatusMethodNotAllowed,
}

// HTTPStatus is the HTTP status of an error kind (500 for an unknown one).
func HTTPStatus(k Kind) int {
	if s, ok := statusByKind[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Stable error codes of the contract (part 7) and of Vigia's own catalogue.
const (
	CodeAuthRequired       = "auth_required"
	CodeTokenInvalid       = "token_invalid"
	CodeTokenReadOnly      = "token_read_only"
	CodeWorkspaceSuspended = "workspace_suspended"
	CodeForbidden          = "forbidden"
	CodeNotFound           = "not_found"
	CodeValidation         = "validation_error"
	CodeRateLimited        = "rate_limited"
	CodeScanQueueFull      = "scan_queue_full"
	CodePayloadTooLarge    = "payload_too_large"
	CodeConflict           = "conflict"
	CodeInternal           = "internal_error"
	CodeUnavailable        = "service_unavailable"
	CodeBadRequest         = "bad_request"
	CodeMethodNotAllowed   = "method_not_allowed"
)

// FieldError is one item of a 422 detail list. Ctx holds only the rule's bounds
// (gt, ge, lt, le, multiple_of, min_length, max_length, max_digits, decimal_places);
// the received value is never kept.
type FieldError struct {
	Type string         // stable type, e.g. less_than_equal, missing, int_parsing
	Loc  []string       // the field, named by the service: ["limit"], ["params", "column"]; the transport prefixes where it came from
	Ctx  map[string]any // bounds only
}

// boundKeys are the ctx keys a 422 item may show: the rule's bounds.
var boundKeys = map[string]bool{"gt": true, "ge": true, "lt": true, "le": true, "multiple_of": true,
	"min_length": true, "max_length": true, "max_digits": true, "decimal_places": true}

// Bounds returns the item's ctx restricted to the rule's bounds, what a transport may
// show; never nil.
func (f FieldError) Bounds() map[string]any {
	out := map[string]any{}
	for k, v := range f.Ctx {
		if boundKeys[k] {
			out[k] = v
		}
	}
	return out
}

// Error is the one error type services return to transports.
type Error struct {
	Kind   Kind
	Code   string         // stable snake_case code
	Key    string         // message catalogue key for detail
	Params map[string]any // message parameters; never a received value or a secret
	Fields []FieldError   // 422 items
	// RetryAfter is the number of seconds a client should wait (429).
	RetryAfter int
	// Detail holds members of a structured detail beside its code and message (names
	// the caller needs to act, e.g. the unmatched names of a refused import); never a
	// secret or a source value.
	Detail map[string]any
	// Plan is set on a 402: the workspace's plan and the limit it reached, members of
	// the error body.
	Plan *PlanLimit
	// Err is the internal cause: logged, never returned to a client.
	Err error
}

// PlanLimit is what a 402 body adds: the workspace's plan and the limit reached (0 when
// the plan does not include the feature), with the plan a feature needs or the quota
// that is used up.
type PlanLimit struct {
	Plan     string
	Limit    int
	Required string // plan_limit: the smallest plan that includes the feature
	Quota    string // org_quota: the quota used up
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Code, e.Err)
	}
	return e.Code
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error inside err, or an internal error wrapping err.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Code: CodeInternal, Key: "error.internal", Err: err}
}

// IsKind reports whether err is a Vigia error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// NotFound reports a missing or invisible resource. The answer is the same whatever
// the reason, so that another workspace's ids cannot be told apart from unknown ones.
func NotFound() *Error {
	return &Error{Kind: KindNotFound, Code: CodeNotFound, Key: "error.not_found"}
}

// Invalid reports a 422 with the given items.
func Invalid(fields ...FieldError) *Error {
	return &Error{Kind: KindInvalid, Code: CodeValidation, Key: "error.validation", Fields: fields}
}

// Forbidden reports a 403 with a stable code and message key.
func Forbidden(code, key string) *Error {
	return &Error{Kind: KindForbidden, Code: code, Key: key}
}

// Unauthenticated reports a 401 with code auth_required or token_invalid.
func Unauthenticated(code string) *Error {
	return &Error{Kind: KindUnauthenticated, Code: code, Key: "error." + code}
}

// ReadOnly is the answer to a write attempted with an API token.
func ReadOnly() *Error {
	return Forbidden(CodeTokenReadOnly, "error.token_read_only")
}

// RateLimited reports a 429 with the seconds to wait.
func RateLimited(code string, retryAfter int) *Error {
	return &Error{Kind: KindRateLimited, Code: code, Key: "error." + code, RetryAfter: retryAfter,
		Params: map[string]any{"retry_after": retryAfter}}
}

// Conflict reports a 409 with a stable code.
func Conflict(code, key string, params map[string]any) *Error {
	return &Error{Kind: KindConflict, Code: code, Key: key, Params: params}
}

// BadRequest reports a 400 with a stable code.
func BadRequest(code, key string) *Error {
	return &Error{Kind: KindBadRequest, Code: code, Key: key}
}

// BadGateway reports a 502: an external provider Vigia called on the caller's behalf
// failed or was refused. cause is logged, never shown; params must hold no URL, token
// or text of the provider.
func BadGateway(code, key string, params map[string]any, cause error) *Error {
	return &Error{Kind: KindBadGateway, Code: code, Key: key, Params: params, Err: cause}
}

// Internal wraps a cause that must be logged and never shown.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Code: CodeInternal, Key: "error.internal", Err: err}
}

// FieldsOf returns the 422 items of err (none when err is nil or of another kind), so a
// service can gather one check's items with its own.
func FieldsOf(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) && e.Kind == KindInvalid {
		return e.Fields
	}
	return nil
}

// Field builds a 422 item.
func Field(typ string, ctx map[string]any, loc ...string) FieldError {
	return FieldError{Type: typ, Loc: loc, Ctx: ctx}
}
