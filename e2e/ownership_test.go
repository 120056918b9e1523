package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 13 item 1: producers change only what they own (docs/adr/0018-producers-change-only-what-they-own.md).
// The attacker is the suite's narrow producer, holding PRODUCE on "<run>-allowed", "<run>-own" and their s3://
// namespaces only (this test writes in "-own", which no other test does, so its replay compares only its own data);
// the victim namespace V is written by the suite's full principal. Each attack goes through the gateway with the
// attacker's API token, and what V's readers see is read back through GraphQL.
func TestProducersChangeOnlyWhatTheyOwn(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	archive := t.TempDir()
	srv := start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+archive)
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api, victimNS: "s3://" + runID + "-victim-" + testenv.Token(4),
		mineNS: "s3://" + runID + "-own", jobNS: runID + "-own"}
	var accepted []string
	// sendAndWait posts and waits until the accepted events are projected.
	sendAndWait := func(t *testing.T, tok string, evs ...map[string]any) {
		t.Helper()
		var ids []string
		for _, ev := range evs {
			code, body := o.post(t, tok, ev)
			if code != http.StatusAccepted {
				t.Fatalf("want 202, got %d %v", code, body)
			}
			ids = append(ids, body["eventId"].(string))
		}
		waitEvents(t, store, ids, projectTimeout)
		accepted = append(accepted, ids...)
	}

	t.Run("RenameOutOfAForeignNamespaceIs403", func(t *testing.T) {
		sendAndWait(t, token, o.run(o.victimNS, nil, []map[string]any{o.ds(o.victimNS, "vrename", nil)}))
		moved := o.ds(o.mineNS, "moved-"+testenv.Token(3), map[string]any{"lifecycleStateChange": map[string]any{
			"lifecycleStateChange": "RENAME", "previousIdentifier": map[string]any{"namespace": o.victimNS, "name": "vrename"}}})
		for _, c := range []struct {
			ev    map[string]any
			field string
		}{
			{o.run(o.jobNS, nil, []map[string]any{o.ds(o.mineNS, "other", nil), moved}),
				"outputs[1].facets.lifecycleStateChange.previousIdentifier.namespace"},
			{o.datasetEvent(moved), "dataset.facets.lifecycleStateChange.previousIdentifier.namespace"},
		} {
			code, body := o.post(t, narrowToken, c.ev)
			if code != http.StatusForbidden {
				t.Fatalf("rename out of %s: want 403, got %d %v", o.victimNS, code, body)
			}
			if e, _ := body["error"].(map[string]any); e["field"] != c.field || e["rule"] != "produce-permission" {
				t.Fatalf("403 must name %s and the rule: %v", c.field, body)
			}
		}
		d := o.dataset(t, o.victimNS, "vrename", "currentNamespace currentName resolvedFrom { name }")
		if d == nil || d["currentNamespace"] != o.victimNS || d["currentName"] != "vrename" || d["resolvedFrom"] != nil {
			t.Fatalf("the victim's dataset moved: %v", d)
		}
	})

	t.Run("InputsLifecycleDocumentationOwnershipAndTagsAreNotApplied", func(t *testing.T) {
		victim := o.ds(o.victimNS, "vmeta", map[string]any{
			"documentation": map[string]any{"description": "the victim's table"},
			"ownership":     map[string]any{"owners": []any{map[string]any{"name": "team:victim", "type": "MAINTAINER"}}},
			"tags":          map[string]any{"tags": []any{map[string]any{"key": "pii", "value": "true", "source": "victim"}}}})
		sendAndWait(t, token, o.run(o.victimNS, nil, []map[string]any{victim, o.ds(o.victimNS, "vold", nil)}))
		forged := o.ds(o.victimNS, "vmeta", map[string]any{
			"documentation":        map[string]any{"description": "overwritten"},
			"ownership":            map[string]any{"owners": []any{map[string]any{"name": "team:attacker"}}},
			"tags":                 map[string]any{"tags": []any{map[string]any{"key": "public", "value": "yes", "source": "attacker"}}},
			"lifecycleStateChange": map[string]any{"lifecycleStateChange": "DROP"}})
		rename := o.ds(o.victimNS, "vnew", map[string]any{"lifecycleStateChange": map[string]any{
			"lifecycleStateChange": "RENAME", "previousIdentifier": map[string]any{"namespace": o.victimNS, "name": "vold"}}})
		sendAndWait(t, narrowToken, o.run(o.jobNS, []map[string]any{forged, rename}, []map[string]any{o.ds(o.mineNS, "sink", nil)}))
		d := o.dataset(t, o.victimNS, "vmeta", "description droppedAt owners { name } tags { name }")
		if d["description"] != "the victim's table" || d["droppedAt"] != nil {
			t.Fatalf("an input changed the victim's description or dropped it: %v", d)
		}
		if s := jsonOf(d["owners"]) + jsonOf(d["tags"]); s != `[{"name":"team:victim"}][{"name":"pii=true"}]` {
			t.Fatalf("an input changed the victim's owners or tags: %s", s)
		}
		old := o.dataset(t, o.victimNS, "vold", "currentName resolvedFrom { name }")
		if old == nil || old["currentName"] != "vold" || old["resolvedFrom"] != nil {
			t.Fatalf("an input renamed the victim's dataset: %v", old)
		}
	})

	t.Run("SymlinkIntoAForeignNamespaceIsNotBound", func(t *testing.T) {
		squat := "vsquat-" + testenv.Token(3)
		squatter := o.ds(o.mineNS, "squatter-"+testenv.Token(3), map[string]any{"symlinks": map[string]any{
			"identifiers": []any{map[string]any{"namespace": o.victimNS, "name": squat, "type": "TABLE"}}}})
		sendAndWait(t, narrowToken, o.run(o.jobNS, nil, []map[string]any{squatter}))
		sendAndWait(t, token, o.run(o.victimNS, nil, []map[string]any{o.ds(o.victimNS, squat, nil)}))
		d := o.dataset(t, o.victimNS, squat, "currentNamespace currentName resolvedFrom { name }")
		if d == nil || d["currentNamespace"] != o.victimNS || d["currentName"] != squat || d["resolvedFrom"] != nil {
			t.Fatalf("the rightful producer's dataset is the attacker's: %v", d)
		}
		gaps := o.gql(t, `query($ns: String!, $n: String!) { lineage(start: {dataset: {namespace: $ns, name: $n}}, depth: 1) { gaps { kind message } } }`,
			map[string]any{"ns": o.victimNS, "n": squat})
		if s := jsonOf(gaps["lineage"]); !strings.Contains(s, "UNRESOLVED_IDENTITY") {
			t.Fatalf("the refused symlink is not shown as an unresolved identity: %s", s)
		}
	})

	t.Run("ColumnLineageAndInputSchemaAreObservedOnRead", func(t *testing.T) {
		owned := o.ds(o.victimNS, "vsrc", map[string]any{"schema": schemaFacet("id", "amount")})
		sendAndWait(t, token, o.run(o.victimNS, nil, []map[string]any{owned}))
		read := o.ds(o.victimNS, "vsrc", map[string]any{"schema": schemaFacet("id")}) // would close amount
		out := o.ds(o.mineNS, "vout-"+testenv.Token(3), map[string]any{"schema": schemaFacet("id", "x"),
			"columnLineage": map[string]any{"fields": map[string]any{
				"id": map[string]any{"inputFields": []any{map[string]any{"namespace": o.victimNS, "name": "vsrc", "field": "id"}}},
				"x":  map[string]any{"inputFields": []any{map[string]any{"namespace": o.victimNS, "name": "vsrc", "field": "injected_col"}}}}}})
		sendAndWait(t, narrowToken, o.run(o.jobNS, []map[string]any{read}, []map[string]any{out}))
		if got := o.fieldPaths(t, o.victimNS, "vsrc", ""); got != "amount,id,injected_col" {
			t.Fatalf("fields: %s, want amount,id (the owners') and injected_col (observed on read)", got)
		}
		if got := o.fieldPaths(t, o.victimNS, "vsrc", "(observedOnRead: false)"); got != "amount,id" {
			t.Fatalf("fields the owners reported: %s, want amount,id", got)
		}
		if got := o.fieldPaths(t, o.victimNS, "vsrc", "(observedOnRead: true)"); got != "injected_col" {
			t.Fatalf("fields observed on read: %s, want injected_col", got)
		}
		g := o.gql(t, `query($ns: String!, $n: String!) { lineage(start: {field: {namespace: $ns, name: $n, field: "id"}}, direction: UPSTREAM, depth: 1, granularity: FIELD) { nodes { __typename ... on Field { path dataset { name } } } } }`,
			map[string]any{"ns": o.mineNS, "n": out["name"]})
		if s := jsonOf(g["lineage"]); !strings.Contains(s, `"dataset":{"name":"vsrc"},"path":"id"`) {
			t.Fatalf("the column edge from the real input column is gone: %s", s)
		}
	})

	t.Run("ASourceNoJobWritesGetsTheSchemaItsReadersSaw", func(t *testing.T) {
		src := o.ds(o.mineNS, "source-"+testenv.Token(3), map[string]any{"schema": schemaFacet("a", "b")})
		sendAndWait(t, narrowToken, o.run(o.jobNS, []map[string]any{src}, []map[string]any{o.ds(o.mineNS, "derived", nil)}))
		if got := o.fieldPaths(t, o.mineNS, src["name"].(string), ""); got != "a,b" {
			t.Fatalf("source fields %s, want a,b", got)
		}
		if got := o.fieldPaths(t, o.mineNS, src["name"].(string), "(observedOnRead: true)"); got != "a,b" {
			t.Fatalf("source fields observed on read %s, want a,b", got)
		}
	})

	// What an event may change was decided when it was accepted and archived with it: replay rebuilds the same graph.
	t.Run("ReplayFromTheArchiveGivesTheSameGraph", func(t *testing.T) {
		scopes := []scope{{jobNS: o.jobNS, dsNS: o.mineNS}, {jobNS: o.victimNS, dsNS: o.victimNS}}
		dumpAll := func() string { return dump(t, store, scopes[0]) + dump(t, store, scopes[1]) }
		projected := dumpAll()
		srv.signal(syscall.SIGTERM)
		if err := srv.wait(t, 30*time.Second); err != nil {
			t.Fatalf("SIGTERM must stop serve cleanly: %v", err)
		}
		for _, sc := range scopes {
			erase(t, store, sc, accepted)
		}
		rp := start(t, kc, nil, "replay", "--dir="+archive)
		if err := rp.wait(t, 60*time.Second); err != nil {
			t.Fatalf("replay: %v", err)
		}
		if got := dumpAll(); got != projected {
			t.Fatalf("replay from the archive differs:\n%s", diff(got, projected))
		}
	})
}

// ownTest builds and sends the events of TestProducersChangeOnlyWhatTheyOwn.
type ownTest struct {
	t                       *testing.T
	api                     string
	victimNS, mineNS, jobNS string
}

// run is a COMPLETE RunEvent of a fresh run of job "job" in jobNS.
func (o *ownTest) run(jobNS string, ins, outs []map[string]any) map[string]any {
	return map[string]any{"eventType": "COMPLETE", "eventTime": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": uuid.NewString()}, "job": map[string]any{"namespace": jobNS, "name": "job"},
		"inputs": orEmpty(ins), "outputs": orEmpty(outs)}
}

func (o *ownTest) datasetEvent(d map[string]any) map[string]any {
	return map[string]any{"eventTime": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
		"dataset": d}
}

func (o *ownTest) ds(ns, name string, facets map[string]any) map[string]any {
	d := map[string]any{"namespace": ns, "name": name}
	if facets != nil {
		for _, f := range facets {
			f.(map[string]any)["_producer"] = "https://example.com/e2e"
			f.(map[string]any)["_schemaURL"] = "https://openlineage.io/spec/facets/1-0-0/Facet.json"
		}
		d["facets"] = facets
	}
	return d
}

func schemaFacet(paths ...string) map[string]any {
	var fields []any
	for _, p := range paths {
		fields = append(fields, map[string]any{"name": p, "type": "string"})
	}
	return map[string]any{"fields": fields}
}

func orEmpty(ds []map[string]any) []map[string]any {
	if ds == nil {
		return []map[string]any{}
	}
	return ds
}

func (o *ownTest) post(t *testing.T, tok string, ev map[string]any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(ev)
	req, _ := http.NewRequest(http.MethodPost, "http://"+o.api+"/api/v1/lineage", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// gql runs a query with the suite's full token and returns its data; errors fail the test.
func (o *ownTest) gql(t *testing.T, q string, vars map[string]any) map[string]any {
	t.Helper()
	data, errs := o.gqlErrs(t, q, vars)
	if len(errs) > 0 {
		t.Fatalf("graphql: %v", errs)
	}
	return data
}

// gqlErrs runs a query with the suite's full token and returns its data and errors.
func (o *ownTest) gqlErrs(t *testing.T, q string, vars map[string]any) (map[string]any, []any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+o.api+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("graphql: %v", err)
	}
	return out.Data, out.Errors
}

func (o *ownTest) dataset(t *testing.T, ns, name, selection string) map[string]any {
	t.Helper()
	data := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { `+selection+` } }`,
		map[string]any{"ns": ns, "n": name})
	d, _ := data["dataset"].(map[string]any)
	return d
}

// fieldPaths lists the sorted paths of dataset(ns, name).fields<args>, comma-separated.
func (o *ownTest) fieldPaths(t *testing.T, ns, name, args string) string {
	t.Helper()
	d := o.dataset(t, ns, name, "fields"+args+" { path }")
	if d == nil {
		t.Fatalf("dataset %s %s not found", ns, name)
	}
	var paths []string
	for _, f := range d["fields"].([]any) {
		paths = append(paths, f.(map[string]any)["path"].(string))
	}
	slices.Sort(paths)
	return strings.Join(paths, ",")
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Events that arrive straight on an external Kafka topic bound to a principal obey the same rules: a rename out
// of a namespace the principal does not own is quarantined naming the field, and a symlink into one is not bound.
func TestExternalTopicProducerChangesOnlyWhatItOwns(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	ext := "t." + testenv.Token(4) + ".ol-narrow"
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_KAFKA_EXTERNAL_TOPICS=" + ext + "=" + runID + "-narrow-producer"},
		"serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api, victimNS: "s3://" + runID + "-victim-" + testenv.Token(4),
		mineNS: "s3://" + runID + "-allowed", jobNS: runID + "-allowed"}
	rename := o.run(o.jobNS, nil, []map[string]any{o.ds(o.mineNS, "moved-"+testenv.Token(3), map[string]any{
		"lifecycleStateChange": map[string]any{"lifecycleStateChange": "RENAME",
			"previousIdentifier": map[string]any{"namespace": o.victimNS, "name": "vrename"}}})})
	squat := "vsquat-" + testenv.Token(3)
	symlink := o.run(o.jobNS, nil, []map[string]any{o.ds(o.mineNS, "squatter-"+testenv.Token(3), map[string]any{
		"symlinks": map[string]any{"identifiers": []any{map[string]any{"namespace": o.victimNS, "name": squat, "type": "TABLE"}}}})})
	raw := [][]byte{[]byte(jsonOf(rename)), []byte(jsonOf(symlink))}
	p, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Send(context.Background(), []kafkaio.Message{{Topic: ext, Value: raw[0]}, {Topic: ext, Value: raw[1]}}); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, store, []string{resolveID(t, raw[1])}, projectTimeout)
	reason := waitQuarantined(t, store, kafkaio.RejectedEventID(raw[0]))
	if !strings.Contains(reason, "outputs[0].facets.lifecycleStateChange.previousIdentifier.namespace") {
		t.Fatalf("the rename was quarantined without naming its field: %q", reason)
	}
	data, errs := o.gqlErrs(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { currentNamespace currentName } }`,
		map[string]any{"ns": o.victimNS, "n": squat})
	if s := jsonOf(errs); data["dataset"] != nil || !strings.Contains(s, "NOT_FOUND") {
		t.Fatalf("a symlink from an external topic claimed %s %s: %v %s", o.victimNS, squat, data, s)
	}
}
