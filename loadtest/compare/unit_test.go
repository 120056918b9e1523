package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
)

func answer(nodes []string, edges ...Edge) Answer {
	a := NewAnswer()
	for _, n := range nodes {
		a.Nodes[n] = true
	}
	for _, e := range edges {
		a.Edges[e] = true
	}
	return a
}

func TestDiffDetectsEveryKindOfMismatch(t *testing.T) {
	base := answer([]string{"a", "b", "c"}, Edge{"a", "b", "j1"}, Edge{"b", "c", "j2"})
	if m := Diff(base, answer([]string{"c", "b", "a"}, Edge{"b", "c", "j2"}, Edge{"a", "b", "j1"})); !m.Empty() {
		t.Fatalf("equal answers reported as different: %s", m)
	}
	cases := []struct {
		name  string
		naive Answer
		want  Mismatch
		text  string
	}{
		{"node missing in naive", answer([]string{"a", "b"}, Edge{"a", "b", "j1"}, Edge{"b", "c", "j2"}),
			Mismatch{NodesOnlyHeadwater: 1}, "node only in headwater: c"},
		{"extra node in naive", answer([]string{"a", "b", "c", "d"}, Edge{"a", "b", "j1"}, Edge{"b", "c", "j2"}),
			Mismatch{NodesOnlyNaive: 1}, "node only in naive: d"},
		{"same ends, other job", answer([]string{"a", "b", "c"}, Edge{"a", "b", "j9"}, Edge{"b", "c", "j2"}),
			Mismatch{EdgesOnlyHeadwater: 1, EdgesOnlyNaive: 1}, "edge only in naive: a -[j9]-> b"},
		{"reversed edge", answer([]string{"a", "b", "c"}, Edge{"b", "a", "j1"}, Edge{"b", "c", "j2"}),
			Mismatch{EdgesOnlyHeadwater: 1, EdgesOnlyNaive: 1}, "edge only in headwater: a -[j1]-> b"},
	}
	for _, c := range cases {
		m := Diff(base, c.naive)
		got := [4]int{m.NodesOnlyHeadwater, m.NodesOnlyNaive, m.EdgesOnlyHeadwater, m.EdgesOnlyNaive}
		if got != [4]int{c.want.NodesOnlyHeadwater, c.want.NodesOnlyNaive, c.want.EdgesOnlyHeadwater, c.want.EdgesOnlyNaive} {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if m.Empty() || !strings.Contains(m.String(), c.text) {
			t.Errorf("%s: description %q lacks %q", c.name, m.String(), c.text)
		}
	}
}

func TestDiffCapsExamplesButCountsAll(t *testing.T) {
	hw := NewAnswer()
	for i := range 3 * maxListed {
		hw.Nodes[string(rune('A'+i))] = true
	}
	m := Diff(hw, NewAnswer())
	if m.NodesOnlyHeadwater != 3*maxListed || len(m.Examples) != maxListed {
		t.Fatalf("got %d counted, %d listed", m.NodesOnlyHeadwater, len(m.Examples))
	}
}

func TestNaiveAnswerOrientsEdgesInDataFlowDirection(t *testing.T) {
	rec := map[string]any{"root": "r", "steps": []any{[]any{"r", "x", "j"}, []any{"x", "y", ""}}}
	down, err := naiveAnswer(rec, true)
	if err != nil {
		t.Fatal(err)
	}
	if m := Diff(answer([]string{"r", "x", "y"}, Edge{"r", "x", "j"}, Edge{"x", "y", ""}), down); !m.Empty() {
		t.Errorf("downstream: %s", m)
	}
	up, err := naiveAnswer(rec, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := Diff(answer([]string{"r", "x", "y"}, Edge{"x", "r", "j"}, Edge{"y", "x", ""}), up); !m.Empty() {
		t.Errorf("upstream: %s", m)
	}
	if _, err := naiveAnswer(map[string]any{"root": "r", "steps": []any{[]any{"r"}}}, true); err == nil {
		t.Error("a malformed step was accepted")
	}
}

func TestKeyOfDecodesPublicIDs(t *testing.T) {
	if k, err := keyOf(api.DatasetID("ds_abc"), "D"); err != nil || k != "ds_abc" {
		t.Errorf("dataset id: %q %v", k, err)
	}
	if k, err := keyOf(api.JobID("job_x"), "J"); err != nil || k != "job_x" {
		t.Errorf("job id: %q %v", k, err)
	}
	if _, err := keyOf(api.JobID("job_x"), "D"); err == nil {
		t.Error("a job id was accepted as a dataset id")
	}
	if _, err := keyOf("not base64!", "D"); err == nil {
		t.Error("garbage was accepted")
	}
}

func TestNaiveCypherBoundsAndLegs(t *testing.T) {
	down, up := NaiveCypher(true, 3), NaiveCypher(false, 2)
	for _, c := range []struct{ q, want string }{
		{down, "(root)-[:INPUT_TO|OUTPUT_TO|DECLARED_FEEDS*1..6]->(:Dataset)"},
		{down, "type(r) <> 'OUTPUT_TO'"},
		{up, "(root)<-[:INPUT_TO|OUTPUT_TO|DECLARED_FEEDS*1..4]-(:Dataset)"},
		{up, "type(r) <> 'INPUT_TO'"},
	} {
		if !strings.Contains(c.q, c.want) {
			t.Errorf("query lacks %q:\n%s", c.want, c.q)
		}
	}
}

func TestSummariseCensorsTimeoutsAndCounts(t *testing.T) {
	cfg := Config{MaxDepth: 2, Reps: 1, NaiveTimeout: time.Second, HeadwaterTimeout: time.Second, MaxNodes: 10,
		AsOf: time.Unix(1, 0)}
	hub := Root{Name: "h", Hub: true}
	ord := Root{Name: "o"}
	ok := func(ms int) Outcome { return Outcome{Latency: time.Duration(ms) * time.Millisecond, Nodes: 3} }
	mm := Diff(answer([]string{"a"}), NewAnswer())
	samples := []Sample{
		{Case: Case{Root: ord, Down: true, Depth: 1}, Headwater: ok(10), Naive: ok(30), Checked: true},
		{Case: Case{Root: ord, Down: false, Depth: 1}, Headwater: ok(10), Naive: ok(50), Checked: true, Mismatch: &mm},
		{Case: Case{Root: hub, Down: true, Depth: 1}, Headwater: ok(20), Naive: Outcome{TimedOut: true, Latency: time.Second}},
		{Case: Case{Root: hub, Down: true, Depth: 2}, Headwater: ok(40), Naive: Outcome{Skipped: true, Latency: time.Second}},
		{Case: Case{Root: hub, Down: false, Depth: 2}, Headwater: Outcome{Err: "boom"}, Naive: ok(5)},
	}
	res := Summarise(cfg, []Root{ord, hub}, samples, time.Minute)
	if res.Checked != 2 || res.Mismatched != 1 || res.Unchecked != 3 || res.NaiveTimeouts != 1 || res.NaiveSkipped != 1 ||
		res.HeadwaterErrors != 1 || res.OrdinaryRoots != 1 || res.HubRoots != 1 || len(res.Mismatches) != 1 {
		t.Fatalf("counts: %+v", res)
	}
	rows := map[rowKey]Row{}
	for _, r := range res.Rows {
		rows[rowKey{r.Class, r.Direction, r.Depth}] = r
	}
	both := rows[rowKey{"ordinary", "BOTH", 1}]
	if both.Headwater.Count != 2 || both.Naive.P50 != 30 || both.Ratio.P50 != 3 {
		t.Errorf("ordinary BOTH depth 1: %+v", both)
	}
	hubDown := rows[rowKey{"hub", "DOWNSTREAM", 1}]
	if hubDown.NaiveTimeouts != 1 || hubDown.Naive.P50 != 1000 || hubDown.Ratio.P50 != 50 {
		t.Errorf("a timeout must count at the timeout: %+v", hubDown)
	}
	if r := rows[rowKey{"hub", "BOTH", 2}]; r.NaiveSkipped != 1 || r.Errors != 1 || r.Headwater.Count != 1 {
		t.Errorf("hub BOTH depth 2: %+v", r)
	}
}

func TestSummariseCountsMemoryLimitAsTimeout(t *testing.T) {
	cfg := Config{MaxDepth: 1, Reps: 1, NaiveTimeout: 2 * time.Second, HeadwaterTimeout: time.Second, MaxNodes: 10, AsOf: time.Unix(1, 0)}
	hub := Root{Name: "h", Hub: true}
	s := Sample{Case: Case{Root: hub, Down: true, Depth: 1}, Headwater: Outcome{Latency: time.Millisecond},
		Naive: Outcome{TimedOut: true, OutOfMemory: true, Latency: cfg.NaiveTimeout}}
	res := Summarise(cfg, []Root{hub}, []Sample{s}, time.Second)
	if res.NaiveTimeouts != 1 || res.NaiveOutOfMemory != 1 || res.NaiveErrors != 0 || res.Unchecked != 1 {
		t.Fatalf("counts: %+v", res)
	}
	for _, r := range res.Rows {
		if r.NaiveTimeouts != 1 || r.Naive.P50 != 2000 {
			t.Errorf("row %+v: the memory-limited query counts at the timeout", r)
		}
	}
}
