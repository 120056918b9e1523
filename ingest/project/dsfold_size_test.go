package project

import (
	"fmt"
	"runtime"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/foldstate"
)

// residentBytes is the heap one built value keeps, measured over n of them.
func residentBytes(n int, build func(i int) any) float64 {
	keep := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = build(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// busyState is a hub's state at the sealing bound: dsLogHotMax plain schema observations of three schemas of
// 20 fields, read on input and written, five facets of ~250 bytes and its owners' metadata.
func busyState(i int) *dsState {
	st := &dsState{Meta: map[string]stamped{}, Facets: map[string]stamped{}}
	var paths [3][]string
	for s := range paths {
		for f := range 20 {
			paths[s] = append(paths[s], fmt.Sprintf("column_%d_%d", s, f))
		}
	}
	for k := range dsLogHotMax {
		o := schemaObs(int64(1_795_990_000_000+i+k*60_000), paths[k%3]...)
		o.R = k%2 == 0
		st.merge(&dsChange{obs: []fold.Obs{o}})
	}
	facet, _ := json.Marshal(map[string]string{"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/dbt",
		"_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DataSourceDatasetFacet.json", "name": "warehouse", "uri": "postgres://db:5432"})
	for _, k := range []string{"dataSource", "storage", "ownership", "documentation", "version"} {
		st.Facets[k] = stamped{T: 1, E: "e", V: facet}
	}
	st.Meta["description"] = stamped{T: 1, E: "e", V: []byte(`"the orders mart"`)}
	st.Off = map[string]int64{"headwater.events/3": 123456}
	return st
}

// The resident size of a dataset's fold state, which DefaultCapacity multiplies: logged for ADR 0036, and bounded
// so a change to the state's form that multiplies it is noticed.
func TestFoldStateResidentSizePerDataset(t *testing.T) {
	busy := residentBytes(200, func(i int) any { return busyState(i) })
	small := residentBytes(2000, func(i int) any {
		st := &dsState{Meta: map[string]stamped{}, Facets: map[string]stamped{}}
		for k := range 8 {
			st.merge(&dsChange{obs: []fold.Obs{schemaObs(int64(1_795_990_000_000+i+k*86_400_000), "id", "amount", "status")}})
		}
		return st
	})
	t.Logf("resident fold state per dataset: busy (at the sealing bound) %.0f B, small (8 observations) %.0f B", busy, small)
	if busy > 256<<10 {
		t.Fatalf("a busy dataset's state takes %.0f B in memory, over 256 KiB", busy)
	}
}

func smallState(i int) *dsState {
	st := &dsState{Meta: map[string]stamped{}, Facets: map[string]stamped{}}
	for k := range 8 {
		st.merge(&dsChange{obs: []fold.Obs{schemaObs(int64(1_795_990_000_000+i+k*86_400_000), "id", "amount", "status")}})
	}
	return st
}

// dsCached.Size, which the fold-state cache sums against its bound, is within a third of the heap a cached state
// keeps (measured over many built states): a state at the sealing bound, a small one, and one with the derived
// properties last written and a pending change.
func TestFoldStateSizeEstimatesTheResidentHeap(t *testing.T) {
	last := func() map[string]any {
		return map[string]any{"cuts": []any{int64(1), int64(2), int64(3)}, "facets": `{"dataSource":{"name":"warehouse"}}`,
			"fieldsSig": "0123456789abcdef0123456789abcdef", "updatedAt": int64(1_795_990_000_000), "deleted": false}
	}
	cases := []struct {
		name  string
		n     int
		build func(i int) *dsCached
	}{
		{"busy", 200, func(i int) *dsCached { return &dsCached{st: busyState(i)} }},
		{"small", 4000, func(i int) *dsCached { return &dsCached{st: smallState(i)} }},
		{"small with last and pending", 4000, func(i int) *dsCached {
			return &dsCached{st: smallState(i), last: last(),
				pending: []*dsChange{{obs: []fold.Obs{schemaObs(int64(1_796_000_000_000+i), "id", "amount")}}}}
		}},
	}
	for _, c := range cases {
		var estimate float64
		measured := residentBytes(c.n, func(i int) any {
			v := c.build(i)
			estimate += float64(v.Size())
			return v
		})
		estimate /= float64(c.n)
		t.Logf("%s: Size %.0f B, resident %.0f B (%.2fx)", c.name, estimate, measured, estimate/measured)
		if r := estimate / measured; r < 0.67 || r > 1.5 {
			t.Errorf("%s: Size says %.0f B, the heap keeps %.0f B per state: not within a third", c.name, estimate, measured)
		}
	}
}

// A fold-state cache bounded by bytes keeps the heap of its states within its bound (plus a quarter), whatever
// the mix: here busy hubs among many small states, more than the bound holds.
func TestFoldStateCacheStaysWithinItsBytes(t *testing.T) {
	const bound = 24 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := newFoldState(bound)
	for i := range 8000 {
		st := smallState(i)
		if i%50 == 0 {
			st = busyState(i)
		}
		f.cache.Put(foldstate.NewEntry(fmt.Sprintf("ds_%060d", i), &dsCached{st: st}, 1, false))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(f)
	heap := int64(after.HeapAlloc - before.HeapAlloc)
	t.Logf("cache of %d states: counted %d B, heap %d B, bound %d B", f.cache.Len(), f.cache.Bytes(), heap, bound)
	if f.cache.Bytes() > bound || heap > bound*5/4 {
		t.Fatalf("a cache bounded at %d B counts %d B and keeps %d B of heap", bound, f.cache.Bytes(), heap)
	}
	if f.cache.Len() >= 8000 {
		t.Fatal("nothing was evicted: the test does not exceed the bound")
	}
}
