package resolvers

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage/release"
)

// pyicebergDriver is the pyiceberg driver of the icebergsync tests (ADR 0039).
const pyicebergDriver = "../ingest/icebergsync/testdata/pyiceberg_driver.py"

// pyicebergStep runs one step of the driver's scenario (create, append-1, ...) on namespace ns with real pyiceberg
// against the fixture catalog and returns the table's state after it.
func pyicebergStep(t *testing.T, step, ns string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, testenv.PyIceberg(t), pyicebergDriver, testenv.IcebergURI(), "step", step, ns).CombinedOutput()
	if err != nil {
		t.Fatalf("pyiceberg %s: %v\n%s", step, err, out)
	}
	var st map[string]any
	trimmed := strings.TrimSpace(string(out))
	if err := json.Unmarshal([]byte(trimmed[strings.LastIndexByte(trimmed, '\n')+1:]), &st); err != nil {
		t.Fatalf("pyiceberg %s printed %s: %v", step, out, err)
	}
	return st
}

// inProcess projects OpenLineage events into the test's Neo4j as the consumer would (the gateway's decoder, the
// projector), as principal: the catalog sync's publisher, and the events a test sends beside it.
type inProcess struct {
	t         *testing.T
	dec       *decode.Decoder
	proj      *project.Projector
	principal string
}

func newInProcess(t *testing.T, store *graph.Store, norm *normalize.Normalizer, principal string) *inProcess {
	t.Helper()
	proj, err := project.New(store, norm, noGenerations{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &inProcess{t: t, dec: dec, proj: proj, principal: principal}
}

// Publish implements icebergsync.Publisher.
func (p *inProcess) Publish(ctx context.Context, events []json.RawMessage) ([]string, error) {
	var envs []project.Envelope
	var ids []string
	for _, raw := range events {
		ev, err := p.dec.Decode(raw)
		if err != nil {
			return ids, err
		}
		olevent.ResolveID("", &ev)
		ids = append(ids, ev.ID)
		envs = append(envs, project.Envelope{Event: ev, ReceivedAt: time.Now(), Principal: p.principal, Source: "test"})
	}
	_, err := p.proj.Apply(ctx, envs)
	return ids, err
}

// send projects events given as JSON maps.
func (p *inProcess) send(events ...map[string]any) {
	p.t.Helper()
	var raws []json.RawMessage
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			p.t.Fatal(err)
		}
		raws = append(raws, b)
	}
	if _, err := p.Publish(context.Background(), raws); err != nil {
		p.t.Fatal(err)
	}
}

// data posts one GraphQL request as principal and returns its data, failing the test on any error.
func (w *world) data(principal, q string, vars map[string]any) []byte {
	w.t.Helper()
	var r gqlResponse
	body := w.post(principal, q, vars)
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) > 0 || len(r.Data) == 0 {
		w.t.Fatalf("query as %s: %v %s", principal, err, body)
	}
	return r.Data
}

type noGenerations struct{}

func (noGenerations) Bump(context.Context, []string) error { return nil }

func olFacet(m map[string]any) map[string]any {
	m["_producer"] = "https://example.com/resolvers-test"
	m["_schemaURL"] = "https://openlineage.io/spec/facets/1-0-0/Facet.json"
	return m
}

func olRun(jobNS, job string, ins, outs []map[string]any) map[string]any {
	if ins == nil {
		ins = []map[string]any{}
	}
	if outs == nil {
		outs = []map[string]any{}
	}
	return map[string]any{"eventType": "COMPLETE", "eventTime": time.Now().UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/resolvers-test", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": uuid.NewString()}, "job": map[string]any{"namespace": jobNS, "name": job},
		"inputs": ins, "outputs": outs}
}

type unreportedGap struct {
	Kind                   string
	Message                string
	Nodes                  []string
	Numerator, Denominator *int
}

// unreportedOf are the UNREPORTED_WRITE gaps of a gaps list decoded from an answer.
func unreportedOf(t *testing.T, raw any) []unreportedGap {
	t.Helper()
	b, _ := json.Marshal(raw)
	var all []unreportedGap
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatalf("gaps %s: %v", b, err)
	}
	var out []unreportedGap
	for _, g := range all {
		if g.Kind == string(api.GapUnreportedWrite) {
			out = append(out, g)
		}
	}
	return out
}

// TestUnreportedWriteBeyondLineage (issue 18, ADR 0063): pyiceberg creates <ns>.orders in the fixture catalog and
// appends twice with no OpenLineage event; the catalog sync records both snapshots (projected in-process). A run
// of a job hidden from narrow2 reports writing the first snapshot; a visible job reads the table with column
// lineage customer -> pub.ur_out.c; the table's owners tag customer pii. Past the write grace, every answer that
// includes the table carries its UNREPORTED_WRITE gap: impact, piiFlow, Dataset and Field effectiveTags,
// sensitivity and the pre-release impact report. The admin sees 1 of 2 commits unreported (no instrumented
// job); narrow2, who may see the table but not the hidden job, 2 of 2 (no instrumented job you may see), and no
// answer of narrow2's names the hidden job.
func TestUnreportedWriteBeyondLineage(t *testing.T) {
	norm, err := normalize.New(normalize.Config{DefaultEnv: "default"})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit, canon: norm})
	store := w.fx.Store
	uri := testenv.IcebergURI()
	catNS, err := normalize.CanonicalNamespace(uri)
	if err != nil {
		t.Fatal(err)
	}
	ns := "hw_urw_" + strings.ToLower(testenv.Token(6))
	table := ns + ".orders"
	w.apply(grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role("narrow2"), Privilege: authz.PrivViewLineage,
		On: grant.Securable{Kind: grant.SecPrefix, Namespace: catNS, Name: ns}}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role("narrow2"), Privilege: authz.PrivViewSensitive,
			On: grant.Securable{Kind: grant.SecPrefix, Namespace: catNS, Name: ns}}})

	pyicebergStep(t, "create", ns)
	first := pyicebergStep(t, "append-1", ns)["snapshot"].(string)
	pyicebergStep(t, "append-2", ns)
	client, err := icebergrest.NewClient(t.Context(), icebergrest.ClientConfig{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	pub := newInProcess(t, store, norm, "svc-iceberg")
	rep, err := icebergsync.Sync(t.Context(), client, icebergsync.Catalog{Name: "fx-" + ns, Namespace: catNS},
		icebergsync.GraphState{Store: store}, pub, icebergsync.Options{Root: icebergrest.Namespace{ns}})
	if err != nil || rep.New != 1 || rep.Snapshots != 2 {
		t.Fatalf("sync: %+v %v, want one new table with two snapshots", rep, err)
	}
	hiddenJob := w.hidden("writer")
	pub.send(
		map[string]any{"eventTime": time.Now().UTC().Format(time.RFC3339Nano), "producer": "https://example.com/resolvers-test",
			"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
			"dataset": map[string]any{"namespace": catNS, "name": table, "facets": map[string]any{
				"tags": olFacet(map[string]any{"tags": []any{map[string]any{"key": "pii", "value": "true", "source": "owner", "field": "customer"}}})}}},
		olRun(w.fx.NS, hiddenJob, nil, []map[string]any{{"namespace": catNS, "name": table, "facets": map[string]any{
			"version": olFacet(map[string]any{"datasetVersion": first})}}}),
		olRun(w.fx.NS, "pub.ur_reader", []map[string]any{{"namespace": catNS, "name": table}},
			[]map[string]any{{"namespace": w.fx.NS, "name": "pub.ur_out", "facets": map[string]any{
				"schema": olFacet(map[string]any{"fields": []any{map[string]any{"name": "c", "type": "string"}}}),
				"columnLineage": olFacet(map[string]any{"fields": map[string]any{"c": map[string]any{"inputFields": []any{
					map[string]any{"namespace": catNS, "name": table, "field": "customer",
						"transformations": []any{map[string]any{"type": "DIRECT", "subtype": "IDENTITY"}}}}}}})}}}),
	)
	w.fx.Now = time.Now().UTC().Add(2 * time.Hour) // past the write grace (1 h) of both commits

	var tableID string
	var d struct {
		Dataset struct{ ID string } `json:"dataset"`
	}
	if err := json.Unmarshal(w.data(w.admin, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id } }`,
		map[string]any{"ns": catNS, "n": table}), &d); err != nil || d.Dataset.ID == "" {
		t.Fatalf("the synced table: %v %+v", err, d)
	}
	tableID = d.Dataset.ID

	field := map[string]any{"namespace": catNS, "name": table, "field": "customer"}
	answers := []struct {
		name, q string
		vars    map[string]any
		gaps    func(map[string]any) any
	}{
		{"impact", `query($f: FieldRef!) { impact(field: $f) { direct { field { path } } gaps { kind message nodes numerator denominator } } }`,
			map[string]any{"f": field}, func(m map[string]any) any { return m["impact"].(map[string]any)["gaps"] }},
		{"piiFlow", `query($from: NodeRef) { piiFlow(tag: "pii", from: $from) { reached { field { path } } gaps { kind message nodes numerator denominator } } }`,
			map[string]any{"from": map[string]any{"field": field}}, func(m map[string]any) any { return m["piiFlow"].(map[string]any)["gaps"] }},
		{"Dataset.effectiveTags", `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { effectiveTags { tags { class } gaps { kind message nodes numerator denominator } } } }`,
			map[string]any{"ns": catNS, "n": table}, func(m map[string]any) any {
				return m["dataset"].(map[string]any)["effectiveTags"].(map[string]any)["gaps"]
			}},
		{"Dataset.sensitivity", `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { sensitivity { sensitive gaps { kind message nodes numerator denominator } } } }`,
			map[string]any{"ns": catNS, "n": table}, func(m map[string]any) any {
				return m["dataset"].(map[string]any)["sensitivity"].(map[string]any)["gaps"]
			}},
		{"Field.effectiveTags downstream", `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { fields { path effectiveTags { tags { class source } gaps { kind message nodes numerator denominator } } } } }`,
			map[string]any{"ns": w.fx.NS, "n": "pub.ur_out"}, func(m map[string]any) any {
				fs := m["dataset"].(map[string]any)["fields"].([]any)
				if len(fs) != 1 {
					t.Fatalf("pub.ur_out fields: %v", fs)
				}
				return fs[0].(map[string]any)["effectiveTags"].(map[string]any)["gaps"]
			}},
	}
	for _, who := range []struct {
		principal string
		num       int
		words     string
	}{{w.admin, 1, "1 of the last 2 commits to this table came from no instrumented job (no run"},
		{w.narrow2, 2, "2 of the last 2 commits to this table came from no instrumented job you may see"}} {
		for _, a := range answers {
			body := w.data(who.principal, a.q, a.vars)
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			gaps := unreportedOf(t, a.gaps(m))
			if len(gaps) != 1 || gaps[0].Nodes[0] != tableID || *gaps[0].Numerator != who.num || *gaps[0].Denominator != 2 ||
				!strings.Contains(gaps[0].Message, who.words) {
				t.Errorf("%s as %s: UNREPORTED_WRITE gaps %+v, want one on %s: %q\n%s", a.name, who.principal, gaps, tableID, who.words, body)
			}
			if who.principal == w.narrow2 {
				w.noLeak(a.name+" as narrow2", body)
			}
		}
	}

	// The pre-release report of a candidate removing the column: its change's gaps say the same.
	cat, svc, err := w.deps.services()
	if err != nil {
		t.Fatal(err)
	}
	diff := &api.ReleaseDiff{Added: []*api.DiffNode{}, Removed: []*api.DiffNode{}, Renamed: []*api.RenamedNode{},
		Dependencies: []*api.DependencyChange{}, Columns: []*api.ColumnChange{{UniqueID: "model.shop.orders", Dataset: table,
			Column: "customer", Change: api.DiffRemoved}}}
	for _, who := range []struct {
		principal, words string
	}{{w.admin, "1 of the last 2 commits to this table came from no instrumented job (no run"},
		{w.narrow2, "2 of the last 2 commits to this table came from no instrumented job you may see"}} {
		ctx := authz.WithPrincipal(t.Context(), authz.Principal{Subject: who.principal, Kind: "user"})
		r, err := release.NewAssessor(svc, cat, w.fx.Clock()).Assess(ctx, release.Input{Project: "shop", DatasetNamespace: catNS, Diff: diff})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range r.Changes {
			for _, g := range c.Gaps {
				if g.Kind == api.GapUnreportedWrite {
					got = append(got, g.Message)
				}
			}
		}
		if len(r.Changes) != 1 || len(got) != 1 || !strings.Contains(got[0], who.words) {
			t.Errorf("release impact as %s: UNREPORTED_WRITE gaps %q, want one: %q", who.principal, got, who.words)
		}
		if who.principal == w.narrow2 {
			b, _ := json.Marshal(r)
			w.noLeak("release impact as narrow2", b)
		}
	}
}
