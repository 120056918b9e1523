package project

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// randomRun is a run of a job over datasets d0..d3 with a random state.
func randomRun(rng *rand.Rand, i int, start int64) jobRun {
	states := []string{olevent.TypeComplete, olevent.TypeComplete, olevent.TypeComplete, olevent.TypeFail,
		olevent.TypeAbort, olevent.TypeRunning}
	r := jobRun{ID: fmt.Sprintf("run%03d", i), State: states[rng.IntN(len(states))], Start: start,
		JobVersion: fmt.Sprintf("v%d", rng.IntN(3))}
	r.Last = start + int64(1+rng.IntN(30))
	if isTerminal(r.State) {
		r.Ended = r.Last
	}
	for d := range 4 {
		if rng.IntN(3) == 0 {
			continue
		}
		dir := graph.RelRead
		if d%2 == 1 {
			dir = graph.RelWrote
		}
		first := start + int64(rng.IntN(int(r.Last-start)+1))
		pub := runPub(r.State, false, "")
		r.IO = append(r.IO, jobIO{Dir: dir, DS: fmt.Sprintf("d%d", d), FirstAt: first, LastAt: r.Last, Pub: pub,
			Producer: "p", EventIDs: []string{r.ID + "-e"}, Cols: randomCols(rng, dir, first)})
	}
	return r
}

// randomCols is column lineage for some outputs: mappings from d0/d2's fields a, b into the output's a, b, and
// dataset-level dependencies, each with a random subtype.
func randomCols(rng *rand.Rand, dir string, at int64) *colsDoc {
	if dir != graph.RelWrote || rng.IntN(3) == 0 {
		return nil
	}
	tt := func() []olevent.Transformation {
		return []olevent.Transformation{{Type: "DIRECT", Subtype: []string{"IDENTITY", "AGGREGATION"}[rng.IntN(2)]}}
	}
	d := &colsDoc{}
	for _, in := range []string{"d0", "d2"} {
		for _, f := range []string{"a", "b"} {
			if rng.IntN(3) == 0 {
				d.Fields = append(d.Fields, colField{In: in, InField: f, Out: []string{"a", "b"}[rng.IntN(2)],
					FirstAt: at, TT: tt()})
			}
		}
		if rng.IntN(2) == 0 {
			d.Dataset = append(d.Dataset, colDep{In: in, FirstAt: at, TT: tt()})
		}
	}
	return d
}

// testHists gives every dataset a field a that was dropped and re-created, and a field b.
var testHists = func() map[string][]*fieldHist {
	m := map[string][]*fieldHist{}
	for d := range 4 {
		k := fmt.Sprintf("d%d", d)
		m[k] = []*fieldHist{{Path: "a", From: 0, To: 300}, {Path: "a", From: 350, To: graph.OpenEnd},
			{Path: "b", From: 0, To: graph.OpenEnd}}
	}
	return m
}()

// TestCheckpointFoldEqualsFullFold drives random arrival histories (new runs mostly in order, some late, some
// first seen running and completed later) and checks after every batch that folding from the checkpoint gives
// exactly the edges of folding every run.
func TestCheckpointFoldEqualsFullFold(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		cuts := map[string][]int64{"d1": {int64(200 + rng.IntN(400))}}
		var all []jobRun
		var ck *jobCheckpoint
		incremental, colsChecked := 0, 0
		pin := int64(rng.IntN(300))
		for step := range 25 {
			changed := int64(math.MaxInt64)
			for n := 0; n < 1+rng.IntN(3); n++ {
				start := int64(step*40 + rng.IntN(30))
				if rng.IntN(6) == 0 {
					start -= int64(rng.IntN(200)) // a late run
				}
				r := randomRun(rng, len(all), start)
				all = append(all, r)
				changed = min(changed, r.Start)
			}
			if rng.IntN(4) == 0 { // an earlier running run completes
				for i := range all {
					if !isTerminal(all[i].State) {
						all[i].State, all[i].Last = olevent.TypeComplete, all[i].Last+5
						all[i].Ended = all[i].Last
						for j := range all[i].IO {
							all[i].IO[j].Pub, all[i].IO[j].LastAt = graph.PubPublished, all[i].Last
						}
						changed = min(changed, all[i].Start)
						break
					}
				}
			}
			want := observedEdges(all, cuts)
			wantCols := columnEdges("j", foldColumns(nil, all, testHists))
			wantInds := indirectEdges("j", foldIndirect(nil, all))
			var got []edge
			var gotCols []colEdge
			var gotInds []indirectEdge
			fromCheckpoint := ck != nil && changed >= ck.At
			if fromCheckpoint {
				incremental++
				var loaded []jobRun
				for _, r := range all {
					if r.Start >= ck.At {
						loaded = append(loaded, r)
					}
				}
				got = edgesFromAggs(foldObserved(ck.Subjects, loaded, cuts, ck.At, graph.OpenEnd))
				gotCols = columnEdges("j", foldColumns(ck.Cols, loaded, testHists))
				gotInds = indirectEdges("j", foldIndirect(ck.Inds, loaded))
				ck = roundTrip(t, advanceCheckpoint(ck, loaded, cuts, testHists, nil, pin))
			} else {
				got = observedEdges(all, cuts)
				gotCols, gotInds = wantCols, wantInds
				ck = roundTrip(t, advanceCheckpoint(nil, all, cuts, testHists, nil, pin))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d (checkpoint at %d):\n got %v\nwant %v", seed, step, ck.At, got, want)
			}
			if fromCheckpoint && len(wantCols) > 0 && len(wantInds) > 0 {
				colsChecked++
			}
			if !reflect.DeepEqual(gotCols, wantCols) {
				t.Fatalf("seed %d step %d column edges (checkpoint at %d):\n got %v\nwant %v", seed, step, ck.At, gotCols, wantCols)
			}
			if !reflect.DeepEqual(gotInds, wantInds) {
				t.Fatalf("seed %d step %d indirect edges (checkpoint at %d):\n got %v\nwant %v", seed, step, ck.At, gotInds, wantInds)
			}
		}
		if incremental == 0 || colsChecked == 0 {
			t.Fatalf("seed %d never used the checkpoint (%d) or never checked column edges (%d)", seed, incremental, colsChecked)
		}
	}
}

func roundTrip(t *testing.T, ck *jobCheckpoint) *jobCheckpoint {
	t.Helper()
	s, err := encodeCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	out := decodeCheckpoint(s)
	if out == nil {
		t.Fatalf("checkpoint does not decode: %s", s)
	}
	return out
}
