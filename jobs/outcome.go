package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/vigia-data/vigia"
)

// outcomeKind says how a handler asked its job to end, beyond succeeding or failing.
type outcomeKind int

const (
	outcomeRetry     outcomeKind = iota + 1 // retry after a chosen delay
	outcomeSnooze                           // reschedule without using up an attempt
	outcomePermanent                        // fail now, attempts left or not
)

// outcome is the error a handler returns to choose how its job ends.
type outcome struct {
	kind  outcomeKind
	after time.Duration
	err   error
}

func (o *outcome) Error() string {
	name := map[outcomeKind]string{outcomeRetry: "retry", outcomeSnooze: "snooze", outcomePermanent: "permanent"}[o.kind]
	if o.err == nil {
		return "jobs: " + name
	}
	return "jobs: " + name + ": " + o.err.Error()
}

func (o *outcome) Unwrap() error { return o.err }

// Retry asks for the job to run again after the given delay instead of the default
// backoff (webhook deliveries use 1s, 5s, 25s). The attempt counts: when it was the last
// of MaxAttempts, the job fails.
func Retry(err error, after time.Duration) error {
	return &outcome{kind: outcomeRetry, after: max(after, 0), err: err}
}

// Snooze asks for the job to run again after the given delay without using up an
// attempt: for a job that found its work not ready yet. The next run still sees
// Job.Attempt grow, since the earlier run may have done part of the work.
func Snooze(after time.Duration) error {
	return &outcome{kind: outcomeSnooze, after: max(after, 0)}
}

// Permanent fails the job at once, without the retries it has left: for errors that
// another attempt cannot fix (a webhook answered 4xx, the subject was deleted).
func Permanent(err error) error {
	return &outcome{kind: outcomePermanent, err: err}
}

// codedError carries the stable code stored in last_error.
type codedError struct {
	code string
	err  error
}

func (c *codedError) Error() string {
	if c.err == nil {
		return c.code
	}
	return c.code + ": " + c.err.Error()
}

func (c *codedError) Unwrap() error { return c.err }

// WithCode tags err with the stable code stored in the job's last_error and logged
// (e.g. "http_503", "source_unreachable"). The code must be a short snake_case word
// naming the kind of failure; it is never a message, a value or a secret. Untagged
// errors are recorded by the Code of a *vigia.Error in their chain, else as "timeout",
// "canceled" or "error".
func WithCode(code string, err error) error {
	return &codedError{code: code, err: err}
}

// errorCode returns the stable code recorded for a handler error.
func errorCode(err error) string {
	var c *codedError
	if errors.As(err, &c) && validCode(c.code) {
		return c.code
	}
	var ve *vigia.Error
	if errors.As(err, &ve) && validCode(ve.Code) {
		return ve.Code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// validCode keeps last_error a short code even when a caller passes something else.
func validCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}
