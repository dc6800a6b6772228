package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/graph/generated"
	"github.com/vigia-data/vigia/i18n"
)

// NewHandler returns the POST /graphql handler. It runs behind the same middleware as
// /api/v1 (authentication, rate limits, language), so the principal is in ctx. The
// request bounds (bounds.go, docs/graphql.md) come first.
func NewHandler(r *Resolver, msgs *i18n.Catalog, log *slog.Logger) http.Handler {
	es := costedSchema{generated.NewExecutableSchema(generated.Config{Resolvers: r})}
	names := schemaNames(es.Schema())
	srv := handler.New(es)
	srv.AddTransport(transport.POST{})
	srv.SetParserTokenLimit(MaxTokens)
	// A document parsed and validated once is kept by its text: the same query asked
	// again (clients send a handful) skips both (issue 20: GraphQL ≥ 0.9× REST).
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(&bounds{})
	srv.Use(extension.Introspection{})
	present := func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, err, es.Schema(), msgs, log, names)
	}
	srv.SetErrorPresenter(present)
	// A panic becomes an internal error whose cause carries the panic value: the
	// presenter logs it with the request id and answers the fixed message.
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		return vigia.Internal(fmt.Errorf("panic: %v", p))
	})
	return bounded(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		srv.ServeHTTP(w, req.WithContext(r.withLoaders(req.Context())))
	}), present)
}

// presentError maps a Vigia error to a GraphQL error whose extensions.code is the
// same stable code REST answers with, as REST does: the cause of every fault (the kinds
// REST answers with a 5xx, panics included) is logged, never shown; 422 items show the
// rule's bounds only, located under "args". Parse and validation messages never echo
// the caller's input.
func presentError(ctx context.Context, err error, schema *ast.Schema, msgs *i18n.Catalog, log *slog.Logger, names map[string]bool) *gqlerror.Error {
	lang := vigia.Lang(ctx)
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		// Parse or validation errors of the query document itself, or a bound it broke.
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		code, _ := gqlErr.Extensions["code"].(string)
		switch code {
		case CodeQueryTooLarge, CodeQueryTooComplex:
			gqlErr.Message = msgs.Message(lang, "error."+code, gqlErr.Extensions)
		case "":
			gqlErr.Extensions["code"] = codeValidation
		}
		gqlErr.Message = withoutEcho(gqlErr.Message, names)
		gqlErr.Extensions["request_id"] = vigia.RequestID(ctx)
		noteKind(ctx, vigia.KindInvalid)
		return gqlErr
	}
	e := vigia.AsError(err)
	noteKind(ctx, e.Kind)
	if vigia.ClientClosed(ctx, err) {
		log.InfoContext(ctx, "client_closed", "request_id", vigia.RequestID(ctx))
	} else if e.Kind.Fault() {
		log.ErrorContext(ctx, "graphql resolver failed", "request_id", vigia.RequestID(ctx),
			"path", graphql.GetPath(ctx).String(), "code", e.Code, "cause", causeText(e))
	}
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
// a resolver saw came as arguments; a name that is not an argument of the field is inside the
// field's input object (a mutation's body), when it has one.
func locate(ctx context.Context, schema *ast.Schema, loc []string) []string {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		// Refused at the edge, before any field ran (bounds.go): the loc says where
		// in the request already ("body", "query").
		return loc
	}
	out := []string{"args"}
	if fc.Field.Definition == nil || schema == nil {
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

// quoted matches a double-quoted part of a parser or validator message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// withoutEcho keeps the quoted names of a parse or validation message that are the
// schema's own (a type, a field, an argument, an enum value) and replaces any other
// quoted text (a string literal, a value, a name the caller made up) with "…", so that
// no message carries input back.
func withoutEcho(msg string, names map[string]bool) string {
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		if names[strings.Trim(q, `"`)] {
			return q
		}
		return `"…"`
	})
}

// schemaNames lists the names a message may show: the schema's types, fields,
// arguments and enum values.
func schemaNames(s *ast.Schema) map[string]bool {
	names := map[string]bool{}
	for name, t := range s.Types {
		names[name] = true
		for _, f := range t.Fields {
			names[f.Name] = true
			for _, a := range f.Arguments {
				names[a.Name] = true
			}
		}
		for _, e := range t.EnumValues {
			names[e.Name] = true
		}
	}
	return names
}

func causeText(e *vigia.Error) string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
