package apptest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// Document checks real answers against the OpenAPI document the service serves.
type Document struct {
	env *Env
	val validator.Validator
}

// Document loads the served OpenAPI document and builds its validator.
func (e *Env) Document(tb testing.TB) *Document {
	tb.Helper()
	doc, err := libopenapi.NewDocument(e.Do(tb, http.MethodGet, "/api/v1/openapi.json", "", nil).Body)
	if err != nil {
		tb.Fatal(err)
	}
	val, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		tb.Fatalf("validator: %v", errs)
	}
	return &Document{env: e, val: val}
}

// Do is Env.Do that also fails tb, naming every schema error, unless the answer
// (status, headers and body) is one the document describes for that request.
func (d *Document) Do(tb testing.TB, method, path, credential string, body any, headers ...string) *Response {
	tb.Helper()
	req, sent, r := d.env.send(tb, method, path, credential, body, headers)
	req.Body = io.NopCloser(bytes.NewReader(sent))
	res := &http.Response{StatusCode: r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)), Request: req}
	if ok, verrs := d.val.ValidateHttpResponse(req, res); !ok {
		for _, e := range verrs {
			tb.Errorf("%s %s (%d): %s: %s", method, path, r.Status, e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				tb.Errorf("  %s at %s", se.Reason, se.Location)
			}
		}
	}
	return r
}
