// Package authn authenticates requests: Headwater API tokens (`hw_<id>_<secret>`, stored as a SHA-256 hash in
// Neo4j, owned by a principal, optionally expiring, revocable; kept by authn/apitoken, which the authenticator
// reaches through its TokenVerifier interface) and OIDC/JWT bearer tokens validated against the
// configured issuer's JWKS (signature, issuer, audience, expiry with clock skew). Middleware puts the
// authenticated authz.Principal (and roles a JWT claims) into the request context.
//
// Invariants: a secret is never stored, logged or compared in variable time; a client learns only "missing
// bearer token" or "invalid or expired token", never which check failed; a backend outage (Neo4j, the JWKS
// endpoint) is 503, never a silent acceptance; with DevNoAuth a request without a token acts as the anonymous
// principal, and that is logged at start.
package authn
