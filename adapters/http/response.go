package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/adapters/httpstatus"
	"github.com/mailsvc/mailsvc/core"
)

// statusOf maps a domain error code to its HTTP status: the only place
// where that choice is made.
var statusOf = map[string]int{
	core.EBADREQUEST:   http.StatusBadRequest,
	core.EUNAUTHORIZED: http.StatusUnauthorized,
	core.EFORBIDDEN:    http.StatusForbidden,
	core.ELICENSE:      http.StatusForbidden,
	core.ENOTFOUND:     http.StatusNotFound,
	core.ENOROUTE:      http.StatusNotFound,
	core.ECONFLICT:     http.StatusConflict,
	core.EINVALID:      http.StatusUnprocessableEntity,
	core.EUNAVAILABLE:  http.StatusServiceUnavailable,
	core.EINTERNAL:     http.StatusInternalServerError,
}

// errorBody is the spec's error shape.
type errorBody struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Data    errorData `json:"data"`
}

type errorData struct {
	Status int               `json:"status"`
	Errors map[string]string `json:"errors,omitempty"`
}

// writeError writes err in the spec's error shape. Errors that are not
// domain errors are logged with their detail and answered with a generic
// 500, so internal text never reaches a client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := core.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusInternalServerError {
		s.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, errorBody{
		Code:    code,
		Message: core.ErrorMessage(err),
		Data:    errorData{Status: status, Errors: core.ErrorFields(err)},
	})
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeList writes one page of a list in WordPress's convention: a JSON
// array, with X-WP-Total and X-WP-TotalPages headers.
func writeList[T any](w http.ResponseWriter, items []T, total int, p Page) {
	if items == nil {
		items = []T{}
	}
	setPageHeaders(w, total, p)
	writeJSON(w, http.StatusOK, items)
}

// setPageHeaders sets X-WP-Total and X-WP-TotalPages for a list of total
// items read by pages p.
func setPageHeaders(w http.ResponseWriter, total int, p Page) {
	pages := 0
	if total > 0 {
		pages = int(math.Ceil(float64(total) / float64(p.PerPage)))
	}
	w.Header().Set("X-WP-Total", strconv.Itoa(total))
	w.Header().Set("X-WP-TotalPages", strconv.Itoa(pages))
}

// decodeJSON reads a JSON object body into dst. A malformed body, a body
// that is not an object, one over the size limit, or a field of the wrong
// JSON type is a 400 bad_request (naming the field when it can). An empty
// body decodes as {}.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return core.Errorf(core.EBADREQUEST, "The request body is larger than %d bytes.", s.MaxBodyBytes)
	} else if err != nil {
		return core.Errorf(core.EBADREQUEST, "The request body could not be read.")
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	var probe any
	if err := json.Unmarshal(body, &probe); err != nil {
		return core.Errorf(core.EBADREQUEST, "The request body is not valid JSON.")
	}
	if _, ok := probe.(map[string]any); !ok {
		return core.Errorf(core.EBADREQUEST, "The request body must be a JSON object.")
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &core.Error{
				Code:    core.EBADREQUEST,
				Message: fmt.Sprintf("Field %s has the wrong type.", typeErr.Field),
				Fields:  map[string]string{typeErr.Field: "Must be of type " + jsonTypeName(typeErr.Type.Kind().String()) + "."},
			}
		}
		return core.Errorf(core.EBADREQUEST, "The request body does not have the expected shape.")
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	}
	return kind
}

// recoverPanics turns a handler panic into a logged 500 internal_error.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.Logger.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				s.writeError(w, r, core.Errorf(core.EINTERNAL, "Internal error."))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one structured line per request at DEBUG (the
// service's log at INFO is about mail, not every call of the screens):
// never headers or bodies, which may carry credentials. Below DEBUG it
// costs one level check.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.Logger.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := httpstatus.NewWriter(w)
		next.ServeHTTP(rec, r)
		s.Logger.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.Answered(), "duration", time.Since(start).String())
	})
}
