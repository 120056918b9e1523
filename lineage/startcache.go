package lineage

import (
	"slices"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/ttlcache"
)

// Bounds of the start-node cache.
const (
	// StartCacheTTL bounds how long a dataset name resolved for a lineage request about "now" is kept. Staleness
	// is excluded by name generations, not by this time (docs/adr/0013-cached-path-without-neo4j.md): a cached
	// resolution only ever leads to an answer recorded under the name's generation.
	StartCacheTTL = 10 * time.Minute
	// maxStartCacheEntries bounds the resolved start names held in memory.
	maxStartCacheEntries = 4096
)

// startEntry is a dataset name resolved in Neo4j: the dataset row and the binding the name matched.
type startEntry struct {
	row     graph.DatasetRow
	binding graph.NameBinding
}

// startCache holds found dataset start nodes of lineage requests about "now", keyed by canonical identifier.
// It holds resolutions only, never answers: the caller checks the row's visibility on every request, and
// misses (NOT_FOUND) and field lists are never cached.
type startCache struct{ c *ttlcache.Cache[startEntry] }

func newStartCache(ttl time.Duration, clock func() time.Time) *startCache {
	return &startCache{c: ttlcache.New[startEntry](ttl, maxStartCacheEntries, clock)}
}

func (c *startCache) get(ident string) (graph.DatasetRow, graph.NameBinding, bool) {
	e, ok, _ := c.c.Get(ident)
	if !ok {
		return graph.DatasetRow{}, graph.NameBinding{}, false
	}
	row := e.row
	row.Tags = slices.Clone(row.Tags) // the entry owns its slice
	return row, e.binding, true
}

func (c *startCache) put(ident string, row graph.DatasetRow, b graph.NameBinding) {
	_, _, gen := c.c.Get(ident)
	row.Tags = slices.Clone(row.Tags) // the entry owns its slice
	c.c.Put(ident, startEntry{row: row, binding: b}, gen)
}

func (c *startCache) len() int { return c.c.Len() }
