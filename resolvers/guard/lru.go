package guard

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// lru is a concurrency-safe least-recently-used cache bounded in bytes, for persisted queries and parsed
// documents. Each entry's size is estimated by cost; an entry that costs more than maxEntry is never kept.
type lru[T any] struct {
	mu       sync.Mutex
	maxBytes int64
	maxEntry int64
	bytes    int64
	cost     func(key string, value T) int64
	onGet    func(hit bool)
	order    *list.List // front = most recent; values are *lruItem[T]
	items    map[string]*list.Element
}

type lruItem[T any] struct {
	key   string
	value T
	cost  int64
}

var _ graphql.Cache[string] = (*lru[string])(nil)

func newLRU[T any](maxBytes, maxEntry int64, cost func(string, T) int64, onGet func(hit bool)) *lru[T] {
	if onGet == nil {
		onGet = func(bool) {}
	}
	return &lru[T]{maxBytes: maxBytes, maxEntry: min(maxEntry, maxBytes), cost: cost, onGet: onGet, order: list.New(),
		items: map[string]*list.Element{}}
}

// newQueryCache is the parsed-query cache: keyed by the query text, sized by an estimate of the document's heap,
// never keeping a document longer than maxCachedDocumentBytes.
func newQueryCache(maxBytes int64, onGet func(hit bool)) *lru[*ast.QueryDocument] {
	return newLRU(maxBytes, maxCachedDocumentBytes*docBytesPerQueryByte+cacheEntryOverhead,
		func(query string, _ *ast.QueryDocument) int64 {
			return int64(len(query))*docBytesPerQueryByte + cacheEntryOverhead
		}, onGet)
}

// newAPQCache is the persisted-query cache: hash to query text, never keeping a query longer than
// maxCachedDocumentBytes (such a client sends its query in full every time).
func newAPQCache(maxBytes int64, onGet func(hit bool)) *lru[string] {
	return newLRU(maxBytes, maxCachedDocumentBytes+cacheEntryOverhead, func(hash, query string) int64 {
		return int64(len(hash)+len(query)) + cacheEntryOverhead
	}, onGet)
}

// Get implements graphql.Cache.
func (c *lru[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	c.onGet(ok)
	if ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruItem[T]).value, true
	}
	var zero T
	return zero, false
}

// contains reports whether key is cached, without counting a lookup or refreshing the entry.
func (c *lru[T]) contains(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[key]
	return ok
}

// Add implements graphql.Cache.
func (c *lru[T]) Add(_ context.Context, key string, value T) {
	cost := c.cost(key, value)
	if cost > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.remove(e)
	}
	c.items[key] = c.order.PushFront(&lruItem[T]{key: key, value: value, cost: cost})
	c.bytes += cost
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *lru[T]) remove(e *list.Element) {
	it := e.Value.(*lruItem[T])
	c.order.Remove(e)
	delete(c.items, it.key)
	c.bytes -= it.cost
}

// size reports the entries and estimated bytes held (tests).
func (c *lru[T]) size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
