// Package ttlcache is a small bounded in-process cache with a time-to-live per entry and an invalidation counter,
// used where a record read from Neo4j may be reused for a short time (API tokens, lineage start names).
package ttlcache

import (
	"sync"
	"time"
)

type entry[V any] struct {
	v       V
	expires time.Time
}

// Cache holds at most max entries, each for ttl after it was put. It is safe for concurrent use.
type Cache[V any] struct {
	ttl   time.Duration
	max   int
	clock func() time.Time
	mu    sync.Mutex
	m     map[string]entry[V]
	gen   uint64
}

// New returns an empty cache; clock is injected (tests move it).
func New[V any](ttl time.Duration, max int, clock func() time.Time) *Cache[V] {
	return &Cache[V]{ttl: ttl, max: max, clock: clock, m: map[string]entry[V]{}}
}

// Get returns the live value of k and the invalidation generation to pass to Put after a miss.
func (c *Cache[V]) Get(k string) (V, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && !c.clock().Before(e.expires) {
		delete(c.m, k)
		ok = false
	}
	return e.v, ok, c.gen
}

// Put keeps v under k for the TTL, unless an invalidation (Drop) happened since gen was read: a read that raced
// with an invalidation is not cached after it.
func (c *Cache[V]) Put(k string, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := c.clock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		c.evict(now)
	}
	c.m[k] = entry[V]{v: v, expires: now.Add(c.ttl)}
}

// evict makes room: expired entries first, else arbitrary ones.
func (c *Cache[V]) evict(now time.Time) {
	for k, e := range c.m {
		if !now.Before(e.expires) {
			delete(c.m, k)
		}
	}
	for k := range c.m {
		if len(c.m) < c.max {
			return
		}
		delete(c.m, k)
	}
}

// Drop forgets k at once and makes reads in flight uncacheable.
func (c *Cache[V]) Drop(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
	c.gen++
}

// Len is the number of entries held (live or not yet evicted).
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
