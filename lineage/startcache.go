package lineage

import (
	"slices"
	"sync"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// Bounds of the start-node cache.
const (
	// StartCacheTTL is how long a dataset name resolved for a lineage request about "now" is reused without
	// reading Neo4j: a rename or a name bound to another dataset shows in lineage start resolution within it.
	StartCacheTTL = 10 * time.Minute
	// maxStartCacheEntries bounds the resolved start names held in memory.
	maxStartCacheEntries = 4096
)

// startEntry is a dataset name resolved in Neo4j: the dataset row and the binding the name matched.
type startEntry struct {
	row     graph.DatasetRow
	binding graph.NameBinding
	expires time.Time
}

// startCache holds found dataset start nodes of lineage requests about "now", keyed by canonical identifier.
// It holds resolutions only, never answers: the caller checks the row's visibility on every request, and
// misses (NOT_FOUND) and field lists are never cached.
type startCache struct {
	ttl   time.Duration
	clock func() time.Time
	mu    sync.Mutex
	m     map[string]startEntry
}

func newStartCache(ttl time.Duration, clock func() time.Time) *startCache {
	return &startCache{ttl: ttl, clock: clock, m: map[string]startEntry{}}
}

func (c *startCache) get(ident string) (graph.DatasetRow, graph.NameBinding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[ident]
	if !ok {
		return graph.DatasetRow{}, graph.NameBinding{}, false
	}
	if !c.clock().Before(e.expires) {
		delete(c.m, ident)
		return graph.DatasetRow{}, graph.NameBinding{}, false
	}
	row := e.row
	row.Tags = slices.Clone(row.Tags) // the entry owns its slice
	return row, e.binding, true
}

func (c *startCache) put(ident string, row graph.DatasetRow, b graph.NameBinding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	if _, ok := c.m[ident]; !ok && len(c.m) >= maxStartCacheEntries {
		c.evict(now)
	}
	row.Tags = slices.Clone(row.Tags) // the entry owns its slice
	c.m[ident] = startEntry{row: row, binding: b, expires: now.Add(c.ttl)}
}

// evict makes room: expired entries first, else arbitrary ones.
func (c *startCache) evict(now time.Time) {
	for k, e := range c.m {
		if !now.Before(e.expires) {
			delete(c.m, k)
		}
	}
	for k := range c.m {
		if len(c.m) < maxStartCacheEntries {
			return
		}
		delete(c.m, k)
	}
}

func (c *startCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
