package apptest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// The contract check: every /api/v1 response a test provokes is validated against the
// OpenAPI document the server publishes (status, headers, body). A status, a header or
// a body the document does not declare fails the test that provoked it.

// contract is one parsed document's validator, shared by the tests of a package.
type contract struct {
	mu  sync.Mutex // the validator is not documented as safe for concurrent use
	val validator.Validator
}

var (
	contractsMu sync.Mutex
	contracts   = map[[32]byte]*contract{}
)

func contractFor(doc []byte) (*contract, error) {
	key := sha256.Sum256(doc)
	contractsMu.Lock()
	defer contractsMu.Unlock()
	if c, ok := contracts[key]; ok {
		return c, nil
	}
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, err
	}
	val, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		return nil, fmt.Errorf("validator: %v", errs)
	}
	c := &contract{val: val}
	contracts[key] = c
	return c, nil
}

// Mismatch is a response that does not match the document.
type Mismatch struct {
	Method, Route string
	Status        int
	Problems      []string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s %s answered %d, not as documented: %s", m.Method, m.Route, m.Status, strings.Join(m.Problems, "; "))
}

// contractCheck wraps the server's handler and records every response that breaks the
// document.
type contractCheck struct {
	next     http.Handler
	routes   chi.Routes
	contract *contract

	mu         sync.Mutex
	mismatches []Mismatch
	checked    int
}

func (c *contractCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := ""
	if strings.HasPrefix(r.URL.Path, "/api/v1/") {
		route = c.routes.Find(chi.NewRouteContext(), r.Method, r.URL.Path)
	}
	if route == "" {
		// Not a declared operation (the explorer, /graphql, /metrics, or a path or method
		// that does not exist): nothing in the document to compare with.
		c.next.ServeHTTP(w, r)
		return
	}
	rec := &recorder{ResponseWriter: w}
	req := r.Clone(r.Context())
	c.next.ServeHTTP(rec, r)
	if rec.status == 0 && r.Context().Err() != nil {
		// The client went away before an answer: nobody receives one, nothing to check.
		return
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	res := &http.Response{StatusCode: rec.status, Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		Request: req}
	if res.Header == nil {
		res.Header = w.Header().Clone()
	}
	req.Body = http.NoBody
	c.contract.mu.Lock()
	ok, errs := c.contract.val.ValidateHttpResponse(req, res)
	c.contract.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked++
	if ok {
		return
	}
	m := Mismatch{Method: r.Method, Route: route, Status: rec.status}
	for _, e := range errs {
		p := e.Message + ": " + e.Reason
		for _, se := range e.SchemaValidationErrors {
			p += fmt.Sprintf(" [%s at %s]", se.Reason, se.Location)
		}
		m.Problems = append(m.Problems, p)
	}
	c.mismatches = append(c.mismatches, m)
}

// report fails tb with every mismatch recorded; it runs after the server closed.
func (c *contractCheck) report(tb testing.TB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.mismatches {
		tb.Errorf("contract: %s", m)
	}
}

// Checked is how many responses were validated against the document so far.
func (e *Env) Checked() int {
	e.check.mu.Lock()
	defer e.check.mu.Unlock()
	return e.check.checked
}

// recorder passes a response through and keeps a copy of its status, headers and body.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Flush keeps streamed answers streaming.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
