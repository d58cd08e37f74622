// Package apidoc validates HTTP answers recorded by the end-to-end tests
// against the API's description, docs/openapi.yaml (OpenAPI 3.1, read
// with kin-openapi): the answer's status must be documented for its
// route and method, its content type must be one the route answers, and
// its body must match the schema (JSON Schema 2020-12).
package apidoc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// File is the document's path from the module root.
const File = "docs/openapi.yaml"

// Document is a loaded API description with its router.
type Document struct {
	Doc    *openapi3.T
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *Document
	loadErr  error
)

// Load returns the module's docs/openapi.yaml, found from the working
// directory upwards, loaded and validated once per test binary.
func Load() (*Document, error) {
	loadOnce.Do(func() { loaded, loadErr = loadFile() })
	return loaded, loadErr
}

func loadFile() (*Document, error) {
	path, err := findFile()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
	}
	// The servers name the standalone and WordPress addresses; the tests
	// run on loopback ports of their own, so match paths only.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	return &Document{Doc: doc, router: router}, nil
}

// findFile looks for File in the working directory and its parents up to
// the module root (the directory holding go.mod).
func findFile() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, File), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Validate checks one answer to method url against the document: the
// route must be documented, the status documented for it (or covered by
// its default answer), the content type one it answers, and the body
// valid for the schema.
func (d *Document) Validate(method, url string, status int, header http.Header, body []byte) error {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return fmt.Errorf("request %s %s: %w", method, url, err)
	}
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s is not in %s: %w", method, req.URL.Path, File, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, not as %s describes: %w", method, req.URL.Path, status, File, err)
	}
	return nil
}

// Check validates one answer (see Document.Validate) and fails t when it
// does not match the document, or when the document cannot be loaded.
func Check(t testing.TB, method, url string, status int, header http.Header, body []byte) {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(method, url, status, header, body); err != nil {
		t.Errorf("%v\nbody: %.2000s", err, body)
	}
}
