package fold

import (
	"math"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// run is a batch run of job "j" reading and writing the given datasets over [start, end].
func run(id string, state string, start, end int64, reads, writes []string) Run {
	r := Run{Key: id, ID: id, State: state, Start: start, Last: end}
	if IsTerminal(state) {
		r.Ended = end
	}
	for _, d := range reads {
		r.IO = append(r.IO, IO{Dir: graph.RelRead, DS: d, FirstAt: start, LastAt: end, Pub: RunPub(state, false, ""),
			Producer: "p", EventIDs: []string{id + "-e"}})
	}
	for _, d := range writes {
		r.IO = append(r.IO, IO{Dir: graph.RelWrote, DS: d, FirstAt: start, LastAt: end, Pub: RunPub(state, false, ""),
			Producer: "p", EventIDs: []string{id + "-e"}})
	}
	return r
}

// ivs reads an edge's stored intervals back as graph.Intervals.
func ivs(props map[string]any) []graph.Interval {
	froms, tos, pubs := props["froms"].([]any), props["tos"].([]any), props["pubs"].([]any)
	out := make([]graph.Interval, len(froms))
	for i := range froms {
		out[i] = graph.Interval{From: froms[i].(int64), To: tos[i].(int64), Pub: pubs[i].(string)}
	}
	return out
}

func TestObservedEdgesTable(t *testing.T) {
	complete, fail, running := olevent.TypeComplete, olevent.TypeFail, olevent.TypeRunning
	for _, c := range []struct {
		name string
		runs []Run
		cuts map[string][]int64
		want map[string][]graph.Interval // "DIR|ds" -> intervals
	}{
		{"one complete run opens both edges", []Run{run("r1", complete, 10, 20, []string{"a"}, []string{"b"})}, nil,
			map[string][]graph.Interval{"INPUT_TO|a": {iv(10, open, graph.PubPublished)},
				"OUTPUT_TO|b": {iv(10, open, graph.PubPublished)}}},
		{"a later complete run that omits an input closes it at its end",
			[]Run{run("r1", complete, 10, 20, []string{"a"}, []string{"b"}), run("r2", complete, 30, 40, nil, []string{"b"})},
			nil, map[string][]graph.Interval{"INPUT_TO|a": {iv(10, 40, graph.PubPublished)},
				"OUTPUT_TO|b": {iv(10, open, graph.PubPublished)}}},
		{"a failed run that omits an input does not close it",
			[]Run{run("r1", complete, 10, 20, []string{"a"}, []string{"b"}), run("r2", fail, 30, 40, nil, []string{"b"})},
			nil, map[string][]graph.Interval{"INPUT_TO|a": {iv(10, open, graph.PubPublished)},
				"OUTPUT_TO|b": {iv(10, open, graph.PubPublished)}}},
		{"a running run lists pending", []Run{run("r1", running, 10, 20, nil, []string{"b"})}, nil,
			map[string][]graph.Interval{"OUTPUT_TO|b": {iv(10, open, graph.PubPending)}}},
		{"the best publication in an interval wins",
			[]Run{run("r1", fail, 10, 20, nil, []string{"b"}), run("r2", complete, 30, 40, nil, []string{"b"})}, nil,
			map[string][]graph.Interval{"OUTPUT_TO|b": {iv(10, open, graph.PubPublished)}}},
		{"a cut (drop or rename) closes the open interval; a later listing reopens it",
			[]Run{run("r1", complete, 10, 20, []string{"a"}, nil), run("r2", complete, 60, 70, []string{"a"}, nil)},
			map[string][]int64{"a": {50}},
			map[string][]graph.Interval{"INPUT_TO|a": {iv(10, 50, graph.PubPublished), iv(60, open, graph.PubPublished)}}},
		{"an earlier run that omits the input does not close a later listing",
			[]Run{run("r2", complete, 30, 40, []string{"a"}, nil), run("r1", complete, 10, 20, nil, nil)}, nil,
			map[string][]graph.Interval{"INPUT_TO|a": {iv(30, open, graph.PubPublished)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := map[string][]graph.Interval{}
			for _, e := range ObservedEdges(c.runs, c.cuts) {
				if e.Kind != graph.KindObserved {
					t.Fatalf("kind %s", e.Kind)
				}
				got[e.Dir+"|"+e.DS] = ivs(e.Props)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %v\nwant %v", got, c.want)
			}
			// Any order of the same runs gives the same edges.
			rev := append([]Run(nil), c.runs...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if a, b := ObservedEdges(c.runs, c.cuts), ObservedEdges(rev, c.cuts); !reflect.DeepEqual(a, b) {
				t.Fatalf("order matters:\n%v\n%v", a, b)
			}
		})
	}
}

func TestDeclaredEdgesTable(t *testing.T) {
	decl := func(id string, at int64, ins ...string) Decl {
		d := Decl{ID: id, Producer: "p", T: at, Inputs: map[string]bool{}, Outputs: map[string]bool{}}
		for _, k := range ins {
			d.Inputs[k] = true
		}
		return d
	}
	for _, c := range []struct {
		name  string
		decls []Decl
		want  map[string][]graph.Interval
	}{
		{"a declaration opens its inputs", []Decl{decl("d1", 10, "a", "b")},
			map[string][]graph.Interval{"a": {iv(10, open, graph.PubPublished)}, "b": {iv(10, open, graph.PubPublished)}}},
		{"a later declaration that omits an input withdraws it", []Decl{decl("d2", 20, "a"), decl("d1", 10, "a", "b")},
			map[string][]graph.Interval{"a": {iv(10, open, graph.PubPublished)}, "b": {iv(10, 20, graph.PubPublished)}}},
		{"a withdrawn input declared again reopens", []Decl{decl("d1", 10, "a"), decl("d2", 20), decl("d3", 30, "a")},
			map[string][]graph.Interval{"a": {iv(10, 20, graph.PubPublished), iv(30, open, graph.PubPublished)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := map[string][]graph.Interval{}
			for _, e := range DeclaredEdges(c.decls, "v1") {
				if e.Dir != graph.RelInputTo || e.Kind != graph.KindDeclared || e.Props["jobVersion"] != "v1" {
					t.Fatalf("edge %+v", e)
				}
				got[e.DS] = ivs(e.Props)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestCheckpointRulesTable(t *testing.T) {
	for _, c := range []struct {
		name          string
		ck            Checkpoint
		sigs          map[string]string
		usable, stale bool
	}{
		{"no column lineage: usable", Checkpoint{}, nil, true, false},
		{"column lineage of the current fold version: usable", Checkpoint{HasCols: true, ColsVersion: checkpointColsVersion},
			nil, true, false},
		{"column lineage of an older fold version: folded in full", Checkpoint{HasCols: true, ColsVersion: 1}, nil, false, false},
		{"a dataset's fields unchanged", Checkpoint{FieldSigs: map[string]string{"a": "x"}}, map[string]string{"a": "x"},
			true, false},
		{"a dataset's fields changed", Checkpoint{FieldSigs: map[string]string{"a": "x"}}, map[string]string{"a": "y"},
			true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ck.Usable(); got != c.usable {
				t.Errorf("Usable = %v", got)
			}
			if got := c.ck.FieldsChanged(c.sigs); got != c.stale {
				t.Errorf("FieldsChanged = %v", got)
			}
		})
	}
}

func TestAdvanceCheckpointTable(t *testing.T) {
	complete, running := olevent.TypeComplete, olevent.TypeRunning
	for _, c := range []struct {
		name string
		runs []Run
		pin  int64
		at   int64
	}{
		{"no runs: no checkpoint", nil, 0, math.MinInt64},
		{"just after the last terminal run's last event", []Run{run("r1", complete, 10, 20, nil, []string{"b"}),
			run("r2", complete, 30, 40, nil, []string{"b"})}, 0, 41},
		{"a running run pins the checkpoint at its start", []Run{run("r1", complete, 10, 20, nil, []string{"b"}),
			run("r2", running, 30, 40, nil, []string{"b"})}, 100, 30},
		{"a running run older than the pin window is sealed in", []Run{run("r1", running, 10, 20, nil, []string{"b"}),
			run("r2", complete, 3000, 3010, nil, []string{"b"})}, 100, 3011},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck := AdvanceCheckpoint(nil, c.runs, nil, nil, nil, c.pin)
			if ck.At != c.at {
				t.Fatalf("At = %d, want %d", ck.At, c.at)
			}
			// Folding the runs at or after the checkpoint into it gives the full fold's edges.
			var after []Run
			for _, r := range c.runs {
				if r.Start >= ck.At {
					after = append(after, r)
				}
			}
			if ck.At == math.MinInt64 {
				return
			}
			got := EdgesFromAggs(FoldObserved(ck.Subjects, after, nil, ck.At, graph.OpenEnd))
			if want := ObservedEdges(c.runs, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("from the checkpoint:\n%v\nfull:\n%v", got, want)
			}
		})
	}
}

func TestLatestVersionTable(t *testing.T) {
	r := func(id string, start int64, v string) Run { return Run{ID: id, Start: start, JobVersion: v} }
	for _, c := range []struct {
		name string
		from LatestVersionRef
		runs []Run
		want string
	}{
		{"none", LatestVersionRef{}, []Run{r("a", 1, "")}, ""},
		{"the latest start wins", LatestVersionRef{}, []Run{r("a", 1, "v1"), r("b", 2, "v2"), r("c", 3, "")}, "v2"},
		{"ties by run id", LatestVersionRef{}, []Run{r("b", 2, "v2"), r("a", 2, "v1")}, "v2"},
		{"an earlier run keeps the held version", LatestVersionRef{Start: 5, RunID: "x", Version: "v5"},
			[]Run{r("a", 1, "v1")}, "v5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.from.WithRuns(c.runs).Version; got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestFieldHistoryTable(t *testing.T) {
	renamed := &FieldHist{Path: "a", From: 10, To: open}
	renamed.Rename("b", 20)
	dropped := &FieldHist{Path: "c", From: 0, To: 15}
	recreated := &FieldHist{Path: "c", From: 30, To: open}
	hists := []*FieldHist{renamed, dropped, recreated}
	for _, c := range []struct {
		path string
		t    int64
		want *FieldHist
	}{
		{"a", 15, renamed}, {"b", 25, renamed}, {"a", 25, renamed}, // after the rename the old name maps to the history
		{"c", 5, dropped}, {"c", 20, dropped}, {"c", 35, recreated}, {"x", 5, nil},
	} {
		if got := FieldAt(hists, c.path, c.t); got != c.want {
			t.Errorf("FieldAt(%s, %d) = %+v, want %+v", c.path, c.t, got, c.want)
		}
	}
	if renamed.PathAt(15) != "a" || renamed.PathAt(25) != "b" || !renamed.Named("a") || renamed.Named("c") {
		t.Errorf("renamed history %+v", renamed)
	}
	if renamed.Key("ds") != graph.FieldKey("ds", "a", 10) {
		t.Errorf("a renamed history keeps the key of its first path: %s", renamed.Key("ds"))
	}
}

func TestRunPublicationTable(t *testing.T) {
	for _, c := range []struct {
		state     string
		streaming bool
		facet     string
		want      string
	}{
		{olevent.TypeComplete, false, "", graph.PubPublished},
		{olevent.TypeComplete, false, graph.PubWithheld, graph.PubWithheld},
		{olevent.TypeFail, false, "", graph.PubAttempted},
		{olevent.TypeAbort, false, "", graph.PubAttempted},
		{olevent.TypeRunning, false, "", graph.PubPending},
		{olevent.TypeRunning, true, "", graph.PubPublished},
		{olevent.TypeFail, true, "", graph.PubAttempted},
	} {
		if got := RunPub(c.state, c.streaming, c.facet); got != c.want {
			t.Errorf("RunPub(%s, %v, %q) = %s, want %s", c.state, c.streaming, c.facet, got, c.want)
		}
	}
	if got := LastFew([]string{"1", "2", "3", "4", "5", "6", "7"}); !reflect.DeepEqual(got, []string{"3", "4", "5", "6", "7"}) {
		t.Errorf("LastFew = %v", got)
	}
}
