package api

import (
	"context"
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

// NotFound is an ErrNotFound with a public message.
func NotFound(format string, args ...any) error {
	return &Error{Class: ErrNotFound, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is an ErrBadRequest with a public message.
func BadRequest(format string, args ...any) error {
	return &Error{Class: ErrBadRequest, Message: fmt.Sprintf(format, args...)}
}

// Unavailable is the public ErrUnavailable of a store failure; the cause stays internal.
func Unavailable(cause error) error {
	return &Error{Class: ErrUnavailable, Message: "the lineage store is unavailable, retry later", Cause: cause}
}

// StoreErr maps a store failure to the public UNAVAILABLE error unless it already is a domain error or the
// request was cancelled.
func StoreErr(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return Unavailable(err)
}
