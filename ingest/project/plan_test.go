package project

import (
	"reflect"
	"testing"
)

// TestJobQueueMergeIsOrderFree: the job-edge step's plan is the same whichever order the steps' queues are merged
// in (union of jobs and full folds, earliest changed start per job), and allFull marks every queued job.
func TestJobQueueMergeIsOrderFree(t *testing.T) {
	var jobs, datasets, runs jobQueue
	jobs.add("a", "b")
	datasets.addFull("b")
	datasets.add("c")
	runs.changed("a", 30)
	runs.changed("a", 10)
	runs.changed("d", 20)
	want := jobQueue{jobs: map[string]bool{"a": true, "b": true, "c": true, "d": true},
		full: map[string]bool{"b": true}, since: map[string]int64{"a": 10, "d": 20}}
	for _, order := range [][]jobQueue{{jobs, datasets, runs}, {runs, datasets, jobs}, {datasets, runs, jobs}} {
		var got jobQueue
		for _, q := range order {
			got.merge(q)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("merged %+v, want %+v", got, want)
		}
	}
	var later jobQueue
	later.changed("a", 5)
	got := want
	got.merge(later)
	if got.since["a"] != 5 {
		t.Fatalf("an earlier change must win: %v", got.since)
	}
	var up jobQueue
	up.add("x", "y")
	up.allFull()
	if !reflect.DeepEqual(up.full, map[string]bool{"x": true, "y": true}) {
		t.Fatalf("allFull: %v", up.full)
	}
}
