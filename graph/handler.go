package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
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
	es := generated.NewExecutableSchema(generated.Config{Resolvers: r})
	srv := handler.New(es)
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.GET{})
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(maxComplexity))
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, err, es.Schema(), msgs, log)
	})
	// A panic becomes an internal error whose cause carries the panic value: the
	// presenter logs it with the request id and answers the fixed message.
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		return vigia.Internal(fmt.Errorf("panic: %v", p))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		srv.ServeHTTP(w, req.WithContext(r.withLoaders(req.Context())))
	})
}

// presentError maps a Vigia error to a GraphQL error whose extensions.code is the
// same stable code REST answers with, as REST does: the cause of every fault (the kinds
// REST answers with a 5xx, panics included) is logged, never shown; 422 items show the
// rule's bounds only, located under "args".
func presentError(ctx context.Context, err error, schema *ast.Schema, msgs *i18n.Catalog, log *slog.Logger) *gqlerror.Error {
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
	} else if e.Kind.Fault() {
		log.ErrorContext(ctx, "graphql resolver failed", "request_id", vigia.RequestID(ctx),
			"path", graphql.GetPath(ctx).String(), "code", e.Code, "cause", causeText(e))
	}
	lang := vigia.Lang(ctx)
	out := &gqlerror.Error{Path: graphql.GetPath(ctx), Message: msgs.Message(lang, e.Key, e.Params),
		Extensions: map[string]any{"code": e.Code, "request_id": vigia.RequestID(ctx)}}
	if e.Kind == vigia.KindInvalid {
		items := make([]map[string]any, 0, len(e.Fields))
		for _, f := range e.Fields {
			c := f.Bounds()
			loc := locate(ctx, schema, f.Loc)
			items = append(items, map[string]any{"type": f.Type, "loc": loc, "msg": msgs.FieldMessage(lang, f.Type, f.Ctx), "ctx": c})
		}
		out.Extensions["detail"] = items
	}
	if e.Kind == vigia.KindRateLimited {
		out.Extensions["retry_after"] = e.RetryAfter
	}
	return out
}

// locate says where a field named by a service or a resolver came from: everything
// came as arguments; a name that is not an argument of the field is inside the
// field's input object (a mutation's body), when it has one.
func locate(ctx context.Context, schema *ast.Schema, loc []string) []string {
	out := []string{"args"}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Definition == nil || schema == nil {
		return append(out, loc...)
	}
	input := ""
	for _, a := range fc.Field.Definition.Arguments {
		if len(loc) > 0 && a.Name == loc[0] {
			return append(out, loc...)
		}
		if t := schema.Types[a.Type.Name()]; t != nil && t.Kind == ast.InputObject {
			input = a.Name
		}
	}
	if input != "" {
		out = append(out, input)
	}
	return append(out, loc...)
}

func causeText(e *vigia.Error) string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
