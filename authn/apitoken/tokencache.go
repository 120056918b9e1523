package apitoken

import (
	"time"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/internal/ttlcache"
)

// Bounds of the verified-token cache.
const (
	// maxTokenCacheEntries bounds the token records held in memory (one per recently used token id).
	maxTokenCacheEntries = 10_000
	// maxUnknownTokenEntries bounds the unknown token ids remembered (negative entries), each for the same TTL as
	// a record: a client repeating a token that does not exist costs one Neo4j read per id and TTL, not one per
	// request. A flood of distinct random ids evicts older entries and still costs one read each.
	maxUnknownTokenEntries = 10_000
)

// tokenRecord is a token as read from Neo4j: the record and the stored hash of its secret.
type tokenRecord struct {
	info authn.TokenInfo
	hash string
}

// tokenCache holds token records read from Neo4j for a short TTL, so a busy client's every request does not
// read its token. It caches records, never verdicts: Verify still checks the secret, revocation and expiry on
// every call. A read that raced with a revocation is not cached afterwards (ttlcache's invalidation counter).
// Ids Neo4j did not know are remembered as unknown for the TTL too: ids are 64 random bits, so a negative entry
// for an id that is created later exists only if someone guessed it; Create through this store drops it anyway,
// and a token created on another replica verifies here at most a TTL later.
type tokenCache struct {
	c       *ttlcache.Cache[tokenRecord]
	unknown *ttlcache.Cache[struct{}]
}

func newTokenCache(ttl time.Duration, clock func() time.Time) *tokenCache {
	return &tokenCache{c: ttlcache.New[tokenRecord](ttl, maxTokenCacheEntries, clock),
		unknown: ttlcache.New[struct{}](ttl, maxUnknownTokenEntries, clock)}
}

// known says whether id may exist: false while a recent read found no such token. gen is the invalidation
// generation to pass to putUnknown after a read that finds nothing.
func (c *tokenCache) known(id string) (bool, uint64) {
	_, unknown, gen := c.unknown.Get(id)
	return !unknown, gen
}

// putUnknown remembers that id did not exist at a read under generation gen, unless it was invalidated since.
func (c *tokenCache) putUnknown(id string, gen uint64) { c.unknown.Put(id, struct{}{}, gen) }

// get returns the live cached record of id and the invalidation generation to pass to put after a miss.
func (c *tokenCache) get(id string) (tokenRecord, bool, uint64) { return c.c.Get(id) }

// put caches a record read under generation gen, unless an invalidation happened since.
func (c *tokenCache) put(id string, info authn.TokenInfo, hash string, gen uint64) {
	c.c.Put(id, tokenRecord{info: info, hash: hash}, gen)
}

// drop forgets id (its record and that it was unknown) at once and makes reads in flight uncacheable.
func (c *tokenCache) drop(id string) {
	c.c.Drop(id)
	c.unknown.Drop(id)
}

func (c *tokenCache) len() int { return c.c.Len() }
