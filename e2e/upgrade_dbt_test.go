package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

type noBumps struct{}

func (noBumps) Bump(context.Context, []string) error { return nil }

// ADR 0027, point 9: a graph that projected dbt-ol's events before the dbt_node facet was interpreted (one job per
// name: customer_totals.build.run from `build`, customer_totals from `run`) is upgraded by `headwater upgrade` to
// one job keyed by the model's unique_id, with the runs of both commands. The events are openlineage-dbt
// 1.54.0's own (testdata/upgrade-dbt-events.jsonl, namespaces templated); replay alone would skip them as
// already projected.
func TestUpgradeMovesDbtEventsOntoTheirModelsJob(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	jobNS := "e2e-" + testenv.Token(5) + "-dbtup"
	raw, err := os.ReadFile("testdata/upgrade-dbt-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), "$JOBNS", jobNS)
	text = strings.ReplaceAll(text, "$WORK", "/w/"+jobNS)
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	arch, err := archive.OpenDir(archive.Config{Dir: dir, SegmentBytes: 64 << 20}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	const principal = "e2e-dbt-upgrade"
	var recs []archive.Record
	var earlier []project.Envelope
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		ev, err := dec.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID == "" {
			ev.ID = ev.ContentDigest()
		}
		now := time.Now()
		recs = append(recs, archive.Record{EventID: ev.ID, ReceivedAt: now, Principal: principal, Source: "gateway",
			Event: []byte(line)})
		// what projection version 2 made of it: the same event (same id, same digest), the facet not interpreted
		j := *ev.Job
		j.DbtUniqueID = ""
		ev.Job = &j
		earlier = append(earlier, project.Envelope{Event: ev, ReceivedAt: now, Principal: principal, Source: "gateway"})
	}
	if err := arch.Append(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := arch.Close(); err != nil {
		t.Fatal(err)
	}
	norm, err := normalize.New(normalize.Config{DefaultEnv: "default"})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := project.New(store, norm, noBumps{}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proj.Apply(ctx, earlier); err != nil {
		t.Fatal(err)
	}
	jobs := func() string {
		res, err := neo4j.ExecuteQuery(ctx, store.Driver, `MATCH (j:Job {namespace: $ns}) OPTIONAL MATCH (r:Run)-[:OF_JOB]->(j)
			WITH j, count(r) AS runs RETURN j.name AS name, j.dbtUniqueId AS uid, coalesce(j.names, []) AS names, runs
			ORDER BY name`, map[string]any{"ns": jobNS}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Records {
			m := r.AsMap()
			out = append(out, fmt.Sprintf("%v uid=%v names=%v runs=%v", m["name"], m["uid"], m["names"], m["runs"]))
		}
		return strings.Join(out, "\n")
	}
	before := jobs()
	if !strings.Contains(before, "warehouse.main.hw_producers.customer_totals.build.run uid=<nil>") {
		t.Fatalf("the earlier projection has no per-name job:\n%s", before)
	}
	out := runOnce(t, "upgrade", "--dir="+dir, "--namespace-prefix="+jobNS)
	if !strings.Contains(out, "moved 4 events onto their dbt node's job") {
		t.Fatalf("upgrade output:\n%s", out)
	}
	want := strings.Join([]string{
		"dbt-run-hw_producers uid=<nil> names=[] runs=2",
		"warehouse.main.hw_producers.customer_totals uid=model.hw_producers.customer_totals " +
			"names=[warehouse.main.hw_producers.customer_totals warehouse.main.hw_producers.customer_totals.build.run] runs=2",
	}, "\n")
	if got := jobs(); got != want {
		t.Fatalf("jobs after the upgrade:\n%s\nwant:\n%s\n(before:\n%s)", got, want, before)
	}
	// the model's job is the one projecting the events today gives: its key, its runs' parents
	res, err := neo4j.ExecuteQuery(ctx, store.Driver, `MATCH (r:Run)-[:OF_JOB]->(j:Job {key: $k}) MATCH (r)-[:CHILD_OF]->(p:Run)-[:OF_JOB]->(pj:Job)
		RETURN pj.name AS parent`, map[string]any{"k": graph.DbtJobKey(jobNS, "model.hw_producers.customer_totals", graph.DbtRoleNode)},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, r := range res.Records {
		p, _ := r.Get("parent")
		parents = append(parents, p.(string))
	}
	if !slices.Equal(parents, []string{"dbt-run-hw_producers", "dbt-run-hw_producers"}) {
		t.Fatalf("parents of the model's runs: %v", parents)
	}
}
