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
)
