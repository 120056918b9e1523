package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/testenv"
)

// testCanon lowercases namespaces, trims trailing slashes, and refuses names containing "!!".
type testCanon struct{}

var _ Canonicalizer = testCanon{}

func (testCanon) Dataset(ns, name string) (string, string, string, error) {
	if strings.Contains(name, "!!") || name == "" {
		return "", "", "", errors.New("name is not canonicalisable")
	}
	return "prod", strings.TrimSuffix(strings.ToLower(ns), "/"), name, nil
}

func (testCanon) Job(ns, name string) (string, string, error) {
	if name == "" {
		return "", "", errors.New("empty job name")
	}
	return ns, name, nil
}

// testBumper records bumped keys and can be made to fail.
type testBumper struct {
	mu   sync.Mutex
	keys map[string]int
	fail error
}

var _ GenerationBumper = (*testBumper)(nil)

func (b *testBumper) Bump(_ context.Context, keys []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	for _, k := range keys {
		b.keys[k]++
	}
	return nil
}

// scen is one scenario: a projector over the real Neo4j and a unique namespace.
type scen struct {
	t     *testing.T
	ctx   context.Context
	store *graph.Store
	p     *Projector
	bump  *testBumper
	ns    string
	base  time.Time
	seq   atomic.Int64
}

func newScen(t *testing.T) *scen {
	t.Helper()
	s := &scen{t: t, ctx: context.Background(), store: testenv.Store(t), bump: &testBumper{keys: map[string]int{}},
		ns: testenv.Namespace(t), base: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	p, err := New(s.store, testCanon{}, s.bump, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	return s
}

func (s *scen) at(sec int) time.Time { return s.base.Add(time.Duration(sec) * time.Second) }
func (s *scen) ms(sec int) int64     { return graph.Millis(s.at(sec)) }

// runID is a deterministic UUID per scenario and name.
func (s *scen) runID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(s.ns+"/"+name)).String()
}

func (s *scen) dsNS() string  { return s.ns + "-pg://db:5432" }
func (s *scen) jobNS() string { return s.ns + "-airflow" }

func (s *scen) ds(name string) olevent.Dataset {
	return olevent.Dataset{Namespace: s.dsNS(), Name: name}
}

func (s *scen) dsKey(name string) string { return graph.DatasetKey("prod", s.dsNS(), name) }

// runKey is the key of the run named run of job.
func (s *scen) runKey(job, run string) string { return graph.RunKey(s.runID(run), s.jobKey(job)) }

// evKey is the Event node key of a scenario event id (applied with principal "test").
func (s *scen) evKey(id string) string { return graph.EventKey(testPrincipal, s.ns+"-"+id) }

// testPrincipal is the principal applyErr delivers events as.
const testPrincipal = "test"

func (s *scen) jobKey(name string) string { return graph.JobKey(s.jobNS(), name) }

type evMod func(*olevent.Event)

// runEv builds a RunEvent.
func (s *scen) runEv(id, typ string, sec int, job, run string, ins, outs []olevent.Dataset, mods ...evMod) olevent.Event {
	e := olevent.Event{ID: s.ns + "-" + id, Kind: olevent.KindRun, EventType: typ, EventTime: s.at(sec),
		Producer: "https://example.com/producer", SchemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json",
		Run: &olevent.Run{ID: s.runID(run), Facets: map[string]json.RawMessage{}},
		Job: &olevent.Job{Namespace: s.jobNS(), Name: job}, Inputs: ins, Outputs: outs}
	for _, m := range mods {
		m(&e)
	}
	return e
}

func (s *scen) apply(evs ...olevent.Event) Result {
	s.t.Helper()
	res, err := s.applyErr(evs...)
	if err != nil {
		s.t.Fatalf("apply: %v", err)
	}
	return res
}

func (s *scen) applyErr(evs ...olevent.Event) (Result, error) {
	batch := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		seq := s.seq.Add(1)
		batch = append(batch, Envelope{Event: e, ReceivedAt: time.Now().Add(time.Duration(seq) * time.Millisecond),
			Principal: testPrincipal, Source: "replay"})
	}
	return s.p.Apply(s.ctx, batch)
}

func (s *scen) dump() string {
	s.t.Helper()
	d, err := Dump(s.ctx, s.store, s.ns)
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

// wipe deletes this scenario's own data (everything Dump sees), so the next permutation starts empty.
func (s *scen) wipe() {
	s.t.Helper()
	s.query(`MATCH (n) WHERE (n:Dataset OR n:Job OR n:DatasetName OR n:UnresolvedIdentity) AND n.namespace STARTS WITH $p
		OPTIONAL MATCH (n)-[:HAS_FIELD|HAS_VERSION]->(x)
		OPTIONAL MATCH (n)<-[:VERSION_OF|OF_JOB|ABOUT_JOB]-(y)
		OPTIONAL MATCH (y)<-[:OF_RUN]-(z:Event)
		DETACH DELETE n, x, y, z`, map[string]any{"p": s.ns})
	s.query(`MATCH (e:Event) WHERE e.key STARTS WITH $p DETACH DELETE e`, map[string]any{"p": s.ns})
	if d := s.dump(); strings.TrimSpace(d) != "" {
		s.t.Fatalf("wipe left data:\n%s", d)
	}
}

func (s *scen) query(cypher string, params map[string]any) []map[string]any {
	s.t.Helper()
	res, err := neo4j.ExecuteQuery(s.ctx, s.store.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.store.Database))
	if err != nil {
		s.t.Fatalf("query: %v", err)
	}
	out := make([]map[string]any, 0, len(res.Records))
	for _, r := range res.Records {
		out = append(out, r.AsMap())
	}
	return out
}

// one returns the single row of a query, failing otherwise.
func (s *scen) one(cypher string, params map[string]any) map[string]any {
	s.t.Helper()
	rows := s.query(cypher, params)
	if len(rows) != 1 {
		s.t.Fatalf("want 1 row, got %d for %s", len(rows), cypher)
	}
	return rows[0]
}

// edge returns the properties of the job's lineage edge with a dataset ("in" or "out"), or nil.
func (s *scen) edge(dir, job, dsKey, kind string) map[string]any {
	s.t.Helper()
	pattern := "(d:Dataset {key: $d})-[e:INPUT_TO {kind: $kind}]->(j:Job {key: $j})"
	if dir == "out" {
		pattern = "(j:Job {key: $j})-[e:OUTPUT_TO {kind: $kind}]->(d:Dataset {key: $d})"
	}
	// as lineage reads it: latest evidence kept once on the job is read through it (ADR 0035)
	rows := s.query("MATCH "+pattern+" RETURN "+graph.EvidenceCypher("e", "j", graph.EdgeEvidenceProps)+" AS p",
		map[string]any{"d": dsKey, "j": s.jobKey(job), "kind": kind})
	if len(rows) == 0 {
		return nil
	}
	if len(rows) > 1 {
		s.t.Fatalf("duplicate edges %s %s", dir, dsKey)
	}
	return rows[0]["p"].(map[string]any)
}

// intervals renders an edge's intervals as "[from,to)PUB ..." with times in scenario seconds.
func (s *scen) intervals(props map[string]any) string {
	if props == nil {
		return "<none>"
	}
	froms, tos, pubs := props["froms"].([]any), props["tos"].([]any), props["pubs"].([]any)
	var parts []string
	for i := range froms {
		to := "open"
		if tos[i].(int64) != graph.OpenEnd {
			to = fmt.Sprint((tos[i].(int64) - s.ms(0)) / 1000)
		}
		parts = append(parts, fmt.Sprintf("[%d,%s)%s", (froms[i].(int64)-s.ms(0))/1000, to, pubs[i]))
	}
	return strings.Join(parts, " ")
}

func (s *scen) run(name string) map[string]any {
	s.t.Helper()
	return s.one("MATCH (r:Run) WHERE r.key STARTS WITH $id + '@' AND r.runId = $id RETURN properties(r) AS p",
		map[string]any{"id": s.runID(name)})["p"].(map[string]any)
}

func schemaOf(paths ...string) []olevent.SchemaField {
	out := make([]olevent.SchemaField, 0, len(paths))
	for _, p := range paths {
		out = append(out, olevent.SchemaField{Path: p, Type: "varchar"})
	}
	return out
}

func withSchema(d olevent.Dataset, paths ...string) olevent.Dataset {
	d.Schema = schemaOf(paths...)
	return d
}

func diffLines(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	inA := map[string]bool{}
	for _, l := range as {
		inA[l] = true
	}
	inB := map[string]bool{}
	for _, l := range bs {
		inB[l] = true
	}
	var out []string
	for _, l := range as {
		if !inB[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bs {
		if !inA[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
