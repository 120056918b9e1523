package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 14 item 1: an identifier Headwater cannot canonicalise must never vanish. For every normalisation rule
// (ingest/normalize/errors.go), one event through the gateway states a dataset that breaks it (as an output, an
// input, a symlink or a column-lineage input), and the canonicalised cases (an absolute DuckDB path, as
// dbt-duckdb sends it, SQLite, in-memory DuckDB, an ordinary one) are projected. Since issue 13 item 7 the gateway
// runs the projector's rules, so a breaking identifier is refused with the field and the rule and quarantined where
// its producer sees it: no rule lets an identifier be accepted and then dropped.
func TestEveryIdentityRuleCanonicalisesOrIsNamed(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api, jobNS: runID + "-rules-" + testenv.Token(4)}
	good := "s3://e2e-" + o.jobNS + "-ok"
	duck := "duckdb:///tmp/" + o.jobNS + "/warehouse.duckdb"
	cases := []struct {
		rule   string // "" = canonicalised
		ns, nm string
		wantNS string // canonical namespace when canonicalised
	}{
		{"", good, "orders", good},
		{"", duck, "warehouse.main.orders", duck},
		{"", "DUCKDB://:memory:", "memory.main.t", "duckdb://:memory:"},
		{"", "sqlite:///var/lib/" + o.jobNS + "/app.db", "main.users", "sqlite:///var/lib/" + o.jobNS + "/app.db"},
		{normalize.RuleEmpty, "//", o.jobNS + "-empty", ""},
		{normalize.RuleWhitespace, "s3://e2e-" + o.jobNS + "-ws", "x ", ""},
		{normalize.RuleControl, "s3://e2e-" + o.jobNS + "-ctl", "a\u0001b", ""},
		{normalize.RuleInvalidURI, "postgres://e2e " + o.jobNS, "t", ""},
		{normalize.RuleInvalidPort, "postgres://e2e-" + o.jobNS + ":70000", "t", ""},
		{normalize.RuleNoHost, "postgres://", o.jobNS + "-nohost", ""},
	}
	// Every rule of the projector's canonicalisation also runs in the gateway (issue 13 item 7), so an identifier
	// that breaks one is refused before the 202 with the field and the rule, and quarantined where its producer
	// can see it; one it canonicalises is projected. Each case is its own event, so each answer is about it alone.
	for _, c := range cases {
		out := map[string]any{"namespace": c.ns, "name": c.nm}
		checkIdentityCase(t, o, store, c.rule, "outputs[0].", o.run(o.jobNS, nil, []map[string]any{out}), c.wantNS, c.nm)
	}
	// The same hole in the other places an event names a dataset: an input, a symlink, a column-lineage input.
	okOut := func(facets map[string]any) []map[string]any {
		return []map[string]any{{"namespace": good, "name": "orders-" + testenv.Token(3), "facets": facets}}
	}
	symlinks := map[string]any{"symlinks": map[string]any{"_producer": "https://example.com/e2e",
		"_schemaURL":  "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
		"identifiers": []any{map[string]any{"namespace": "postgres://e2e-" + o.jobNS + ":0", "name": "sym", "type": "TABLE"}}}}
	columns := map[string]any{"columnLineage": map[string]any{"_producer": "https://example.com/e2e",
		"_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
		"fields": map[string]any{"a": map[string]any{"inputFields": []any{
			map[string]any{"namespace": "redshift://", "name": o.jobNS + "-col", "field": "a"}}}}}}
	checkIdentityCase(t, o, store, normalize.RuleNoHost, "inputs[0].",
		o.run(o.jobNS, []map[string]any{{"namespace": "mysql://", "name": o.jobNS + "-input"}}, nil), "", "")
	checkIdentityCase(t, o, store, normalize.RuleInvalidPort, "outputs[0].facets.symlinks.",
		o.run(o.jobNS, nil, okOut(symlinks)), "", "")
	checkIdentityCase(t, o, store, normalize.RuleNoHost, "outputs[0].facets.columnLineage.",
		o.run(o.jobNS, nil, okOut(columns)), "", "")
}

// checkIdentityCase sends ev and checks that it is either refused with rule (naming a field under fieldPrefix)
// and quarantined, visible to its producer with that rule, or, for rule "", projected with wantNS/name among
// the run's outputs. Nothing in between: accepted and not projected would be the silent loss.
func checkIdentityCase(t *testing.T, o *ownTest, store *graph.Store, rule, fieldPrefix string, ev map[string]any, wantNS, name string) {
	t.Helper()
	code, body := o.post(t, token, ev)
	id, _ := body["eventId"].(string)
	if rule != "" {
		e, _ := body["error"].(map[string]any)
		if code != 400 || e["rule"] != rule || !strings.HasPrefix(fmt.Sprint(e["field"]), fieldPrefix) {
			t.Errorf("rule %s: POST answered %d %v, want 400 naming %s... and the rule", rule, code, body, fieldPrefix)
			return
		}
		waitQuarantined(t, store, id)
		if st := eventState(t, o.api, token, id); st["state"] != "QUARANTINED" || st["rule"] != rule {
			t.Errorf("rule %s: event(id) of the refusal: %v", rule, st)
		}
		return
	}
	if code != 202 {
		t.Errorf("%s %s: POST %d %v, want 202 (it canonicalises)", wantNS, name, code, body)
		return
	}
	waitEvents(t, store, []string{id}, projectTimeout)
	run := ev["run"].(map[string]any)["runId"].(string)
	r := o.gql(t, `query($id: ID!) { run(id: $id) { outputs { dataset { namespace name } } } }`,
		map[string]any{"id": run})["run"].(map[string]any)
	for _, x := range r["outputs"].([]any) {
		if d := x.(map[string]any)["dataset"].(map[string]any); d["namespace"] == wantNS && d["name"] == name {
			return
		}
	}
	t.Errorf("%s %s: not among the run's outputs %v", wantNS, name, r["outputs"])
}

// event(id){unresolvedIdentities} is answered to the producer that sent the event (it names only what that
// producer stated); another principal, even one that may see the event's run, learns nothing of it.
func TestUnresolvedIdentitiesOnlyForTheProducerThatSentThem(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api}
	// a symlink into a namespace the narrow producer does not own is not bound: an unresolved identity (ADR 0018)
	foreign := map[string]any{"namespace": "s3://" + runID + "-readable", "name": "hidden-" + testenv.Token(4), "type": "TABLE"}
	out := map[string]any{"namespace": "s3://" + runID + "-allowed", "name": "out-" + testenv.Token(4), "facets": map[string]any{
		"symlinks": map[string]any{"_producer": "https://example.com/e2e",
			"_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json", "identifiers": []any{foreign}}}}
	ev := o.run(runID+"-allowed", nil, []map[string]any{out})
	code, body := o.post(t, narrowToken, ev)
	if code != 202 {
		t.Fatalf("POST: %d %v", code, body)
	}
	id := body["eventId"].(string)
	waitEvents(t, store, []string{id}, projectTimeout)
	q := `query($id: ID!) { event(id: $id) { state unresolvedIdentities { namespace name } } }`
	ask := func(tok string) map[string]any {
		return gql(t, api, tok, q, map[string]any{"id": id})["event"].(map[string]any)
	}
	if e := ask(narrowToken); e["state"] != "PROJECTED" || len(e["unresolvedIdentities"].([]any)) != 1 {
		t.Fatalf("the producer that sent it: %v, want PROJECTED naming the one unresolved identity", e)
	}
	// event ids are scoped by principal (issue 13 item 5): anyone else asks about an event of its own, which
	// does not exist
	if e := ask(readerToken); e["state"] != "PENDING" || len(e["unresolvedIdentities"].([]any)) != 0 {
		t.Fatalf("reader: %v, want PENDING with no unresolved identities", e)
	}
}
