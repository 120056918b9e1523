package fold

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// randomRun is a run of a job over datasets d0..d3 with a random state.
func randomRun(rng *rand.Rand, i int, start int64) Run {
	states := []string{olevent.TypeComplete, olevent.TypeComplete, olevent.TypeComplete, olevent.TypeFail,
		olevent.TypeAbort, olevent.TypeRunning}
	r := Run{ID: fmt.Sprintf("run%03d", i), State: states[rng.IntN(len(states))], Start: start,
		JobVersion: fmt.Sprintf("v%d", rng.IntN(3))}
	r.Last = start + int64(1+rng.IntN(30))
	if IsTerminal(r.State) {
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
		pub := RunPub(r.State, false, "")
		r.IO = append(r.IO, IO{Dir: dir, DS: fmt.Sprintf("d%d", d), FirstAt: first, LastAt: r.Last, Pub: pub,
			Producer: "p", EventIDs: []string{r.ID + "-e"}, Cols: randomCols(rng, dir, first)})
	}
	return r
}

// randomCols is column lineage for some outputs: mappings from d0/d2's fields a, b into the output's a, b, and
// dataset-level dependencies, each with a random subtype.
func randomCols(rng *rand.Rand, dir string, at int64) *ColsDoc {
	if dir != graph.RelWrote || rng.IntN(3) == 0 {
		return nil
	}
	tt := func() []olevent.Transformation {
		return []olevent.Transformation{{Type: "DIRECT", Subtype: []string{"IDENTITY", "AGGREGATION"}[rng.IntN(2)]}}
	}
	d := &ColsDoc{}
	for _, in := range []string{"d0", "d2"} {
		for _, f := range []string{"a", "b"} {
			if rng.IntN(3) == 0 {
				d.Fields = append(d.Fields, ColField{In: in, InField: f, Out: []string{"a", "b"}[rng.IntN(2)],
					FirstAt: at, TT: tt()})
			}
		}
		if rng.IntN(2) == 0 {
			d.Dataset = append(d.Dataset, ColDep{In: in, FirstAt: at, TT: tt()})
		}
	}
	return d
}

// testHists gives every dataset a field a that was dropped and re-created, and a field b.
var testHists = func() map[string][]*FieldHist {
	m := map[string][]*FieldHist{}
	for d := range 4 {
		k := fmt.Sprintf("d%d", d)
		m[k] = []*FieldHist{{Path: "a", From: 0, To: 300}, {Path: "a", From: 350, To: graph.OpenEnd},
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
		var all []Run
		var ck *Checkpoint
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
					if !IsTerminal(all[i].State) {
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
			want := ObservedEdges(all, cuts)
			wantCols := ColumnEdges("j", FoldColumns(nil, all, testHists))
			wantInds := IndirectEdges("j", FoldIndirect(nil, all))
			var got []Edge
			var gotCols []ColEdge
			var gotInds []IndirectEdge
			fromCheckpoint := ck != nil && changed >= ck.At
			if fromCheckpoint {
				incremental++
				var loaded []Run
				for _, r := range all {
					if r.Start >= ck.At {
						loaded = append(loaded, r)
					}
				}
				got = EdgesFromAggs(FoldObserved(ck.Subjects, loaded, cuts, ck.At, graph.OpenEnd))
				gotCols = ColumnEdges("j", FoldColumns(ck.Cols, loaded, testHists))
				gotInds = IndirectEdges("j", FoldIndirect(ck.Inds, loaded))
				ck = roundTrip(t, AdvanceCheckpoint(ck, loaded, cuts, testHists, nil, pin))
			} else {
				got = ObservedEdges(all, cuts)
				gotCols, gotInds = wantCols, wantInds
				ck = roundTrip(t, AdvanceCheckpoint(nil, all, cuts, testHists, nil, pin))
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

// roundTrip is the checkpoint through its stored JSON (the projector compresses it: ingest/project packState).
func roundTrip(t *testing.T, ck *Checkpoint) *Checkpoint {
	t.Helper()
	s, err := json.Marshal(ck)
	if err != nil {
		t.Fatal(err)
	}
	var out Checkpoint
	if err := json.Unmarshal(s, &out); err != nil || out.Subjects == nil {
		t.Fatalf("checkpoint does not decode (%v): %s", err, s)
	}
	return &out
}

// checkStoredEvidence checks the divergence rule (docs/adr/0035): the stored form of the edges folded from the
// checkpoint (the job's evidence, the edges without what they share with it) is the stored form of the full fold,
// and reading it back as the lineage reads do, coalesce(edge value, job value), gives every edge and COLUMN_FEEDS
// exactly its own derived evidence. It returns the running counts of edges that keep their own copy and of those
// that read it through the job.
func checkStoredEvidence(t *testing.T, at string, got, want []Edge, gotCols, wantCols []ColEdge, own, shared int) (int, int) {
	t.Helper()
	evGot, storedGot := SharedEvidence(got)
	evWant, storedWant := SharedEvidence(want)
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
		if read := readThrough(e.Props, evGot, EdgeEvidenceProps); !reflect.DeepEqual(read, want[i].Props) {
			t.Fatalf("%s: edge %s %s reads back as\n%v\nwant\n%v", at, e.Dir, e.DS, read, want[i].Props)
		}
	}
	for i, c := range gotCols {
		stored := WithoutSharedEvidence(c.Props, ColumnEvidenceOf(evGot), ColumnEvidenceProps)
		// A nil property is one the write removes (tHistory of an edge whose kinds never changed): never read back.
		wantRead := readThrough(wantCols[i].Props, nil, nil)
		if read := readThrough(stored, ColumnEvidenceOf(evGot), ColumnEvidenceProps); !reflect.DeepEqual(read, wantRead) {
			t.Fatalf("%s: column edge %s>%s reads back as\n%v\nwant\n%v", at, c.From, c.To, read, wantRead)
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
