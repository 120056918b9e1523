// Package foldstate is the projector's in-memory fold state: per node key, the state the projection folds events
// into (a dataset's observation log, later a job's checkpoint), kept between transactions so a batch need not read
// it back from Neo4j and rewrite it whole.
//
// The cache knows nothing of what it holds or of Neo4j. It keeps, per entry:
//   - Seq, the node's version stamp (projSeq) the value was read at or last written with. Every write of cached
//     state is guarded by it in the same statement, so a second instance, or this one after a rebalance, never
//     applies a stale view: a write that finds another stamp is refused, and the entry is reloaded.
//   - whether the value has changes not yet saved on the node (dirty, write-behind), since when, and from which
//     source position on (per source partition, the lowest offset folded since the last save). Watermarks is the
//     per-partition replay point: every event before it is in a saved snapshot, so a crash loses nothing that a
//     replay from there does not restore.
//   - Shared: the entry must be written through (its snapshot saved with every change), because another writer
//     was seen (a refused write, or a snapshot older than the node's stamp).
//
// Eviction is least-recently-used, beyond Capacity, of clean entries only: a dirty entry is saved first (Overflow
// names them), and a missing entry is reloaded lazily from the node. The cache is safe for concurrent use; values
// are treated as immutable once Put (callers work on copies and Put the result after their commit).
package foldstate

import (
	"container/list"
	"maps"
	"sync"
	"time"
)

// Defaults for the projector's fold state.
const (
	// DefaultCapacity is how many entries a cache keeps before evicting the least recently used clean one. A
	// dataset's state is ~3 KB in memory with a few observations and ~140 KB at the sealing bound (512 hot
	// observations; TestFoldStateResidentSizePerDataset, docs/adr/0036-in-memory-dataset-fold-state.md), so 4,096
	// entries cap it near 0.6 GB even if every one is a busy dataset; the rest reload from their snapshot when
	// touched.
	DefaultCapacity = 4096
	// SnapshotEvery is the longest an entry's changes stay unsaved: a dirty entry is saved by the first
	// transaction after this, whether or not it touches the entry. It bounds what a crash replays from Kafka.
	SnapshotEvery = time.Minute
)

// Pos is a source position: a partition ("topic/partition") and an offset in it.
type Pos struct {
	Part   string
	Offset int64
}

// Entry is one key's cached state.
type Entry[V any] struct {
	Key    string
	Value  V
	Seq    int64 // the node's projSeq the value was read at or last written with
	Shared bool  // write every change through: another writer of the node was seen
	// dirtySince is when the value first differed from the node's snapshot (zero: clean); dirtyFrom is, per
	// partition, the lowest offset folded into it since.
	dirtySince time.Time
	dirtyFrom  map[string]int64
	parts      map[string]bool // partitions whose events the value holds (for DropPartitions)
	elem       *list.Element
}

// Dirty reports whether the value has changes not saved on the node.
func (e *Entry[V]) Dirty() bool { return !e.dirtySince.IsZero() }

// DirtySince is when the value first differed from the node's snapshot (zero: clean).
func (e *Entry[V]) DirtySince() time.Time { return e.dirtySince }

// Successor is the entry after a write: the new value at stamp seq, dirty (not saved) or clean (saved with the
// write), remembering the dirt e carried. positions are the source positions of the events the write folded in.
func (e *Entry[V]) Successor(v V, seq int64, saved bool, now time.Time, positions []Pos) *Entry[V] {
	n := &Entry[V]{Key: e.Key, Value: v, Seq: seq, Shared: e.Shared, parts: map[string]bool{}}
	for p := range e.parts {
		n.parts[p] = true
	}
	for _, p := range positions {
		n.parts[p.Part] = true
	}
	if saved {
		return n
	}
	n.dirtySince, n.dirtyFrom = e.dirtySince, map[string]int64{}
	if n.dirtySince.IsZero() {
		n.dirtySince = now
	}
	maps.Copy(n.dirtyFrom, e.dirtyFrom)
	for _, p := range positions {
		if o, ok := n.dirtyFrom[p.Part]; !ok || p.Offset < o {
			n.dirtyFrom[p.Part] = p.Offset
		}
	}
	return n
}

// NewEntry is a clean entry for a value read from the node at stamp seq.
func NewEntry[V any](key string, v V, seq int64, shared bool) *Entry[V] {
	return &Entry[V]{Key: key, Value: v, Seq: seq, Shared: shared, parts: map[string]bool{}}
}

// Stats counts lookups for the cache's hits/requests metric pair.
type Stats interface {
	Hit()
	Miss()
}

// Cache is an LRU of entries by key.
type Cache[V any] struct {
	mu       sync.Mutex
	capacity int
	m        map[string]*Entry[V]
	lru      *list.List // front: most recently used; values are keys
	stats    Stats
}

// New builds a cache of the given capacity (DefaultCapacity when <= 0); stats may be nil.
func New[V any](capacity int, stats Stats) *Cache[V] {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Cache[V]{capacity: capacity, m: map[string]*Entry[V]{}, lru: list.New(), stats: stats}
}

// Get returns the key's entry, or nil, and marks it recently used.
func (c *Cache[V]) Get(key string) *Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if c.stats != nil {
		if e != nil {
			c.stats.Hit()
		} else {
			c.stats.Miss()
		}
	}
	if e != nil {
		c.lru.MoveToFront(e.elem)
	}
	return e
}

// Peek returns the key's entry, or nil, without counting a lookup or changing its recency.
func (c *Cache[V]) Peek(key string) *Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// Put stores the entry (replacing the key's), marks it recently used, and evicts clean entries beyond capacity
// (never the one just stored).
func (c *Cache[V]) Put(e *Entry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[e.Key]; old != nil {
		c.lru.Remove(old.elem)
	}
	e.elem = c.lru.PushFront(e.Key)
	c.m[e.Key] = e
	c.evictLocked()
}

// maxEvictScan bounds how many entries one Put examines from the least recently used end for a clean one to
// evict. When they are all dirty the cache stays over capacity until Due saves them (beyond capacity, the least
// recently used dirty entries fall due) and a later Put evicts them: so a Put costs O(maxEvictScan), not a walk of
// every entry (measured on a warm world: a full walk per Put, with thousands of dirty entries, took a fifth of the
// projector's CPU).
const maxEvictScan = 64

func (c *Cache[V]) evictLocked() {
	scanned := 0
	for el := c.lru.Back(); el != nil && el != c.lru.Front() && len(c.m) > c.capacity && scanned < maxEvictScan; scanned++ {
		prev := el.Prev()
		if e := c.m[el.Value.(string)]; !e.Dirty() {
			c.lru.Remove(el)
			delete(c.m, e.Key)
		}
		el = prev
	}
}

// Remove drops the key's entry. A dirty entry's unsaved changes go with it: callers save it first.
func (c *Cache[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		c.lru.Remove(e.elem)
		delete(c.m, key)
	}
}

// Len is the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Due returns the dirty entries to save now: those dirty for at least every, and, beyond capacity, the least
// recently used dirty ones (which can then be evicted).
func (c *Cache[V]) Due(now time.Time, every time.Duration) []*Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Entry[V]
	over := len(c.m) - c.capacity
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := c.m[el.Value.(string)]
		if !e.Dirty() {
			over--
			continue
		}
		if over > 0 || now.Sub(e.dirtySince) >= every {
			out = append(out, e)
		}
		over--
	}
	return out
}

// DirtyEntries returns every dirty entry (to save at shutdown or before a rebalance).
func (c *Cache[V]) DirtyEntries() []*Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Entry[V]
	for _, e := range c.m {
		if e.Dirty() {
			out = append(out, e)
		}
	}
	return out
}

// Watermarks is, per partition any entry was dirtied from, the lowest offset folded into an unsaved entry: a
// replay of the partition from there restores every unsaved change. A partition with no dirty entry is absent.
func (c *Cache[V]) Watermarks() map[string]int64 { return c.WatermarksWith(nil) }

// WatermarksWith is Watermarks as it will be once the given entries replace those of their keys.
func (c *Cache[V]) WatermarksWith(replace map[string]*Entry[V]) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	add := func(e *Entry[V]) {
		for p, o := range e.dirtyFrom {
			if w, ok := out[p]; !ok || o < w {
				out[p] = o
			}
		}
	}
	for k, e := range c.m {
		if _, ok := replace[k]; !ok {
			add(e)
		}
	}
	for _, e := range replace {
		add(e)
	}
	return out
}

// Marks is, per partition, the lowest unsaved offset of the given entries (what Watermarks counts of them).
func Marks[V any](entries ...*Entry[V]) map[string]int64 {
	out := map[string]int64{}
	for _, e := range entries {
		for p, o := range e.dirtyFrom {
			if w, ok := out[p]; !ok || o < w {
				out[p] = o
			}
		}
	}
	return out
}

// DropPartitions removes the clean entries holding events of any of the partitions (their owner may now be
// another instance), and returns the dirty ones it kept: callers save them first, then call it again.
func (c *Cache[V]) DropPartitions(parts []string) []*Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := map[string]bool{}
	for _, p := range parts {
		set[p] = true
	}
	var kept []*Entry[V]
	for k, e := range c.m {
		if !touches(e, set) {
			continue
		}
		if e.Dirty() {
			kept = append(kept, e)
			continue
		}
		c.lru.Remove(e.elem)
		delete(c.m, k)
	}
	return kept
}

func touches[V any](e *Entry[V], parts map[string]bool) bool {
	for p := range e.parts {
		if parts[p] {
			return true
		}
	}
	return false
}

// Clear removes every clean entry and returns the dirty ones it kept.
func (c *Cache[V]) Clear() []*Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kept []*Entry[V]
	for k, e := range c.m {
		if e.Dirty() {
			kept = append(kept, e)
			continue
		}
		c.lru.Remove(e.elem)
		delete(c.m, k)
	}
	return kept
}
