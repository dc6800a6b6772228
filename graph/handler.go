package graph

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/graph/generated"
	"github.com/vigia-data/vigia/i18n"
)

// maxComplexity bounds a query's cost so one request cannot ask for everything.
const maxComplexity = 5000

// NewHandler returns the POST /graphql handler. It runs behind the same middleware as
// /api/v1 (authentication, rate limits, language), so the principal is in ctx.
func NewHandler(r *Resolver, msgs *i18n.Catalog, log *slog.Logger) http.Handler {
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: r}))
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.GET{})
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(maxComplexity))
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, err, msgs, log)
	})
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "graphql panic", "request_id", vigia.RequestID(ctx))
		return vigia.Internal(errors.New("panic"))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		srv.ServeHTTP(w, req.WithContext(r.withLoaders(req.Context())))
	})
}

// presentError maps a Vigia error to a GraphQL error whose extensions.code is the
// same stable code REST answers with; internal causes are logged, never shown.
func presentError(ctx context.Context, err error, msgs *i18n.Catalog, log *slog.Logger) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		// Parse or validation errors of the query document itself.
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		if _, ok := gqlErr.Extensions["code"]; !ok {
			gqlErr.Extensions["code"] = "graphql_validation_failed"
		}
		gqlErr.Extensions["request_id"] = vigia.RequestID(ctx)
		return gqlErr
	}
	e := vigia.AsError(err)
	if vigia.ClientClosed(ctx, err) {
		log.InfoContext(ctx, "client_closed", "request_id", vigia.RequestID(ctx))
	} else if e.Kind == vigia.KindInternal {
		log.ErrorContext(ctx, "graphql resolver failed", "request_id", vigia.RequestID(ctx), "cause", causeText(e))
	}
	lang := vigia.Lang(ctx)
	out := &gqlerror.Error{Path: graphql.GetPath(ctx), Message: msgs.Message(lang, e.Key, e.Params),
		Extensions: map[string]any{"code": e.Code, "request_id": vigia.RequestID(ctx)}}
	if e.Kind == vigia.KindInvalid {
		items := make([]map[string]any, 0, len(e.Fields))
		for _, f := range e.Fields {
			items = append(items, map[string]any{"type": f.Type, "loc": f.Loc, "msg": msgs.FieldMessage(lang, f.Type, f.Ctx), "ctx": f.Ctx})
		}
		out.Extensions["detail"] = items
	}
	if e.Kind == vigia.KindRateLimited {
		out.Extensions["retry_after"] = e.RetryAfter
	}
	return out
}

func causeText(e *vigia.Error) string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
