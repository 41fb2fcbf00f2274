// Package errs is the one error type of the HTTP edge and the one place errors become
// responses. Handlers abort with the domain's errors as they are (or with an *Error for a
// fault of the request itself, such as a body that does not parse); a single gin
// middleware turns each into an *Error (As), with the translation table the edge hands it
// (noteapi.Translate: this package knows nothing of the domain), and renders it as the
// API's JSON error body (docs/api.md "Errors"), {"error": code, "message": sentence},
// hiding every detail of a 5xx.
package errs

import (
	"errors"
	"fmt"
	"net/http"
)

// Machine-readable error codes, exactly the list of docs/api.md "Errors".
const (
	InvalidBody            = "invalid_body"
	InvalidField           = "invalid_field"
	InvalidProperties      = "invalid_properties"
	InvalidImage           = "invalid_image"
	InvalidVersion         = "invalid_version"
	InvalidCursor          = "invalid_cursor"
	InvalidLimit           = "invalid_limit"
	UnsupportedContentType = "unsupported_content_type"
	Unauthorized           = "unauthorized"
	NotFound               = "not_found"
	MethodNotAllowed       = "method_not_allowed"
	RequestTimeout         = "request_timeout"
	PreconditionFailed     = "precondition_failed"
	PayloadTooLarge        = "payload_too_large"
	NoteTooLarge           = "note_too_large"
	ImageTooLarge          = "image_too_large"
	RangeNotSatisfiable    = "range_not_satisfiable"
	StorageQuotaExceeded   = "storage_quota_exceeded"
	TooManyImages          = "too_many_images"
	RateLimited            = "rate_limited"
	InternalError          = "internal_error"
	ServiceUnavailable     = "service_unavailable"
)

// Error is an error with an HTTP status, a code from the list above and a message safe to
// show to the client. Cause, when set, is for logs only and never reaches the response.
type Error struct {
	Status  int
	Code    string
	Message string
	// Cuid names the publication the error is about, when the client needs it (the
	// holder of a taken path); "" for none.
	Cuid string
	// Field names the member of the request body an invalid_field error is about (for
	// the handler that maps a member's fault to a code of its own); "" for none.
	Field string
	Cause error
}

// New returns an *Error with the given status, code and client-facing message.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Newf is New with a formatted message.
func Newf(status int, code, format string, args ...any) *Error {
	return New(status, code, fmt.Sprintf(format, args...))
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Cause }

// Body is the JSON body of every API error (docs/api.md "Errors").
type Body struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Cuid    string `json:"cuid,omitempty"`
}

// Internal wraps an unexpected error as a 500 whose body says nothing about it.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: InternalError,
		Message: "The service hit an unexpected error.", Cause: cause}
}

// Unavailable wraps a dependency failure (database or Redis down) as a 503.
func Unavailable(cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: ServiceUnavailable,
		Message: "The service is temporarily unavailable; retry later.", Cause: cause}
}

// UnauthorizedError is the single 401 of the API: every credential failure answers with
// exactly this body so that a caller cannot tell which part was wrong.
func UnauthorizedError() *Error {
	return New(http.StatusUnauthorized, Unauthorized, "Missing, invalid or expired credentials.")
}

// NotFoundError is the 404 for anything missing, not owned, expired or unpublished.
func NotFoundError() *Error {
	return New(http.StatusNotFound, NotFound, "Not found.")
}

// Translator turns an error of the domain into the *Error a client sees, or returns nil
// for an error it does not know. The edge supplies it (noteapi.Translate), so that this
// package knows nothing of the domain.
type Translator func(error) *Error

// As returns the *Error a client sees for err, and is the only place where an error becomes
// one: Middleware calls it for the error a handler aborted with, so handlers pass the
// domain's errors on as they are. An *Error is kept; an error translate knows is
// translated; an error that reports Unavailable() (a database or Redis that cannot be
// reached) becomes a 503; anything else becomes an internal error, so that no driver
// message can leak to a client. translate may be nil.
func As(err error, translate Translator) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if translate != nil {
		if e := translate(err); e != nil {
			return e
		}
	}
	var u interface{ Unavailable() bool }
	if errors.As(err, &u) && u.Unavailable() {
		return Unavailable(err)
	}
	return Internal(err)
}
