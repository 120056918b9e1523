package foldstate

import (
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
