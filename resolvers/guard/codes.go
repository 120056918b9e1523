// Package guard is the GraphQL endpoint's request side, everything before and around gqlgen's execution that
// keeps one request from exhausting the server (DESIGN.md "No request can exhaust the server"; ADR 0020): the
// bounded transport (GET and POST only; per-principal concurrency, body and JSON-list limits), APQ and the parsed
// query cache over byte-bounded LRUs, the document limits before validation, the depth limit, the per-principal
// cost budget, their Limits and metrics, and the public error codes (extensions.code) the transport and the
// error presenter (package resolvers) answer with. Install composes them on a gqlgen server in their one order.
// It knows no resolver and no service (ADR 0033).
package guard

// Public error codes (extensions.code).
const (
	CodeNotFound    = "NOT_FOUND"
	CodeForbidden   = "FORBIDDEN"
	CodeBadRequest  = "BAD_REQUEST"
	CodeComplexity  = "COMPLEXITY_LIMIT_EXCEEDED"
	CodeUnavailable = "UNAVAILABLE"
	CodeInternal    = "INTERNAL"
	// CodeRateLimited answers a request refused because its principal has too many in flight or has spent its
	// query budget (HTTP 429 with Retry-After).
	CodeRateLimited = "RATE_LIMITED"
)

// InternalMessage is the one message of an INTERNAL error: nothing of the cause reaches the client.
const InternalMessage = "internal error"
