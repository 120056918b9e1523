package fold

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

var (
	identity = []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}
	masked   = func(desc string) []olevent.Transformation {
		return []olevent.Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Masking: true, Description: desc}}
	}
)

// maskRun is a COMPLETE run at start that maps customers.email into masked.email with tt.
func maskRun(id string, start int64, tt []olevent.Transformation) Run {
	return Run{ID: id, State: olevent.TypeComplete, Start: start, Ended: start + 5, Last: start + 5, IO: []IO{
		{Dir: graph.RelRead, DS: "customers", FirstAt: start},
		{Dir: graph.RelWrote, DS: "masked", FirstAt: start, Cols: &ColsDoc{Fields: []ColField{
			{In: "customers", InField: "email", Out: "email", FirstAt: start, TT: tt}}}},
	}}
}

var maskHists = map[string][]*FieldHist{
	"customers": {{Path: "email", From: 0, To: graph.OpenEnd}},
	"masked":    {{Path: "email", From: 0, To: graph.OpenEnd}},
}

// storedHistory is the tHistory property ColumnEdges writes for the one edge of the fold (nil when absent).
func storedHistory(t *testing.T, aggs map[string]*ColAgg) []graph.TransformationsFrom {
	t.Helper()
	edges := ColumnEdges("j", aggs)
	if len(edges) != 1 {
		t.Fatalf("%d column edges, want 1", len(edges))
	}
	v := edges[0].Props[graph.ColumnTransformHistoryProp]
	if v == nil {
		return nil
	}
	var h []graph.TransformationsFrom
	if err := json.Unmarshal([]byte(v.(string)), &h); err != nil {
		t.Fatalf("tHistory %v: %v", v, err)
	}
	return h
}

// A job that starts masking keeps the kinds each stretch of its runs reported (ADR 0091): identity from the first
// run, masking from the first masking run on, with the latest masking run's description; the edge's own
// transformations stay the latest run's.
func TestColumnEdgeKeepsItsTransformationHistory(t *testing.T) {
	runs := []Run{maskRun("r1", 100, identity), maskRun("r2", 150, identity), maskRun("r3", 200, masked("md5")),
		maskRun("r4", 300, masked("sha256"))}
	aggs := FoldColumns(nil, runs, maskHists)
	want := []graph.TransformationsFrom{
		{At: 100, Types: []string{"DIRECT"}, Subtypes: []string{"IDENTITY"}, Masking: []bool{false}, Descriptions: []string{""}},
		{At: 200, Types: []string{"DIRECT"}, Subtypes: []string{"TRANSFORMATION"}, Masking: []bool{true}, Descriptions: []string{"sha256"}},
	}
	if got := storedHistory(t, aggs); !reflect.DeepEqual(got, want) {
		t.Fatalf("history\n got %+v\nwant %+v", got, want)
	}
	e := ColumnEdges("j", aggs)[0]
	if e.Props["tSubtypes"] == nil || fmt.Sprint(e.Props["tSubtypes"]) != "[TRANSFORMATION]" {
		t.Errorf("the edge's own transformations are not the latest run's: %v", e.Props)
	}
	// Read back as the walk does.
	r := graph.Rel{TTypes: []string{"DIRECT"}, TSubtypes: []string{"TRANSFORMATION"}, THistory: want}
	for _, c := range []struct {
		at   int64
		want string
	}{{50, "IDENTITY"}, {100, "IDENTITY"}, {199, "IDENTITY"}, {200, "TRANSFORMATION"}, {1000, "TRANSFORMATION"}} {
		if _, st, _, _ := r.TransformationsAt(c.at); fmt.Sprint(st) != "["+c.want+"]" {
			t.Errorf("TransformationsAt(%d) = %v, want %s", c.at, st, c.want)
		}
	}
}

// Runs that all report the same kinds store no history (the property is removed), whatever their descriptions
// and whatever order the kinds are listed in.
func TestColumnEdgeWithoutAChangeStoresNoHistory(t *testing.T) {
	two := func(a, b olevent.Transformation) []olevent.Transformation { return []olevent.Transformation{a, b} }
	id, filter := olevent.Transformation{Type: "DIRECT", Subtype: "IDENTITY"}, olevent.Transformation{Type: "INDIRECT", Subtype: "FILTER"}
	for name, runs := range map[string][]Run{
		"same kinds":         {maskRun("r1", 100, masked("md5")), maskRun("r2", 200, masked("sha256"))},
		"same kinds swapped": {maskRun("r1", 100, two(id, filter)), maskRun("r2", 200, two(filter, id))},
		"one run":            {maskRun("r1", 100, identity)},
	} {
		if h := storedHistory(t, FoldColumns(nil, runs, maskHists)); h != nil {
			t.Errorf("%s: stored history %+v", name, h)
		}
	}
	if r := (graph.Rel{TSubtypes: []string{"IDENTITY"}}); fmt.Sprint(func() []string { _, s, _, _ := r.TransformationsAt(5); return s }()) != "[IDENTITY]" {
		t.Error("without a history TransformationsAt is not the edge's own transformations")
	}
}

// The history does not depend on the order runs arrive in, nor on being folded in one go or from a checkpoint
// (one fold per run, as sealed batches come).
func TestColumnTransformationHistoryIsOrderFree(t *testing.T) {
	var runs []Run
	for i := range 12 {
		tt := identity
		if i/3%2 == 1 {
			tt = masked(fmt.Sprint("v", i))
		}
		runs = append(runs, maskRun(fmt.Sprintf("r%02d", i), int64(100+10*i), tt))
	}
	want := storedHistory(t, FoldColumns(nil, runs, maskHists))
	if len(want) != 4 {
		t.Fatalf("%d stretches, want 4: %+v", len(want), want)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20 {
		shuffled := append([]Run(nil), runs...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := storedHistory(t, FoldColumns(nil, shuffled, maskHists)); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled arrival\n got %+v\nwant %+v", got, want)
		}
	}
	var aggs map[string]*ColAgg
	for _, r := range runs {
		aggs = FoldColumns(aggs, []Run{r}, maskHists)
	}
	if got := storedHistory(t, aggs); !reflect.DeepEqual(got, want) {
		t.Fatalf("folded run by run\n got %+v\nwant %+v", got, want)
	}
}

// A job whose kinds change on every run keeps its newest ColumnTransformHistoryMax stretches.
func TestColumnTransformationHistoryIsBounded(t *testing.T) {
	var runs []Run
	n := ColumnTransformHistoryMax + 10
	for i := range n {
		tt := identity
		if i%2 == 1 {
			tt = masked("")
		}
		runs = append(runs, maskRun(fmt.Sprintf("r%03d", i), int64(1000+i), tt))
	}
	h := storedHistory(t, FoldColumns(nil, runs, maskHists))
	if len(h) != ColumnTransformHistoryMax {
		t.Fatalf("%d stretches, want %d", len(h), ColumnTransformHistoryMax)
	}
	if h[0].At != int64(1000+n-ColumnTransformHistoryMax) || h[len(h)-1].At != int64(1000+n-1) {
		t.Errorf("kept stretches from %d to %d, want the newest", h[0].At, h[len(h)-1].At)
	}
}
