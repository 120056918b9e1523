// Package apitoken keeps Headwater API tokens (`hw_<id>_<secret>`) in Neo4j: the Store creates, revokes, reads
// and verifies them (only SHA-256 of the secret is stored, compared in constant time; a short TTL cache of
// records, never of verdicts), and the Manager is the token service behind the management API (who may create
// and revoke whose tokens, every decision audited). The authenticator in authn reaches the store only through
// its authn.TokenVerifier interface; the errors a verification returns are authn's classes (ErrInvalid,
// ErrUnavailable), so the middleware's answers are unchanged.
package apitoken
