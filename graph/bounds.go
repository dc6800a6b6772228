package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/vigia-data/vigia"
)

// The bounds of one GraphQL request (docs/graphql.md). Each is checked before the work
// it bounds starts: the body before it is decoded, the tokens by the lexer before the
// document is validated, the complexity before any resolver runs, the deadline around
// everything.
const (
	// MaxBody is the largest request body /graphql reads: 413 payload_too_large above.
	MaxBody = 64 << 10
	// MaxTokens is the most lexer tokens a document may have: 422 query_too_large above,
	// found by the lexer before the document is validated.
	MaxTokens = 4000
	// MaxSelections is the most field selections a document may have: 422
	// query_too_large above, counted before validation (whose cost grows with the square
	// of the selections).
	MaxSelections = 600
	// MaxComplexity bounds what a query may ask for (see fieldCost): 422
	// query_too_complex above.
	MaxComplexity = 1000000
	// Deadline bounds the whole request; resolvers see it as their context's deadline.
	Deadline = 15 * time.Second
)

// Stable codes of the GraphQL bounds; each answers 422 like a validation error.
const (
	CodeQueryTooLarge   = "query_too_large"
	CodeQueryTooComplex = "query_too_complex"
	codeValidation      = "graphql_validation_failed"
)

func init() {
	for _, c := range []string{CodeQueryTooLarge, CodeQueryTooComplex, vigia.CodeValidation, codeValidation} {
		errcode.RegisterErrorType(c, errcode.KindProtocol)
	}
}

// exchange is what one request's parts tell each other: the status the answer takes
// when no data was produced (set from the first error's kind) and the start time for
// the Server-Timing header.
type exchange struct {
	start   time.Time
	mu      sync.Mutex
	kind    *vigia.Kind
	hasData bool
}

type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

// noteKind records the kind of an error presented in the answer (the first one wins).
func noteKind(ctx context.Context, k vigia.Kind) {
	if x := exchangeFrom(ctx); x != nil {
		x.mu.Lock()
		if x.kind == nil {
			x.kind = &k
		}
		x.mu.Unlock()
	}
}

// timedWriter adds Server-Timing (the server's time for the request, in ms) to the
// answer, and answers the status of the first error's kind when no data was produced.
type timedWriter struct {
	http.ResponseWriter
	x     *exchange
	wrote bool
	// executed is set once the request is handed to gqlgen.
	executed bool
}

func (w *timedWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if status == http.StatusOK && w.executed {
		w.x.mu.Lock()
		if w.x.kind != nil && !w.x.hasData {
			status = vigia.HTTPStatus(*w.x.kind)
		}
		w.x.mu.Unlock()
	}
	ms := float64(time.Since(w.x.start).Microseconds()) / 1000
	w.Header().Set("Server-Timing", "app;dur="+strconv.FormatFloat(ms, 'f', 3, 64))
	w.ResponseWriter.WriteHeader(status)
}

func (w *timedWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// graphQLBody is the request body the POST transport reads.
type graphQLBody struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// bounded puts the request bounds in front of the gqlgen server: the deadline, the body
// limit, the text check of every string in the body (NUL, invalid UTF-8: 422
// value_error with its loc) and a body that is no GraphQL request (400, nothing
// echoed). Refusals use the GraphQL answer shape with the contract's codes.
func bounded(next http.Handler, present func(context.Context, error) *gqlerror.Error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{start: time.Now()}
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), exchangeKey{}, x), Deadline)
		defer cancel()
		r = r.WithContext(ctx)
		tw := &timedWriter{ResponseWriter: w, x: x}
		refuse := func(status int, err error) {
			gqlErr := present(ctx, err)
			tw.Header().Set("Content-Type", "application/json")
			tw.WriteHeader(status)
			_ = json.NewEncoder(tw).Encode(graphql.Response{Errors: gqlerror.List{gqlErr}})
		}
		raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				refuse(http.StatusRequestEntityTooLarge, &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge,
					Key: "error.payload_too_large"})
				return
			}
			refuse(http.StatusBadRequest, vigia.BadRequest(vigia.CodeBadRequest, "error.graphql_body_invalid"))
			return
		}
		if err := vigia.CheckJSONText(raw, "body"); err != nil {
			refuse(http.StatusUnprocessableEntity, err)
			return
		}
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		var body graphQLBody
		if mt != "application/json" || json.Unmarshal(raw, &body) != nil || body.Query == "" {
			refuse(http.StatusBadRequest, vigia.BadRequest(vigia.CodeBadRequest, "error.graphql_body_invalid"))
			return
		}
		tw.executed = true
		r.Body = io.NopCloser(bytes.NewReader(raw))
		next.ServeHTTP(tw, r)
	})
}

// bounds is the gqlgen extension that counts tokens and selections before validation,
// checks every string argument and the complexity after it, and tells the writer
// whether data came back.
type bounds struct {
	es graphql.ExecutableSchema
	// within remembers the documents (by their text) already found within the token and
	// selection bounds, so that a query asked again is not lexed once more.
	within *lru.LRU[bool]
	// costs remembers the complexity of operations (by document text and operation
	// name) whose variables cannot change it (variableFreeCost).
	costs *lru.LRU[int]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = (*bounds)(nil)

func (*bounds) ExtensionName() string { return "VigiaBounds" }

func (b *bounds) Validate(es graphql.ExecutableSchema) error {
	b.es = es
	b.within = lru.New[bool](1000)
	b.costs = lru.New[int](1000)
	return nil
}

// boundError is a refusal before execution; the presenter gives it its message.
func boundError(code string, params map[string]any) *gqlerror.Error {
	ext := map[string]any{"code": code}
	for k, v := range params {
		ext[k] = v
	}
	return &gqlerror.Error{Message: code, Extensions: ext}
}

func tooLarge() *gqlerror.Error {
	return boundError(CodeQueryTooLarge, map[string]any{"max_tokens": MaxTokens, "max_selections": MaxSelections})
}

// MutateOperationParameters lexes the document with the token limit and counts its
// selections, before gqlgen parses and validates it.
func (b *bounds) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if b.within != nil {
		if _, ok := b.within.Get(ctx, p.Query); ok {
			return nil
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, MaxTokens)
	if err != nil {
		if gqlErr, ok := err.(*gqlerror.Error); ok && isTokenLimit(gqlErr) {
			return tooLarge()
		}
		return nil // gqlgen reports the syntax error itself
	}
	n := 0
	for _, op := range doc.Operations {
		n += countSelections(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n += countSelections(f.SelectionSet)
	}
	if n > MaxSelections {
		return tooLarge()
	}
	if b.within != nil {
		b.within.Add(ctx, p.Query, true)
	}
	return nil
}

func isTokenLimit(e *gqlerror.Error) bool {
	return bytes.Contains([]byte(e.Message), []byte("token limit"))
}

func countSelections(set ast.SelectionSet) int {
	n := 0
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			n += 1 + countSelections(s.SelectionSet)
		case *ast.InlineFragment:
			n += countSelections(s.SelectionSet)
		case *ast.FragmentSpread:
			n++
		}
	}
	return n
}

// MutateOperationContext refuses a string argument (a literal or a variable's value)
// holding a NUL or invalid UTF-8 (422 value_error at [query, field path…, argument…]),
// then a query whose complexity (fieldCost) is over MaxComplexity.
func (b *bounds) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Operation
	if op == nil {
		return nil
	}
	if loc := badArgument(op.SelectionSet, opCtx.Variables, []string{"query"}, 0); loc != nil {
		err := vigia.Invalid(vigia.Field("value_error", nil, loc...))
		return &gqlerror.Error{Err: err, Message: "value_error", Extensions: map[string]any{"code": vigia.CodeValidation}}
	}
	if c := b.complexity(ctx, opCtx); c > MaxComplexity {
		return boundError(CodeQueryTooComplex, map[string]any{"complexity": c, "limit": MaxComplexity})
	}
	return nil
}

// complexity is the operation's complexity (fieldCost), computed once per document and
// operation name when its variables cannot change it (variableFreeCost).
func (b *bounds) complexity(ctx context.Context, opCtx *graphql.OperationContext) int {
	op := opCtx.Operation
	if b.costs == nil || !variableFreeCost(op) {
		return complexity.Calculate(ctx, b.es, op, opCtx.Variables)
	}
	key := opCtx.OperationName + "\x00" + opCtx.RawQuery
	if c, ok := b.costs.Get(ctx, key); ok {
		return c
	}
	c := complexity.Calculate(ctx, b.es, op, opCtx.Variables)
	b.costs.Add(ctx, key, c)
	return c
}

// variableFreeCost reports whether no variable of op can change its complexity:
// fieldCost reads only the limit and hops arguments (integers) and the lengths of list
// arguments (also inside input objects and custom scalars such as JSON), so variables
// that are a single ID, String, Boolean or enum value cannot reach it.
func variableFreeCost(op *ast.OperationDefinition) bool {
	for _, v := range op.VariableDefinitions {
		if v.Type == nil || v.Type.Elem != nil {
			return false
		}
		switch v.Type.NamedType {
		case "ID", "String", "Boolean":
			continue
		}
		if v.Definition == nil || v.Definition.Kind != ast.Enum {
			return false
		}
	}
	return true
}

// badArgument finds the first argument whose value holds bad text.
func badArgument(set ast.SelectionSet, vars map[string]any, path []string, depth int) []string {
	if depth > 64 {
		return nil
	}
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			p := append(append([]string{}, path...), name)
			for _, a := range s.Arguments {
				v, err := a.Value.Value(vars)
				if err != nil {
					continue
				}
				if loc := badValue(v, append(append([]string{}, p...), a.Name)); loc != nil {
					return loc
				}
			}
			if loc := badArgument(s.SelectionSet, vars, p, depth+1); loc != nil {
				return loc
			}
		case *ast.InlineFragment:
			if loc := badArgument(s.SelectionSet, vars, path, depth+1); loc != nil {
				return loc
			}
		case *ast.FragmentSpread:
			if s.Definition != nil {
				if loc := badArgument(s.Definition.SelectionSet, vars, path, depth+1); loc != nil {
					return loc
				}
			}
		}
	}
	return nil
}

func badValue(v any, loc []string) []string {
	switch v := v.(type) {
	case string:
		if vigia.BadText(v) {
			return loc
		}
	case []any:
		for i, e := range v {
			if l := badValue(e, append(append([]string{}, loc...), strconv.Itoa(i))); l != nil {
				return l
			}
		}
	case map[string]any:
		for k, e := range v {
			if vigia.BadText(k) {
				return append(append([]string{}, loc...), "?")
			}
			if l := badValue(e, append(append([]string{}, loc...), vigia.SafeName(k))); l != nil {
				return l
			}
		}
	}
	return nil
}

// InterceptResponse tells the writer whether the operation produced data: without
// data, the answer takes the status of its first error's kind (403 for a refused
// mutation, 404, 422 …), the convention validation errors follow; with data, 200.
func (b *bounds) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if x := exchangeFrom(ctx); x != nil && resp != nil {
		if len(resp.Data) > 0 && !bytes.Equal(bytes.TrimSpace(resp.Data), []byte("null")) {
			x.mu.Lock()
			x.hasData = true
			x.mu.Unlock()
		}
	}
	return resp
}

// costedSchema is the executable schema with Vigia's complexity: a field costs 1 plus
// its selections' cost times how many objects it may return (fieldCost).
type costedSchema struct{ graphql.ExecutableSchema }

// Complexity is fieldCost for every field.
func (s costedSchema) Complexity(_ context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	return fieldCost(s.Schema(), typeName, field, child, args), true
}

// assumedListSize is the objects a list field without a limit is counted for.
const assumedListSize = 10

// MaxWalkDatasets is the most datasets one traversal answers (REST's cap): a walk's
// list of neighbours is counted for at most that many.
const MaxWalkDatasets = 40

// fieldCost is (1 + child × n) × the length of each list argument, where n is the
// field's limit argument (its default when absent), 10 × hops for a traversal (a list
// of walked datasets: 10 × hops, at most MaxWalkDatasets), 10 for another list, 1
// otherwise; a page's items are counted by the page's limit. A list argument (also one
// inside an input object) asks for the field's work once per element, so the field
// costs that many times (an empty list counts 1).
func fieldCost(schema *ast.Schema, typeName, field string, child int, args map[string]any) int {
	return satMul(ownCost(schema, typeName, field, child, args), listFactor(args))
}

// listFactor is the product of the lengths of the list arguments, also those inside an
// input object argument (each at least 1). A list's elements count once each, whatever
// lists they hold themselves (ragGate's 50 items with their columns count 50).
func listFactor(args map[string]any) int {
	f := 1
	for _, v := range args {
		switch x := v.(type) {
		case []any:
			f = satMul(f, max(len(x), 1))
		case map[string]any:
			f = satMul(f, listFactor(x))
		}
	}
	return f
}

// ownCost is a field's cost before its list arguments: 1 + child × n (see fieldCost).
func ownCost(schema *ast.Schema, typeName, field string, child int, args map[string]any) int {
	n, list := 1, false
	if l, ok := intArg(args["limit"]); ok {
		n = max(l, 1)
	} else if def := schema.Types[typeName]; def != nil {
		if f := def.Fields.ForName(field); f != nil && f.Type.Elem != nil && !strings.HasSuffix(typeName, "Page") {
			n, list = assumedListSize, true
		}
	}
	if h, ok := intArg(args["hops"]); ok {
		if list {
			// A list of the datasets a walk meets (upstream, downstream): 10 per hop,
			// never more than the 40 datasets a traversal answers.
			n = min(assumedListSize*max(h, 1), MaxWalkDatasets)
		} else {
			n = satMul(n, assumedListSize*max(h, 1))
		}
	}
	return satAdd(1, satMul(n, child))
}

func intArg(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	case json.Number:
		n, err := v.Int64()
		return int(n), err == nil
	}
	return 0, false
}

const costCap = 1 << 40

func satMul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > costCap/b {
		return costCap
	}
	return a * b
}

func satAdd(a, b int) int { return min(a+b, costCap) }
