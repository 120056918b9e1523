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
// Eviction is least-recently-used, beyond the cache's bound, of clean entries only: a dirty entry is saved first
// (Due names them), and a missing entry is reloaded lazily from the node. The bound is a number of entries (New)
// or, for values that report their resident size (Sizer), a number of bytes (NewSized): the sum of the values'
// sizes plus EntryOverhead per entry. The cache is safe for concurrent use; values
// are treated as immutable once Put (callers work on copies and Put the result after their commit).
package foldstate

import (
	"container/list"
	"maps"
	"math"
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
	// DefaultMaxBytes is the resident bytes a sized cache (NewSized) keeps before evicting the least recently
	// used clean entry: 1 GiB, a quarter of the projector's 4 GiB soft memory limit (cmd/headwater/main.go), so the
	// live heap (this, the recent-events cache's 256 MiB, in-flight batches) stays under half of the limit and the
	// collector keeps its GOGC pace instead of running back to back (docs/adr/0046-memory-bounds-by-bytes.md).
	// On the design-size world (30,000 datasets, ~6,000 touched a minute) it holds every active dataset's state.
	DefaultMaxBytes int64 = 1 << 30
	// EntryOverhead is the cache's own memory per entry, added to the value's Size: the key, the Entry, its map
	// slot, its list element and its two per-partition maps (measured 780 B for a dirty entry with a 64-byte key
	// by TestEntryOverheadCoversTheCachesOwnMemory; the two small maps are most of it).
	EntryOverhead = 800
)

// Sizer is a value that reports its resident size: an estimate of the heap bytes it keeps reachable (strings,
// slices, maps and what they point to), which a sized cache sums against its bound. A value is immutable once
// Put, so its size is taken once, at Put.
type Sizer interface {
	Size() int64
}

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
	size   int64 // resident bytes counted for the entry while it is in a sized cache (value's Size + overhead)
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

// Cache is an LRU of entries by key, bounded by a number of entries or by their resident bytes.
type Cache[V any] struct {
	mu       sync.Mutex
	capacity int
	maxBytes int64         // sized caches: the bound on bytes (0: bounded by capacity only)
	sizeOf   func(V) int64 // sized caches: the value's Size
	bytes    int64         // sized caches: the resident bytes of the entries held
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

// NewSized builds a cache bounded by resident bytes (DefaultMaxBytes when <= 0): the values' Size plus
// EntryOverhead per entry. It holds any number of entries within the bound. stats may be nil.
func NewSized[V Sizer](maxBytes int64, stats Stats) *Cache[V] {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Cache[V]{capacity: math.MaxInt, maxBytes: maxBytes, sizeOf: func(v V) int64 { return v.Size() },
		m: map[string]*Entry[V]{}, lru: list.New(), stats: stats}
}

// SetMaxBytes changes a sized cache's bound (DefaultMaxBytes when <= 0); entries beyond it are evicted by the
// next Put, or fall due (Due). It does nothing to a cache bounded by capacity.
func (c *Cache[V]) SetMaxBytes(maxBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sizeOf == nil {
		return
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	c.maxBytes = maxBytes
}

// Bytes is the resident bytes a sized cache counts for its entries (0 for a cache bounded by capacity).
func (c *Cache[V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// MaxBytes is a sized cache's bound (0 for a cache bounded by capacity).
func (c *Cache[V]) MaxBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxBytes
}

// overLocked reports whether the cache holds more than its bound.
func (c *Cache[V]) overLocked() bool {
	return len(c.m) > c.capacity || (c.maxBytes > 0 && c.bytes > c.maxBytes)
}

// dropLocked removes an entry held by the cache.
func (c *Cache[V]) dropLocked(e *Entry[V]) {
	c.lru.Remove(e.elem)
	delete(c.m, e.Key)
	c.bytes -= e.size
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
		c.dropLocked(old)
	}
	if c.sizeOf != nil {
		e.size = c.sizeOf(e.Value) + EntryOverhead
		c.bytes += e.size
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
	for el := c.lru.Back(); el != nil && el != c.lru.Front() && c.overLocked() && scanned < maxEvictScan; scanned++ {
		prev := el.Prev()
		if e := c.m[el.Value.(string)]; !e.Dirty() {
			c.dropLocked(e)
		}
		el = prev
	}
}

// Remove drops the key's entry. A dirty entry's unsaved changes go with it: callers save it first.
func (c *Cache[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		c.dropLocked(e)
	}
}

// Len is the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Due returns the dirty entries to save now: those dirty for at least every, and, beyond the bound (capacity or
// bytes), the least recently used dirty ones (which can then be evicted).
func (c *Cache[V]) Due(now time.Time, every time.Duration) []*Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Entry[V]
	over := len(c.m) - c.capacity
	overBytes := int64(0)
	if c.maxBytes > 0 {
		overBytes = c.bytes - c.maxBytes
	}
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := c.m[el.Value.(string)]
		if e.Dirty() && (over > 0 || overBytes > 0 || now.Sub(e.dirtySince) >= every) {
			out = append(out, e)
		}
		over--
		overBytes -= e.size
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
	for _, e := range c.m {
		if !touches(e, set) {
			continue
		}
		if e.Dirty() {
			kept = append(kept, e)
			continue
		}
		c.dropLocked(e)
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
	for _, e := range c.m {
		if e.Dirty() {
			kept = append(kept, e)
			continue
		}
		c.dropLocked(e)
	}
	return kept
}
