package lineage

import (
	"errors"
	"fmt"
)

// Error classes. The GraphQL error presenter maps them to extensions.code; Error.Message is safe for clients.
var (
	ErrNotFound    = errors.New("not found")
	ErrBadRequest  = errors.New("bad request")
	ErrForbidden   = errors.New("forbidden")
	ErrUnavailable = errors.New("unavailable")
)

// Error is a domain error with a public message. Cause (internal detail) is never shown to clients.
type Error struct {
	Class   error
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

// Unwrap exposes the class and the cause to errors.Is/As.
func (e *Error) Unwrap() []error { return []error{e.Class, e.Cause} }

func notFound(format string, args ...any) error {
	return &Error{Class: ErrNotFound, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &Error{Class: ErrBadRequest, Message: fmt.Sprintf(format, args...)}
}

func unavailable(cause error) error {
	return &Error{Class: ErrUnavailable, Message: "the lineage store is unavailable, retry later", Cause: cause}
}
