package foldstate

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

type counts struct{ hits, misses int }

func (c *counts) Hit()  { c.hits++ }
func (c *counts) Miss() { c.misses++ }

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func clean(k string, v int) *Entry[int] { return NewEntry(k, v, 1, false) }

func dirty(k string, v int, at time.Time, pos ...Pos) *Entry[int] {
	return clean(k, v).Successor(v, 2, false, at, pos)
}

func TestEvictsLeastRecentlyUsedCleanEntries(t *testing.T) {
	st := &counts{}
	c := New[int](2, st)
	c.Put(clean("a", 1))
	c.Put(clean("b", 2))
	if c.Get("a") == nil { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Put(clean("c", 3))
	if c.Peek("b") != nil || c.Peek("a") == nil || c.Peek("c") == nil {
		t.Fatalf("want b evicted (least recently used), have a=%v b=%v c=%v", c.Peek("a"), c.Peek("b"), c.Peek("c"))
	}
	if c.Get("b") != nil || st.hits != 1 || st.misses != 1 {
		t.Fatalf("lookups counted %+v, want 1 hit and 1 miss", *st)
	}
}

func TestDirtyEntriesAreNeverEvictedButFallDue(t *testing.T) {
	c := New[int](1, nil)
	c.Put(dirty("a", 1, t0, Pos{"t/0", 5}))
	c.Put(clean("b", 2))
	c.Put(clean("c", 3))
	if c.Peek("a") == nil {
		t.Fatal("a dirty entry was evicted: its unsaved changes would be lost")
	}
	if got := c.Due(t0.Add(time.Second), time.Minute); len(got) != 1 || got[0].Key != "a" {
		t.Fatalf("beyond capacity the dirty LRU entry is due at once, got %v", keys(got))
	}
	c2 := New[int](10, nil)
	c2.Put(dirty("a", 1, t0))
	if got := c2.Due(t0.Add(30*time.Second), time.Minute); len(got) != 0 {
		t.Fatalf("within capacity nothing is due before the interval, got %v", keys(got))
	}
	if got := c2.Due(t0.Add(time.Minute), time.Minute); len(got) != 1 {
		t.Fatalf("after the interval the dirty entry is due, got %v", keys(got))
	}
}

func TestSuccessorKeepsTheLowestUnsavedOffsetUntilSaved(t *testing.T) {
	e := dirty("a", 1, t0, Pos{"t/0", 7})
	e = e.Successor(2, 3, false, t0.Add(time.Second), []Pos{{"t/0", 9}, {"t/1", 4}})
	if !e.DirtySince().Equal(t0) || e.dirtyFrom["t/0"] != 7 || e.dirtyFrom["t/1"] != 4 || e.Seq != 3 {
		t.Fatalf("dirty since %v from %v seq %d", e.DirtySince(), e.dirtyFrom, e.Seq)
	}
	saved := e.Successor(3, 4, true, t0.Add(2*time.Second), nil)
	if saved.Dirty() || len(saved.dirtyFrom) != 0 || !saved.parts["t/1"] {
		t.Fatalf("a saved successor is clean and remembers its partitions: %+v", saved)
	}
}

func TestWatermarksAreTheLowestUnsavedOffsetPerPartition(t *testing.T) {
	c := New[int](10, nil)
	c.Put(dirty("a", 1, t0, Pos{"t/0", 7}, Pos{"t/1", 3}))
	c.Put(dirty("b", 1, t0, Pos{"t/0", 5}))
	c.Put(clean("c", 1))
	w := c.Watermarks()
	if len(w) != 2 || w["t/0"] != 5 || w["t/1"] != 3 {
		t.Fatalf("watermarks %v", w)
	}
	// b saved by a transaction: its offsets no longer hold the partition back.
	w = c.WatermarksWith(map[string]*Entry[int]{"b": c.Peek("b").Successor(1, 3, true, t0, nil)})
	if len(w) != 2 || w["t/0"] != 7 {
		t.Fatalf("watermarks once b is saved %v", w)
	}
}

func TestDropPartitionsKeepsDirtyEntriesForSaving(t *testing.T) {
	c := New[int](10, nil)
	c.Put(clean("a", 1).Successor(1, 2, true, t0, []Pos{{"t/0", 1}}))
	c.Put(dirty("b", 1, t0, Pos{"t/0", 2}))
	c.Put(clean("c", 1).Successor(1, 2, true, t0, []Pos{{"t/1", 1}}))
	kept := c.DropPartitions([]string{"t/0"})
	if len(kept) != 1 || kept[0].Key != "b" || c.Peek("a") != nil || c.Peek("c") == nil {
		t.Fatalf("kept %v; a=%v c=%v", keys(kept), c.Peek("a"), c.Peek("c"))
	}
	if kept := c.Clear(); len(kept) != 1 || c.Len() != 1 {
		t.Fatalf("clear keeps only the dirty entry, kept %v, len %d", keys(kept), c.Len())
	}
}

func keys(es []*Entry[int]) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// sized is a value reporting its own resident size.
type sized int64

func (s sized) Size() int64 { return int64(s) }

func sizedEntry(k string, n int64) *Entry[sized] { return NewEntry(k, sized(n), 1, false) }

func TestSizedCacheEvictsLeastRecentlyUsedBeyondItsBytes(t *testing.T) {
	c := NewSized[sized](3*(1000+EntryOverhead), nil)
	c.Put(sizedEntry("a", 1000))
	c.Put(sizedEntry("b", 1000))
	c.Put(sizedEntry("c", 1000))
	if c.Len() != 3 || c.Bytes() != 3*(1000+EntryOverhead) {
		t.Fatalf("three entries within the bound: len %d bytes %d", c.Len(), c.Bytes())
	}
	c.Get("a")
	c.Put(sizedEntry("d", 1500)) // over by 1,500 bytes: b then c (the least recently used) go
	if c.Peek("b") != nil || c.Peek("c") != nil || c.Peek("a") == nil || c.Peek("d") == nil {
		t.Fatalf("want b and c evicted, have a=%v b=%v c=%v d=%v", c.Peek("a"), c.Peek("b"), c.Peek("c"), c.Peek("d"))
	}
	if want := int64(2500 + 2*EntryOverhead); c.Bytes() != want {
		t.Fatalf("bytes %d after eviction, want %d", c.Bytes(), want)
	}
	c.Put(sizedEntry("a", 10)) // a replaced: its old size no longer counts
	if want := int64(1510 + 2*EntryOverhead); c.Bytes() != want {
		t.Fatalf("bytes %d after replacing a, want %d", c.Bytes(), want)
	}
	c.Remove("d")
	if want := int64(10 + EntryOverhead); c.Bytes() != want || c.Len() != 1 {
		t.Fatalf("bytes %d len %d after removing d, want %d and 1", c.Bytes(), c.Len(), want)
	}
	c.Put(sizedEntry("huge", 1<<20)) // larger than the bound alone: kept (never the entry just stored), a goes
	if c.Peek("huge") == nil || c.Peek("a") != nil {
		t.Fatalf("the entry just stored is kept and the rest evicted: huge=%v a=%v", c.Peek("huge"), c.Peek("a"))
	}
}

func TestSizedCacheKeepsDirtyEntriesAndNamesThemDueBeyondItsBytes(t *testing.T) {
	c := NewSized[sized](3*(100+EntryOverhead), nil)
	c.Put(sizedEntry("a", 100).Successor(100, 2, false, t0, []Pos{{"t/0", 1}}))
	c.Put(sizedEntry("b", 100).Successor(100, 2, false, t0, []Pos{{"t/0", 2}}))
	c.Put(sizedEntry("c", 100))
	c.Put(sizedEntry("e", 10)) // over: the dirty a and b stay, the clean c goes
	if c.Peek("a") == nil || c.Peek("b") == nil || c.Peek("c") != nil {
		t.Fatalf("want only c evicted (a dirty entry's unsaved changes would be lost): a=%v b=%v c=%v",
			c.Peek("a"), c.Peek("b"), c.Peek("c"))
	}
	if got := c.Due(t0.Add(time.Second), time.Minute); len(got) != 0 {
		t.Fatalf("within the bound nothing is due before the interval, got %v", sizedKeys(got))
	}
	c.Put(sizedEntry("f", 200)) // e goes; still 100 bytes over with only dirty entries behind f
	if c.Peek("e") != nil || c.Bytes() != 400+3*EntryOverhead {
		t.Fatalf("want e evicted and 400 bytes + 3 entries held, have e=%v bytes %d", c.Peek("e"), c.Bytes())
	}
	if got := c.Due(t0.Add(time.Second), time.Minute); len(got) != 1 || got[0].Key != "a" {
		t.Fatalf("beyond the bound the least recently used dirty entry is due at once, got %v", sizedKeys(got))
	}
	c.Put(c.Peek("a").Successor(100, 3, true, t0.Add(time.Second), nil)) // a saved: clean; f (clean, LRU) goes
	if c.Peek("f") != nil || c.Bytes() != 200+2*EntryOverhead {
		t.Fatalf("want f evicted once a is saved, have f=%v bytes %d", c.Peek("f"), c.Bytes())
	}
	kept := c.DropPartitions([]string{"t/0"})
	if len(kept) != 1 || kept[0].Key != "b" || c.Peek("a") != nil {
		t.Fatalf("drop kept %v, a=%v", sizedKeys(kept), c.Peek("a"))
	}
	c.Clear()
	if want := int64(100 + EntryOverhead); c.Bytes() != want || c.Len() != 1 {
		t.Fatalf("after clear (b dirty, kept): bytes %d len %d, want %d and 1", c.Bytes(), c.Len(), want)
	}
}

func TestSetMaxBytesShrinksTheBound(t *testing.T) {
	c := NewSized[sized](0, nil)
	if c.MaxBytes() != DefaultMaxBytes {
		t.Fatalf("default bound %d, want %d", c.MaxBytes(), DefaultMaxBytes)
	}
	for i := range 10 {
		c.Put(sizedEntry(fmt.Sprint("k", i), 1000))
	}
	c.SetMaxBytes(5 * (1000 + EntryOverhead))
	c.Put(sizedEntry("k10", 1000))
	if c.Len() != 5 || c.Peek("k10") == nil || c.Peek("k5") != nil || c.Peek("k6") == nil {
		t.Fatalf("after shrinking to 5 entries' bytes: len %d", c.Len())
	}
	counted := New[int](10, nil)
	counted.SetMaxBytes(1)
	counted.Put(clean("a", 1))
	if counted.Len() != 1 || counted.Bytes() != 0 || counted.MaxBytes() != 0 {
		t.Fatal("a cache bounded by capacity is not bounded by bytes")
	}
}

// EntryOverhead is what the cache itself keeps per entry (an entry read from a node, then dirtied from one
// partition), beside the value's own Size: keys as long as a dataset key.
func TestEntryOverheadCoversTheCachesOwnMemory(t *testing.T) {
	const n = 20000
	c := NewSized[sized](1<<40, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		k := fmt.Sprintf("ds:%061d", i)
		c.Put(sizedEntry(k, 0).Successor(0, 2, false, t0, []Pos{{"headwater.events/3", int64(i)}}))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("cache memory per entry: %.0f B (EntryOverhead %d)", per, EntryOverhead)
	if per > EntryOverhead || per < EntryOverhead/2 {
		t.Fatalf("the cache keeps %.0f B per entry; EntryOverhead %d should be within 2x above it", per, EntryOverhead)
	}
}

func sizedKeys(es []*Entry[sized]) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}
