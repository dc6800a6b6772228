package connect

import (
	"context"
	"errors"
	"github.com/vigia-data/vigia/source"
	"net"
)

func newError(kind source.Kind, op, reason, code string) *source.Error {
	return source.NewError(kind, op, reason, code, nil)
}

// classifier turns a driver error into a reason and a safe code; each dialect has one.
type classifier func(err error) (reason, code string)

// translate reduces any error to an *Error without its message. ctx is the statement's
// context: its expiry decides between timeout and cancellation whatever the driver says.
func translate(ctx context.Context, kind source.Kind, op string, err error, classify classifier) *source.Error {
	var e *source.Error
	if errors.As(err, &e) {
		return e
	}
	var reason, code string
	var cause error
	if classify != nil {
		reason, code = classify(err)
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		reason, cause = source.ReasonTimeout, context.DeadlineExceeded
	case errors.Is(ctx.Err(), context.Canceled), errors.Is(err, context.Canceled):
		reason, cause = source.ReasonCanceled, context.Canceled
	}
	out := source.NewError(kind, op, reason, code, cause)
	if out.Reason == "" || out.Reason == source.ReasonQuery {
		if errors.As(err, new(dialFailed)) {
			out.Reason = source.ReasonUnreachable
		}
	}
	if out.Reason == "" {
		var ne net.Error
		var oe *net.OpError
		var de *net.DNSError
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			out.Reason = source.ReasonTimeout
		case errors.As(err, &oe), errors.As(err, &de):
			out.Reason = source.ReasonUnreachable
		default:
			out.Reason = source.ReasonQuery
		}
	}
	return out
}

// dialFailed replaces the error of the Dial option: its message may name the address or
// say why a guard refused it, and neither belongs in an error of this package.
type dialFailed struct{}

func (dialFailed) Error() string { return "dial failed" }

// guardDial wraps the Dial option so that its failures are recognisable and message-free.
func guardDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, dialFailed{}
		}
		return c, nil
	}
}
