package vigia

import (
	"context"
	"errors"
)

type requestIDKey struct{}
type langKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// WithLang returns ctx carrying the language of the response (pt-PT, en, es).
func WithLang(ctx context.Context, lang string) context.Context {
	return context.WithValue(ctx, langKey{}, lang)
}

// Lang returns the language of the response in ctx, pt-PT when none was chosen.
func Lang(ctx context.Context) string {
	if l, ok := ctx.Value(langKey{}).(string); ok && l != "" {
		return l
	}
	return "pt-PT"
}

// ClientClosed reports whether err is the cancellation of a request whose caller went
// away: not a server failure, and nobody is left to answer.
func ClientClosed(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled)
}
