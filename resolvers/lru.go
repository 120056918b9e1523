package resolvers

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// lru is a small, concurrency-safe least-recently-used cache for persisted queries and parsed documents.
type lru[T any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *lruItem[T]
	items map[string]*list.Element
}

type lruItem[T any] struct {
	key   string
	value T
}

var _ graphql.Cache[string] = (*lru[string])(nil)

func newLRU[T any](size int) *lru[T] {
	return &lru[T]{size: size, order: list.New(), items: make(map[string]*list.Element, size)}
}

// Get implements graphql.Cache.
func (c *lru[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruItem[T]).value, true
	}
	var zero T
	return zero, false
}

// Add implements graphql.Cache.
func (c *lru[T]) Add(_ context.Context, key string, value T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*lruItem[T]).value = value
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruItem[T]{key: key, value: value})
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*lruItem[T]).key)
	}
}
