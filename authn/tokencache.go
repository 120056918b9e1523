package authn

import (
	"time"

	"github.com/headwater-data/headwater/internal/ttlcache"
)

// Bounds of the verified-token cache.
const (
	// maxTokenCacheTTL bounds how long another replica may keep accepting a token revoked elsewhere.
	maxTokenCacheTTL = time.Minute
	// maxTokenCacheEntries bounds the token records held in memory (one per recently used token id).
	maxTokenCacheEntries = 10_000
)

// tokenRecord is a token as read from Neo4j: the record and the stored hash of its secret.
type tokenRecord struct {
	info TokenInfo
	hash string
}

// tokenCache holds token records read from Neo4j for a short TTL, so a busy client's every request does not
// read its token. It caches records, never verdicts: Verify still checks the secret, revocation and expiry on
// every call. A read that raced with a revocation is not cached afterwards (ttlcache's invalidation counter).
type tokenCache struct{ c *ttlcache.Cache[tokenRecord] }

func newTokenCache(ttl time.Duration, clock func() time.Time) *tokenCache {
	return &tokenCache{c: ttlcache.New[tokenRecord](ttl, maxTokenCacheEntries, clock)}
}

// get returns the live cached record of id and the invalidation generation to pass to put after a miss.
func (c *tokenCache) get(id string) (tokenRecord, bool, uint64) { return c.c.Get(id) }

// put caches a record read under generation gen, unless an invalidation happened since.
func (c *tokenCache) put(id string, info TokenInfo, hash string, gen uint64) {
	c.c.Put(id, tokenRecord{info: info, hash: hash}, gen)
}

// drop forgets id at once and makes reads in flight uncacheable.
func (c *tokenCache) drop(id string) { c.c.Drop(id) }

func (c *tokenCache) len() int { return c.c.Len() }
