package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// ErrInvalidInput marks a scalar value sent by the client that cannot be read; the error presenter answers
// BAD_REQUEST with the argument's path.
var ErrInvalidInput = errors.New("invalid input")

// maxQuotedInput bounds how much of a bad value an error message repeats.
const maxQuotedInput = 64

// MarshalTime writes a Time as RFC 3339 (gqlgen's format).
func MarshalTime(t time.Time) graphql.Marshaler { return graphql.MarshalTime(t) }

// UnmarshalTime reads a Time: an RFC 3339 string (gqlgen's rules); anything else is the caller's error.
func UnmarshalTime(v any) (time.Time, error) {
	t, err := graphql.UnmarshalTime(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: a Time must be an RFC 3339 string such as 2026-01-31T12:00:00Z, got %s",
			ErrInvalidInput, quote(v))
	}
	return t, nil
}

func quote(v any) string {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprintf("a %T", v)
	}
	if len(s) > maxQuotedInput {
		s = s[:maxQuotedInput] + "..."
	}
	return fmt.Sprintf("%q", s)
}
