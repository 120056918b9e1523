package canary

import (
	"testing"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/inventory/canaries"
)

// A batch marks exactly the canaries whose latest check saw one of its keys (as a dataset, job or field id) and
// wakes the checker once; a retired canary is forgotten; a re-check replaces what a canary watches.
func TestWatchSetMarksTheCanariesABatchTouches(t *testing.T) {
	w := newWatchSet()
	w.set("k1", []string{api.DatasetID("ds_a"), api.JobID("job_j")})
	w.set("k2", []string{api.FieldID("f_c")})
	w.touched([]string{"ds_other"})
	if p := w.takePending(); len(p) != 0 {
		t.Fatalf("an unwatched key marked %v", p)
	}
	select {
	case <-w.kick:
		t.Fatal("an unwatched key woke the checker")
	default:
	}
	w.touched([]string{"ds_other", "job_j", "f_c"})
	if p := w.takePending(); len(p) != 2 || !p["k1"] || !p["k2"] {
		t.Fatalf("pending %v, want k1 and k2", p)
	}
	<-w.kick
	w.set("k1", []string{api.DatasetID("ds_b")})
	w.touched([]string{"job_j"})
	if p := w.takePending(); len(p) != 0 {
		t.Fatalf("k1's old watch still marks: %v", p)
	}
	w.keepOnly([]canaries.Canary{{Name: "k1"}})
	w.touched([]string{"f_c", "ds_b"})
	if p := w.takePending(); len(p) != 1 || !p["k1"] {
		t.Fatalf("after k2 retired: %v", p)
	}
}
