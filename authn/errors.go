package authn

import "errors"

// Error classes. Only the middleware turns them into responses, and it never tells a client which check failed.
var (
	// ErrMissing means the request carries no bearer token.
	ErrMissing = errors.New("missing bearer token")
	// ErrInvalid means the token is malformed, unknown, tampered, revoked, expired or not for us; the wrapped
	// detail is for logs only.
	ErrInvalid = errors.New("invalid or expired token")
	// ErrUnavailable means a backend needed to decide (Neo4j, the JWKS endpoint) did not answer.
	ErrUnavailable = errors.New("authentication backend unavailable")
	// ErrTokenNotFound means no API token has the id (management operations).
	ErrTokenNotFound = errors.New("api token not found")
	// ErrBadRequest means a token-management request is malformed (its message names the field and the rule).
	ErrBadRequest = errors.New("api token request")
)
