package history_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
)

// expected computes from the world alone what the loader must write.
type expected struct {
	datasets, fields, jobs, inputs, outputs, runs int64
}

func expect(w *gen.World, runDays int) expected {
	var e expected
	e.datasets = int64(len(w.Datasets))
	for _, d := range w.Datasets {
		e.fields += int64(len(d.Fields) + structParents(d.Fields))
	}
	e.jobs = int64(len(w.Jobs))
	for _, j := range w.Jobs {
		e.inputs += int64(len(j.Inputs))
		e.outputs += int64(len(j.Outputs))
	}
	e.runs = int64(runDays * w.Config.RunsPerDay)
	return e
}

// structParents counts the struct parents of nested columns that are no column themselves: the loader writes
// them as fields too, as the projector does.
func structParents(fields []gen.Field) int {
	have, n := map[string]bool{}, 0
	for _, f := range fields {
		have[f.Path] = true
	}
	for _, f := range fields {
		for i := range len(f.Path) {
			if f.Path[i] == '.' && !have[f.Path[:i]] {
				have[f.Path[:i]], n = true, n+1
			}
		}
	}
	return n
}

func TestLoadTinyGraph(t *testing.T) {
	store := testenv.Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	c := gen.DefaultConfig(7, end)
	c.Prefix, c.Datasets, c.RunsPerDay, c.HubConsumers = testenv.Namespace(t), 200, 300, 20
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	cfg := history.Config{World: w, HistoryDays: 365, RunDays: 2, BatchRows: 500, Writers: 3, End: end}
	l, err := history.NewLoader(store, cfg, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Load(ctx)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	want, got := expect(w, cfg.RunDays), res.Counts
	checks := []struct {
		name      string
		got, want int64
	}{
		{"datasets", got.Datasets, want.datasets}, {"fields", got.Fields, want.fields}, {"jobs", got.Jobs, want.jobs},
		{"job versions", got.JobVersions, want.jobs}, {"INPUT_TO", got.InputTo, want.inputs},
		{"OUTPUT_TO", got.OutputTo, want.outputs}, {"runs", got.Runs, want.runs},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %d, want %d", ch.name, ch.got, ch.want)
		}
	}
	if got.DatasetNames <= got.Datasets {
		t.Errorf("dataset names %d: want more than datasets %d (renamed datasets keep their legacy name)", got.DatasetNames, got.Datasets)
	}
	if got.Reads == 0 || got.Wrote == 0 || got.ColumnFeeds == 0 || got.IndirectFeeds == 0 {
		t.Errorf("run detail or column lineage missing: %+v", got)
	}
	if res.Rows <= 0 || res.RowsPerSec <= 0 {
		t.Errorf("no rows accounted: %+v", res)
	}
	checkEdgeShape(ctx, t, store, w)
	if _, err := l.Load(ctx); err == nil {
		t.Error("second load under the same prefix: want ErrPrefixInUse")
	}
}

// checkEdgeShape reads one INPUT_TO and one OUTPUT_TO of the first job, as lineage reads them (latest evidence
// through the job), and checks the storage contract.
func checkEdgeShape(ctx context.Context, t *testing.T, store *graph.Store, w *gen.World) {
	t.Helper()
	j := w.Jobs[0]
	in := w.Datasets[j.Inputs[0]]
	out := w.Datasets[j.Outputs[0]]
	res, err := neo4j.ExecuteQuery(ctx, store.Driver, `
MATCH (i:Dataset {namespace: $ins, name: $inn})-[a:INPUT_TO]->(j:Job {namespace: $jns, name: $jn})-[b:OUTPUT_TO]->(o:Dataset {namespace: $ons, name: $on})
RETURN `+graph.EvidenceCypher("a", "j", graph.EdgeEvidenceProps)+` AS a, `+
		graph.EvidenceCypher("b", "j", graph.EdgeEvidenceProps)+` AS b, j.key AS jk`, map[string]any{"ins": in.Namespace, "inn": in.Name, "jns": j.Namespace, "jn": j.Name,
		"ons": out.Namespace, "on": out.Name}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("want exactly one INPUT_TO/OUTPUT_TO path through %s, got %d", j.Name, len(res.Records))
	}
	if jk, _ := res.Records[0].Get("jk"); jk != graph.JobKey(j.Namespace, j.Name) {
		t.Errorf("job key %v, want %s", jk, graph.JobKey(j.Namespace, j.Name))
	}
	for _, name := range []string{"a", "b"} {
		v, _ := res.Records[0].Get(name)
		checkIntervals(t, name, v.(map[string]any)) // as a reader gets it: evidence through the job (ADR 0035)
	}
}

func checkIntervals(t *testing.T, name string, p map[string]any) {
	t.Helper()
	froms, _ := p["froms"].([]any)
	tos, _ := p["tos"].([]any)
	pubs, _ := p["pubs"].([]any)
	if len(froms) == 0 || len(froms) != len(tos) || len(froms) != len(pubs) {
		t.Fatalf("%s: froms/tos/pubs not parallel: %v %v %v", name, froms, tos, pubs)
	}
	maxTo := int64(0)
	for i := range froms {
		f, to := froms[i].(int64), tos[i].(int64)
		if f >= to {
			t.Errorf("%s: interval %d empty: %d >= %d", name, i, f, to)
		}
		if i > 0 && f < tos[i-1].(int64) {
			t.Errorf("%s: intervals overlap or unsorted", name)
		}
		maxTo = max(maxTo, to)
	}
	if p["validTo"] != maxTo {
		t.Errorf("%s: validTo %v, want max(tos) %d", name, p["validTo"], maxTo)
	}
	for _, k := range []string{"kind", "firstObservedAt", "lastObservedAt", "producer", "eventIds", "jobVersion",
		"lastRunId", "lastRunState", "derivation", "normVersion"} {
		if _, ok := p[k]; !ok {
			t.Errorf("%s: property %s missing", name, k)
		}
	}
	if p["kind"] != graph.KindObserved {
		t.Errorf("%s: kind %v", name, p["kind"])
	}
}
