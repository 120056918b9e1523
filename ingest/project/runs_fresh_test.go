package project

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
)

// freshByRunNaive is freshByRun as it was written before ADR 0040: every run compares (and builds) the run key of
// every event of the batch, so a transaction of n events over ~n runs built ~n² strings.
func freshByRunNaive(runs []string, fresh []*rec) map[string][]*rec {
	m := map[string][]*rec{}
	for _, k := range runs {
		runID, _ := graph.SplitRunKey(k)
		group := graph.RunKey(runID, "")
		for _, r := range fresh {
			if rk := r.runKey(); rk == k || rk == group {
				m[k] = append(m[k], r)
			}
		}
	}
	return m
}

// runBatch is a batch of n events over n/2 runs of a few jobs, some DatasetEvents naming a publication run, and
// the batch's run keys with the groups the publications name.
func runBatch(n int, seed uint64) (runs []string, fresh []*rec) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	set := map[string]bool{}
	for i := range n {
		run := fmt.Sprintf("run-%d", rnd.IntN(n/2+1))
		var r *rec
		switch rnd.IntN(10) {
		case 0:
			r = &rec{ID: fmt.Sprint("e", i), PubRunID: run}
		case 1:
			r = &rec{ID: fmt.Sprint("e", i)} // a JobEvent: no run
		default:
			r = &rec{ID: fmt.Sprint("e", i), RunID: run, Job: &jobRec{Key: fmt.Sprintf("job-%d", rnd.IntN(4))}}
		}
		fresh = append(fresh, r)
		if k := r.runKey(); k != "" {
			set[k] = true
		}
	}
	for k := range set {
		runs = append(runs, k)
	}
	return runs, fresh
}

func TestFreshByRunMatchesThePerRunScan(t *testing.T) {
	for seed := range uint64(50) {
		runs, fresh := runBatch(2+int(seed)*7, seed)
		runs = append(runs, "run-none@job-0", runs[0]) // a run without events, and a repeated one
		if got, want := freshByRun(runs, fresh), freshByRunNaive(runs, fresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: freshByRun differs from the per-run scan:\n got %v\nwant %v", seed, got, want)
		}
	}
}

// BenchmarkFreshByRun: one transaction's grouping of its events by run (loadRunEvents), 2,000 events (the
// transaction cap), before (naive) and after.
func BenchmarkFreshByRun(b *testing.B) {
	for _, n := range []int{300, 2000} {
		runs, fresh := runBatch(n, 1)
		for name, f := range map[string]func([]string, []*rec) map[string][]*rec{"naive": freshByRunNaive, "indexed": freshByRun} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = f(runs, fresh)
				}
			})
		}
	}
}
