package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/sharenote/sharenote/libs/openapi"
)

// contract is the OpenAPI document prepared for response validation.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	// unrouted and wrongMethod stand in for the operations of requests that the document
	// has no operation for: an unknown path answers 404 (or a limit or server error), a
	// documented path with another method answers 405 with an Allow header.
	unrouted, wrongMethod *openapi3.Operation
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		return nil, fmt.Errorf("load openapi document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi document is invalid: %w", err)
	}
	// Without servers the router matches paths on any host, such as the test server's
	// random loopback port.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi router: %w", err)
	}
	// Binary, HTML and script bodies are validated as strings; kin-openapi decodes only JSON,
	// forms and plain text by itself. The registry is global, which suits tests.
	for _, mt := range []string{"image/png", "image/jpeg", "image/gif", "image/webp", "text/html", "text/markdown", "text/javascript"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.FileBodyDecoder)
	}
	responses := doc.Components.Responses
	operation := func(statuses map[int]string) *openapi3.Operation {
		op := &openapi3.Operation{Responses: openapi3.NewResponses()}
		for status, name := range statuses {
			op.Responses.Set(fmt.Sprint(status), responses[name])
		}
		return op
	}
	failures := map[int]string{
		http.StatusTooManyRequests:     "TooManyRequests",
		http.StatusInternalServerError: "InternalError",
		http.StatusServiceUnavailable:  "ServiceUnavailable",
	}
	unrouted := map[int]string{http.StatusNotFound: "NotFound"}
	wrongMethod := map[int]string{http.StatusMethodNotAllowed: "MethodNotAllowed"}
	for status, name := range failures {
		unrouted[status], wrongMethod[status] = name, name
	}
	for _, m := range []map[int]string{unrouted, wrongMethod} {
		for status, name := range m {
			if responses[name] == nil {
				return nil, fmt.Errorf("openapi document lacks the response component %s (for %d)", name, status)
			}
		}
	}
	return &contract{doc: doc, router: router, unrouted: operation(unrouted), wrongMethod: operation(wrongMethod)}, nil
})

// ValidateResponse fails the test unless the response to req (status, header and the
// fully read body) is one the OpenAPI document allows for that operation: a documented
// status, with its required headers and a body of its media type and schema. A request
// the document has no operation for must get the error body of the document: 404 (or 429
// and 5xx) for an unknown path, 405 with an Allow header for a documented path with
// another method. The request body is not read.
func ValidateResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
		return
	}
	route, params, err := c.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		route = &routers.Route{Spec: c.doc, Path: req.URL.Path, Method: req.Method, Operation: c.wrongMethod}
	case err != nil:
		route = &routers.Route{Spec: c.doc, Path: req.URL.Path, Method: req.Method, Operation: c.unrouted}
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: opts,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	err = openapi3filter.ValidateResponse(context.Background(), input)
	if err == nil && status == http.StatusNotModified && route.Operation.Responses.Status(status) == nil {
		// kin-openapi never validates a 304, so check here that the operation documents it.
		err = errors.New("status is not supported")
	}
	if err != nil {
		operation := req.Method + " " + route.Path
		if route.Operation == c.unrouted {
			operation = "no operation (unknown path)"
		} else if route.Operation == c.wrongMethod {
			operation = "no operation (method not allowed)"
		}
		t.Errorf("response does not match the OpenAPI document: %s %s (%s) → %d\nbody: %s\n%v",
			req.Method, req.URL.RequestURI(), operation, status, excerpt(body), err)
	}
}

// excerpt shortens a body for a failure message.
func excerpt(body []byte) string {
	const limit = 512
	if len(body) > limit {
		return fmt.Sprintf("%q… (%d bytes)", body[:limit], len(body))
	}
	return fmt.Sprintf("%q", body)
}
