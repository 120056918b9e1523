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
		incremental, colsChecked, own, shared := 0, 0, 0, 0
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
			own, shared = checkStoredEvidence(t, fmt.Sprintf("seed %d step %d", seed, step), got, want, gotCols, wantCols,
				own, shared)
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
		if own == 0 || shared == 0 {
			t.Fatalf("seed %d: %d edges kept their own evidence, %d read it through the job: the divergence rule was not exercised both ways",
				seed, own, shared)
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

// checkStoredEvidence checks the divergence rule (docs/adr/0035): the stored form of the edges folded from the
// checkpoint (the job's evidence, the edges without what they share with it) is the stored form of the full fold,
// and reading it back as the lineage reads do, coalesce(edge value, job value), gives every edge and COLUMN_FEEDS
// exactly its own derived evidence. It returns the running counts of edges that keep their own copy and of those
// that read it through the job.
func checkStoredEvidence(t *testing.T, at string, got, want []edge, gotCols, wantCols []colEdge, own, shared int) (int, int) {
	t.Helper()
	evGot, storedGot := sharedEvidence(got)
	evWant, storedWant := sharedEvidence(want)
	if !reflect.DeepEqual(evGot, evWant) || !reflect.DeepEqual(storedGot, storedWant) {
		t.Fatalf("%s: stored form from the checkpoint differs from the full fold's:\n got %v %v\nwant %v %v", at, evGot,
			storedGot, evWant, storedWant)
	}
	for i, e := range storedGot {
		if e.Props["lastRunId"] == nil {
			shared++
		} else {
			own++
		}
		if read := readThrough(e.Props, evGot, edgeEvidenceProps); !reflect.DeepEqual(read, want[i].Props) {
			t.Fatalf("%s: edge %s %s reads back as\n%v\nwant\n%v", at, e.Dir, e.DS, read, want[i].Props)
		}
	}
	for i, c := range gotCols {
		stored := withoutSharedEvidence(c.Props, columnEvidenceOf(evGot), columnEvidenceProps)
		if read := readThrough(stored, columnEvidenceOf(evGot), columnEvidenceProps); !reflect.DeepEqual(read, wantCols[i].Props) {
			t.Fatalf("%s: column edge %s>%s reads back as\n%v\nwant\n%v", at, c.From, c.To, read, wantCols[i].Props)
		}
	}
	return own, shared
}

// readThrough is what a lineage read returns for stored relationship properties: each evidence property is the
// relationship's own value when it has one, else the job's (graph.EvidenceCypher).
func readThrough(stored, job map[string]any, names []string) map[string]any {
	out := map[string]any{}
	for k, v := range stored {
		if v != nil {
			out[k] = v
		}
	}
	for _, p := range names {
		if out[p] == nil && job[p] != nil {
			out[p] = job[p]
		}
	}
	return out
}
