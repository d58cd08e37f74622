package core

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error codes. Each maps to exactly one HTTP status and spec error code at
// the HTTP edge; nothing else in the program chooses a status.
const (
	EINVALID      = "validation_error"    // 422: a field failed validation
	EBADREQUEST   = "bad_request"         // 400: malformed request body
	ENOTFOUND     = "not_found"           // 404: the resource does not exist
	ENOROUTE      = "rest_no_route"       // 404: no route matches, as WordPress answers
	EUNAUTHORIZED = "rest_not_logged_in"  // 401: no or invalid credentials
	EFORBIDDEN    = "rest_forbidden"      // 403: insufficient capability
	ELICENSE      = "license_required"    // 403: a Pro feature without a license
	EINTERNAL     = "internal_error"      // 500: anything unexpected
	EUNAVAILABLE  = "service_unavailable" // 503: a dependency is down
	ECONFLICT     = "conflict"            // 409: the request conflicts with the state
)

// Error is a domain error with a code, a message safe to show to an API
// client, and optionally a map of field name to message (validation errors).
type Error struct {
	Code    string
	Message string
	Fields  map[string]string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+e.Fields[k])
	}
	return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, strings.Join(parts, "; "))
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation error naming each failed field. It returns
// nil when fields is empty, so callers can write `if err := Invalid(f); err != nil`.
func Invalid(fields map[string]string) error {
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: EINVALID, Message: "One or more fields are invalid.", Fields: fields}
}

// InvalidField returns a validation error for one field.
func InvalidField(field, msg string) error {
	return Invalid(map[string]string{field: msg})
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of the first *Error in err's
// chain, or a generic message for any other error (whose text may carry
// internal detail and is only logged).
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ErrorFields returns the per-field messages of a validation error, or nil.
func ErrorFields(err error) map[string]string {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}
