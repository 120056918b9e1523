package history_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
)

// TestLoaderWritesWhatTheProjectorWrites is the differential test of the benchmark graph: one small world is
// written twice, under two prefixes, once by the history loader and once by the projector from the generator's
// events for the same world (every job run to completion at least once, no failures, renames or late events).
// The two graphs must hold the same nodes and relationships, compared after naming every node by its world
// identity: datasets, fields (path, type), jobs, the lineage relationships (endpoints, kind, derivation, the
// transformations of column lineage), and for every label and relationship type the same property names with
// the same value types. Times and run evidence differ by design (the loader draws a year of history, the
// stream runs for hours) and are compared by type only; so are the properties the known differences list.
func TestLoaderWritesWhatTheProjectorWrites(t *testing.T) {
	store := testenv.Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	end := time.Now().UTC().Truncate(time.Second)
	loaded, projected := smallWorld(t, end), smallWorld(t, end)

	l, err := history.NewLoader(store, history.Config{World: loaded, HistoryDays: 30, RunDays: 0, BatchRows: 500,
		Writers: 2, End: end}, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx); err != nil {
		t.Fatalf("load: %v", err)
	}
	projectWorld(ctx, t, store, projected)

	a, b := dumpWorld(ctx, t, store, loaded), dumpWorld(ctx, t, store, projected)
	onlyLoaded, onlyProjected := difference(a, b), difference(b, a)
	if len(onlyLoaded) > 0 || len(onlyProjected) > 0 {
		t.Fatalf("the loader's graph differs from the projector's for the same world\nonly loaded (%d):\n  %s\nonly projected (%d):\n  %s",
			len(onlyLoaded), strings.Join(head(onlyLoaded, 40), "\n  "), len(onlyProjected),
			strings.Join(head(onlyProjected, 40), "\n  "))
	}
	if len(a) < 50 {
		t.Fatalf("dump of %d lines: the world is too small to compare anything", len(a))
	}
}

// smallWorld is a world of 40 datasets under a fresh prefix whose stream has no failures, retries, late or
// duplicate deliveries, renames, side events or streaming jobs: what both writers can express the same way.
func smallWorld(t *testing.T, end time.Time) *gen.World {
	t.Helper()
	c := gen.DefaultConfig(5, end.Add(-3*24*time.Hour))
	c.Prefix, c.Datasets, c.RunsPerDay, c.HubConsumers, c.Hubs = testenv.Namespace(t), 40, 2000, 3, 1
	c.FailShare, c.AbortShare, c.RetryShare, c.LateShare, c.DupShare = 0, 0, 0, 0, 0
	c.RenameShare, c.JobEventShare, c.DatasetEventShare, c.StreamingShare = 0, 0, 0, 0
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// projectWorld runs the world's stream until every job has completed a run, and projects the events in order.
func projectWorld(ctx context.Context, t *testing.T, store *graph.Store, w *gen.World) {
	t.Helper()
	norm, err := normalize.New(normalize.Config{Environments: gen.Environments(w.Config.Prefix), DefaultEnv: "unmapped"})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := project.New(store, norm, noBump{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time // the decoder's clock: each event is decoded as if it arrived when it was sent
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	s := w.NewStream()
	var batch []project.Envelope
	for i := 0; len(done) < len(w.Jobs); i++ {
		if i > 20000 {
			t.Fatalf("20,000 events and %d of %d jobs completed", len(done), len(w.Jobs))
		}
		e := s.Next()
		now = e.EmitAt
		ev, err := dec.Decode(e.Body)
		if err != nil {
			t.Fatalf("generated event %d: %v", i, err)
		}
		olevent.ResolveID("", &ev)
		batch = append(batch, project.Envelope{Event: ev, ReceivedAt: e.EmitAt, Principal: "loadtest", Source: "test"})
		if e.EventType == "COMPLETE" {
			done[ev.Job.Namespace+"|"+ev.Job.Name] = true
		}
	}
	for e, ok := s.NextPending(); ok; e, ok = s.NextPending() {
		now = e.EmitAt
		ev, err := dec.Decode(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		olevent.ResolveID("", &ev)
		batch = append(batch, project.Envelope{Event: ev, ReceivedAt: e.EmitAt, Principal: "loadtest", Source: "test"})
	}
	for len(batch) > 0 {
		n := min(len(batch), 500)
		if _, err := proj.Apply(ctx, batch[:n]); err != nil {
			t.Fatalf("project: %v", err)
		}
		batch = batch[n:]
	}
}

type noBump struct{}

func (noBump) Bump(context.Context, []string) error { return nil }

// byValue are the properties compared by value, per label or relationship type; every other property is
// compared by its name and value type only.
var byValue = map[string][]string{
	"Dataset":        {"namespace", "name", "env"},
	"DatasetName":    {"namespace", "name", "env", "ident"},
	"NAMES":          {"kind"},
	"Job":            {"namespace", "name", "processingType"},
	"Field":          {"path", "type"},
	"INPUT_TO":       {"kind", "derivation"},
	"OUTPUT_TO":      {"kind", "derivation"},
	"COLUMN_FEEDS":   {"kind", "tTypes", "tSubtypes", "tMasking", "tDescriptions"},
	"INDIRECT_FEEDS": {"subtypes"},
}

// knownDifferences are properties one writer sets and the other does not, on purpose; each says why.
var knownDifferences = map[string]string{
	// internal projection state (project.Dump leaves it out too): no query reads it
	"projState": "projector state", "fieldsSig": "projector state", "cuts": "projector state",
	"identityAt": "projector state", "edgeCkpt": "projector state", "metaStamps": "projector state",
	"projLock": "projector state", "claim": "projector state", "projHash": "projector state (what it last wrote)",
	"projSeq": "projector state (the fenced write's version stamp; absent reads as 0)", "projSnap": "projector state (the stamp projState was saved at)",
	"pos": "projector state (where the event was first projected from)",
	// set only by the events the stream sends: empty or absent in a loaded graph, and read as empty
	"facets": "latest facets JSON, written from events", "lastEventTime": "written from events",
}

// dumpWorld renders the world's part of the graph as sorted lines with nodes named by world identity.
func dumpWorld(ctx context.Context, t *testing.T, store *graph.Store, w *gen.World) []string {
	t.Helper()
	var dsKeys, jobKeys []any
	names := map[string]string{}
	for id, k := range datasetKeys(ctx, t, store, w) {
		dsKeys, names[k] = append(dsKeys, k), fmt.Sprintf("ds%d", id)
	}
	for _, j := range w.Jobs {
		k := graph.JobKey(j.Namespace, j.Name)
		jobKeys, names[k] = append(jobKeys, k), fmt.Sprintf("job%d", j.ID)
	}
	p := map[string]any{"ds": dsKeys, "jobs": jobKeys}
	var lines []string
	add := func(q string, render func(r map[string]any) string) {
		res, err := neo4j.ExecuteQuery(ctx, store.Driver, q, p, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(store.Database))
		if err != nil {
			t.Fatalf("dump: %v\n%s", err, q)
		}
		for _, r := range res.Records {
			lines = append(lines, render(r.AsMap()))
		}
	}
	node := func(label string) func(r map[string]any) string {
		return func(r map[string]any) string {
			return fmt.Sprintf("%s %s %s", label, at(names, r["of"]), props(label, r["p"], w.Config.Prefix))
		}
	}
	rel := func(r map[string]any) string {
		typ := r["type"].(string)
		return fmt.Sprintf("%s %s -> %s %s", typ, at(names, r["a"]), at(names, r["b"]), props(typ, r["p"], w.Config.Prefix))
	}
	add(`MATCH (d:Dataset) WHERE d.key IN $ds RETURN d.key AS of, properties(d) AS p`, node("Dataset"))
	// The loader renames one dataset in 97 (a RENAMED legacy name; the key is the legacy identity's); the stream
	// here renames none, so renamed names are left out and datasets are found by their current name.
	add(`MATCH (n:DatasetName)-[r:NAMES]->(d:Dataset) WHERE d.key IN $ds AND r.kind <> 'RENAMED'
RETURN d.key AS of, properties(n) AS p`, node("DatasetName"))
	add(`MATCH (n:DatasetName)-[r:NAMES]->(d:Dataset) WHERE d.key IN $ds AND r.kind <> 'RENAMED'
RETURN 'NAMES' AS type, d.key AS a, d.key AS b, properties(r) AS p`, rel)
	add(`MATCH (j:Job) WHERE j.key IN $jobs RETURN j.key AS of, properties(j) AS p`, node("Job"))
	add(`MATCH (j:Job)-[:HAS_VERSION]->(v:JobVersion) WHERE j.key IN $jobs RETURN j.key AS of, properties(v) AS p`,
		node("JobVersion"))
	add(`MATCH (d:Dataset)-[:HAS_FIELD]->(f:Field) WHERE d.key IN $ds RETURN d.key + '.' + f.path AS of, properties(f) AS p`,
		func(r map[string]any) string {
			ds, path, _ := strings.Cut(r["of"].(string), ".")
			return fmt.Sprintf("Field %s.%s %s", at(names, ds), path, props("Field", r["p"], w.Config.Prefix))
		})
	// Relationships as a reader gets them: latest evidence kept once on the job is read through it (ADR 0035).
	add(`MATCH (a)-[r:INPUT_TO|OUTPUT_TO|DECLARED_FEEDS|INDIRECT_FEEDS]->(b) WHERE a.key IN $ds + $jobs
WITH a, r, b, CASE WHEN a:Job THEN a WHEN b:Job THEN b END AS j
RETURN type(r) AS type, a.key AS a, b.key AS b, `+graph.EvidenceCypher("r", "j", graph.EdgeEvidenceProps)+` AS p`, rel)
	add(`MATCH (d:Dataset)-[:HAS_FIELD]->(a:Field)-[r:COLUMN_FEEDS]->(b:Field) WHERE d.key IN $ds
OPTIONAL MATCH (j:Job {key: r.jobKey})
RETURN 'COLUMN_FEEDS' AS type, a.datasetKey + '.' + a.path AS a, b.datasetKey + '.' + b.path AS b,
  `+graph.EvidenceCypher("r", "j", graph.ColumnEvidenceProps)+` AS p`,
		func(r map[string]any) string {
			fieldName := func(v any) string { ds, path, _ := strings.Cut(v.(string), "."); return at(names, ds) + "." + path }
			return fmt.Sprintf("COLUMN_FEEDS %s -> %s %s", fieldName(r["a"]), fieldName(r["b"]),
				props("COLUMN_FEEDS", r["p"], w.Config.Prefix))
		})
	sort.Strings(lines)
	return lines
}

// datasetKeys finds the world's datasets by their current identity, world id to node key. A dataset no job reads
// or writes is left out: the loader writes it, no event names it, so a projected graph never has it.
func datasetKeys(ctx context.Context, t *testing.T, store *graph.Store, w *gen.World) map[int]string {
	t.Helper()
	used := map[int]bool{}
	for _, j := range w.Jobs {
		for _, d := range append(slices.Clone(j.Inputs), j.Outputs...) {
			used[d] = true
		}
	}
	var ids []any
	for _, d := range w.Datasets {
		if used[d.ID] {
			ids = append(ids, map[string]any{"id": int64(d.ID), "ident": graph.DatasetIdent(d.Env, d.Namespace, d.Name)})
		}
	}
	res, err := neo4j.ExecuteQuery(ctx, store.Driver, `UNWIND $ids AS i
MATCH (:DatasetName {ident: i.ident})-[r:NAMES {kind: 'PRIMARY'}]->(d:Dataset) RETURN i.id AS id, d.key AS key`,
		map[string]any{"ids": ids}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, r := range res.Records {
		m := r.AsMap()
		out[int(m["id"].(int64))] = m["key"].(string)
	}
	if len(out) != len(ids) {
		t.Fatalf("%d of %d datasets found by their current name", len(out), len(ids))
	}
	return out
}

// at names a key by its world identity; a key the world does not know (a DatasetName ident, a key from the
// other writer) is shown as it is.
func at(names map[string]string, key any) string {
	s := fmt.Sprint(key)
	if n, ok := names[s]; ok {
		return n
	}
	return "?" + s
}

// props renders a property map: the byValue properties with their value (the world's prefix replaced), the
// others as name:type, the known differences left out, sorted.
func props(kind string, v any, prefix string) string {
	m, _ := v.(map[string]any)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if _, skip := knownDifferences[k]; skip || empty(m[k]) {
			continue
		}
		if slices.Contains(byValue[kind], k) {
			out = append(out, fmt.Sprintf("%s=%v", k, strings.ReplaceAll(fmt.Sprint(m[k]), prefix, "P")))
		} else if s := fmt.Sprint(m[k]); k == "jobKey" || k == "outputKey" {
			out = append(out, k+":"+typeOf(s))
		} else {
			out = append(out, k+":"+typeOf(m[k]))
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

// empty values read as absent ones: a query reads a missing string, list, JSON document or flag as empty.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || x == "[]" || x == "{}"
	case bool:
		return !x
	case []any:
		return len(x) == 0
	}
	return false
}

func typeOf(v any) string {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + typeOf(x[0]) + "]"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// difference lists the lines of a not in b (as multisets).
func difference(a, b []string) []string {
	count := map[string]int{}
	for _, s := range b {
		count[s]++
	}
	var out []string
	for _, s := range a {
		if count[s] > 0 {
			count[s]--
			continue
		}
		out = append(out, s)
	}
	return out
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }
