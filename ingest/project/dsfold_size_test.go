package project

import (
	"fmt"
	"runtime"
	"testing"

	json "github.com/goccy/go-json"
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
		st.merge(&dsChange{obs: []dsObs{o}})
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
			st.merge(&dsChange{obs: []dsObs{schemaObs(int64(1_795_990_000_000+i+k*86_400_000), "id", "amount", "status")}})
		}
		return st
	})
	t.Logf("resident fold state per dataset: busy (at the sealing bound) %.0f B, small (8 observations) %.0f B", busy, small)
	if busy > 256<<10 {
		t.Fatalf("a busy dataset's state takes %.0f B in memory, over 256 KiB", busy)
	}
}
