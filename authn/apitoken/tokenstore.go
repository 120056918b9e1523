package apitoken

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// Errors of token management (the management API maps them; verification returns authn's classes).
var (
	// ErrNotFound means no API token has the id (management operations).
	ErrNotFound = errors.New("api token not found")
	// ErrBadRequest means a token-management request is malformed (its message names the field and the rule).
	ErrBadRequest = errors.New("api token request")
)

// Label is the Neo4j label of API tokens. Its constraint belongs in graph/migrate.go:
//
//	CREATE CONSTRAINT api_token_id IF NOT EXISTS FOR (n:ApiToken) REQUIRE n.id IS UNIQUE
//	CREATE INDEX api_token_owner IF NOT EXISTS FOR (n:ApiToken) ON (n.owner)
const Label = "ApiToken"

// NewToken describes a token to create.
type NewToken struct {
	Owner       string
	Kind        string
	Description string
	ExpiresAt   time.Time // zero: never
	CreatedBy   string
	// Namespaces, when set, restrict the token to PRODUCE in them (canonical): an exchanged token (ADR 0051).
	Namespaces []string
}

// Store keeps API tokens in Neo4j (label ApiToken keyed by id). It creates no schema.
type Store struct {
	store *graph.Store
	clock func() time.Time
	cache *tokenCache // nil: every Verify reads Neo4j
}

var _ authn.TokenVerifier = (*Store)(nil)

// NewStore returns a token store over s that reads the token on every Verify (see WithCache).
func NewStore(s *graph.Store, clock func() time.Time) *Store {
	return &Store{store: s, clock: clock}
}

// WithCache makes Verify reuse a token's record read from Neo4j for ttl (authn.Config.TokenCacheTTL; 0 or less: no
// cache). The secret, revocation and expiry are still checked on every call; Revoke and Create through this
// store drop the record at once, so only revocations made elsewhere (another replica, the CLI) take up to ttl.
// Call it before the store is shared; it returns s for chaining.
func (s *Store) WithCache(ttl time.Duration) *Store {
	s.cache = nil
	if ttl > 0 {
		s.cache = newTokenCache(min(ttl, authn.MaxTokenCacheTTL), s.clock)
	}
	return s
}

const (
	cypherTokenCreate = `CREATE (t:ApiToken {id: $id, hash: $hash, owner: $owner, kind: $kind, description: $description,
  createdAt: $now, createdBy: $createdBy, expiresAt: $expiresAt, namespaces: $namespaces})`
	cypherTokenGet = `MATCH (t:ApiToken {id: $id}) RETURN t.id AS id, t.hash AS hash, t.owner AS owner, t.kind AS kind,
  coalesce(t.description, '') AS description, t.createdAt AS createdAt, coalesce(t.createdBy, '') AS createdBy,
  t.expiresAt AS expiresAt, t.revokedAt AS revokedAt, t.namespaces AS namespaces`
	cypherTokenRevoke = `MATCH (t:ApiToken {id: $id}) SET t.revokedAt = coalesce(t.revokedAt, $now),
  t.revokedBy = coalesce(t.revokedBy, $by) RETURN t.id AS id`
)

// Create stores a new token and returns it in full: the only time the secret exists outside the caller.
func (s *Store) Create(ctx context.Context, req NewToken) (string, authn.TokenInfo, error) {
	if err := req.validate(s.clock()); err != nil {
		return "", authn.TokenInfo{}, err
	}
	id, secret, full, err := newTokenSecret()
	if err != nil {
		return "", authn.TokenInfo{}, err
	}
	s.forget(id)
	now := s.clock().UTC().Truncate(time.Millisecond)
	var exp any
	if !req.ExpiresAt.IsZero() {
		exp = graph.Millis(req.ExpiresAt)
	}
	_, err = neo4j.ExecuteQuery(ctx, s.store.Driver, cypherTokenCreate, map[string]any{"id": id,
		"hash": hashSecret(id, secret), "owner": req.Owner, "kind": req.Kind, "description": req.Description,
		"now": graph.Millis(now), "createdBy": req.CreatedBy, "expiresAt": exp, "namespaces": nilIfNone(req.Namespaces)},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.store.Database))
	s.forget(id) // again: a read between the first forget and the write may have remembered the id as unknown
	if err != nil {
		return "", authn.TokenInfo{}, fmt.Errorf("%w: create api token: %w", authn.ErrUnavailable, err)
	}
	info := authn.TokenInfo{ID: id, Owner: req.Owner, Kind: req.Kind, Description: req.Description, CreatedAt: now,
		CreatedBy: req.CreatedBy, ExpiresAt: req.ExpiresAt.UTC().Truncate(time.Millisecond), Namespaces: req.Namespaces}
	if req.ExpiresAt.IsZero() {
		info.ExpiresAt = time.Time{}
	}
	return full, info, nil
}

func (r NewToken) validate(now time.Time) error {
	switch {
	case r.Owner == "" || r.Owner == authz.AnonymousSubject:
		return fmt.Errorf("%w: owner must be a named principal", ErrBadRequest)
	case r.Kind != authn.KindUser && r.Kind != authn.KindService && r.Kind != authn.KindProducer:
		return fmt.Errorf("%w: kind %q must be user, service or producer", ErrBadRequest, r.Kind)
	case !r.ExpiresAt.IsZero() && !r.ExpiresAt.After(now):
		return fmt.Errorf("%w: expiresAt %s is not in the future", ErrBadRequest, r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Revoke revokes a token now; revoking twice keeps the first revocation.
func (s *Store) Revoke(ctx context.Context, id, by string) error {
	defer s.forget(id) // also on failure: the write may have landed
	res, err := neo4j.ExecuteQuery(ctx, s.store.Driver, cypherTokenRevoke,
		map[string]any{"id": id, "now": graph.Millis(s.clock()), "by": by},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.store.Database))
	if err != nil {
		return fmt.Errorf("%w: revoke api token: %w", authn.ErrUnavailable, err)
	}
	if len(res.Records) == 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// Get returns a token's record without its secret.
func (s *Store) Get(ctx context.Context, id string) (authn.TokenInfo, error) {
	info, _, err := s.get(ctx, id)
	return info, err
}

// Verify checks a presented token: known id, matching secret (constant time), not revoked, not expired. With a
// cache (WithCache) the record may be up to its TTL old; the checks still run on every call.
func (s *Store) Verify(ctx context.Context, raw string) (authn.TokenInfo, error) {
	id, secret, err := parseToken(raw)
	if err != nil {
		return authn.TokenInfo{}, err
	}
	info, hash, err := s.record(ctx, id)
	if err != nil {
		if isNotFound(err) {
			secretMatches(id, secret, hashSecret("", "")) // same work as a known id
			return authn.TokenInfo{}, fmt.Errorf("%w: unknown token id", authn.ErrInvalid)
		}
		return authn.TokenInfo{}, err
	}
	now := s.clock()
	switch {
	case !secretMatches(id, secret, hash):
		return authn.TokenInfo{}, fmt.Errorf("%w: secret mismatch for token %s", authn.ErrInvalid, id)
	case !info.RevokedAt.IsZero():
		return authn.TokenInfo{}, fmt.Errorf("%w: token %s revoked", authn.ErrInvalid, id)
	case !info.ExpiresAt.IsZero() && !now.Before(info.ExpiresAt):
		return authn.TokenInfo{}, fmt.Errorf("%w: token %s expired", authn.ErrInvalid, id)
	}
	return info, nil
}

// record is the token's record from the cache when live there, else from Neo4j (then cached). An id Neo4j did
// not know is remembered as unknown for the TTL (tokencache.go), so repeating it reads Neo4j once per TTL.
func (s *Store) record(ctx context.Context, id string) (authn.TokenInfo, string, error) {
	if s.cache == nil {
		return s.get(ctx, id)
	}
	r, ok, gen := s.cache.get(id)
	if ok {
		return r.info, r.hash, nil
	}
	known, ugen := s.cache.known(id)
	if !known {
		return authn.TokenInfo{}, "", fmt.Errorf("%w: %s (recently looked up)", ErrNotFound, id)
	}
	info, hash, err := s.get(ctx, id)
	switch {
	case err == nil:
		s.cache.put(id, info, hash, gen)
	case isNotFound(err):
		s.cache.putUnknown(id, ugen)
	}
	return info, hash, err
}

// forget drops id's cached record.
func (s *Store) forget(id string) {
	if s.cache != nil {
		s.cache.drop(id)
	}
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, ErrNotFound) }

func (s *Store) get(ctx context.Context, id string) (authn.TokenInfo, string, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.store.Driver, cypherTokenGet, map[string]any{"id": id},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.store.Database),
		neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return authn.TokenInfo{}, "", fmt.Errorf("%w: read api token: %w", authn.ErrUnavailable, err)
	}
	if len(res.Records) == 0 {
		return authn.TokenInfo{}, "", fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	r := res.Records[0]
	info := authn.TokenInfo{ID: str(r, "id"), Owner: str(r, "owner"), Kind: str(r, "kind"),
		Description: str(r, "description"), CreatedBy: str(r, "createdBy"), CreatedAt: millis(r, "createdAt"),
		ExpiresAt: millis(r, "expiresAt"), RevokedAt: millis(r, "revokedAt"), Namespaces: strs(r, "namespaces")}
	return info, str(r, "hash"), nil
}

func strs(r *neo4j.Record, key string) []string {
	v, _ := r.Get(key)
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func nilIfNone(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

func str(r *neo4j.Record, key string) string {
	v, _ := r.Get(key)
	s, _ := v.(string)
	return s
}

func millis(r *neo4j.Record, key string) time.Time {
	v, _ := r.Get(key)
	n, ok := v.(int64)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}
