package authn

import (
	"sync"
	"time"
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
	info    TokenInfo
	hash    string
	expires time.Time // when the cached copy must be read again
}

// tokenCache holds token records read from Neo4j for a short TTL, so a busy client's every request does not
// read its token. It caches records, never verdicts: Verify still checks the secret, revocation and expiry on
// every call. gen counts invalidations, so a read that raced with a revocation is not cached afterwards.
type tokenCache struct {
	ttl   time.Duration
	clock func() time.Time
	mu    sync.Mutex
	m     map[string]tokenRecord
	gen   uint64
}

func newTokenCache(ttl time.Duration, clock func() time.Time) *tokenCache {
	return &tokenCache{ttl: ttl, clock: clock, m: map[string]tokenRecord{}}
}

// get returns the live cached record of id and the invalidation generation to pass to put after a miss.
func (c *tokenCache) get(id string) (tokenRecord, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[id]
	if ok && !c.clock().Before(r.expires) {
		delete(c.m, id)
		ok = false
	}
	return r, ok, c.gen
}

// put caches a record read under generation gen, unless an invalidation happened since.
func (c *tokenCache) put(id string, info TokenInfo, hash string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := c.clock()
	if _, ok := c.m[id]; !ok && len(c.m) >= maxTokenCacheEntries {
		c.evict(now)
	}
	c.m[id] = tokenRecord{info: info, hash: hash, expires: now.Add(c.ttl)}
}

// evict makes room: expired records first, else an arbitrary one.
func (c *tokenCache) evict(now time.Time) {
	for k, r := range c.m {
		if !now.Before(r.expires) {
			delete(c.m, k)
		}
	}
	for k := range c.m {
		if len(c.m) < maxTokenCacheEntries {
			return
		}
		delete(c.m, k)
	}
}

// drop forgets id at once and makes reads in flight uncacheable.
func (c *tokenCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	c.gen++
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
