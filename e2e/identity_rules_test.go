package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 14 item 1: an identifier Headwater cannot canonicalise must never vanish. For every normalisation rule
// (ingest/normalize/errors.go), one event through the gateway states an output that breaks it, beside outputs
// that are canonicalised (an absolute DuckDB path, as dbt-duckdb sends it, and an ordinary one). Each output is
// either projected as the run's output or answered by event(id) as an unresolved identity naming its rule; the
// gateway may also refuse the whole event with the rule named (still not silent). No rule drops an identifier, and
// neither does an input, a symlink or a column-lineage input that breaks one.
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
	var outs []map[string]any
	for _, c := range cases {
		outs = append(outs, map[string]any{"namespace": c.ns, "name": c.nm})
	}
	// The same hole in the other places an event names a dataset: an input, a symlink, a column-lineage input.
	badInput := map[string]any{"namespace": "mysql://", "name": o.jobNS + "-input"}
	badSymlink := map[string]any{"namespace": "postgres://e2e-" + o.jobNS + ":0", "name": "sym", "type": "TABLE"}
	badColumn := map[string]any{"namespace": "redshift://", "name": o.jobNS + "-col", "field": "a"}
	outs[0]["facets"] = map[string]any{
		"symlinks": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
			"identifiers": []any{badSymlink}},
		"columnLineage": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
			"fields": map[string]any{"a": map[string]any{"inputFields": []any{badColumn}}}},
	}
	others := []struct {
		rule, ns, nm string
	}{
		{normalize.RuleNoHost, "mysql://", o.jobNS + "-input"},
		{normalize.RuleInvalidPort, badSymlink["namespace"].(string), "sym"},
		{normalize.RuleNoHost, "redshift://", o.jobNS + "-col"},
	}
	ev := o.run(o.jobNS, []map[string]any{badInput}, outs)
	code, body := o.post(t, token, ev)
	if code != 202 {
		t.Fatalf("POST: %d %v (a refusal would have to name the rule; this test expects acceptance)", code, body)
	}
	id := body["eventId"].(string)
	waitEvents(t, store, []string{id}, projectTimeout)
	st := o.gql(t, `query($id: ID!) { event(id: $id) { state unresolvedIdentities { namespace name reason } } }`,
		map[string]any{"id": id})["event"].(map[string]any)
	if st["state"] != "PROJECTED" {
		t.Fatalf("event state %v, want PROJECTED", st["state"])
	}
	unres := map[string]string{}
	for _, x := range st["unresolvedIdentities"].([]any) {
		u := x.(map[string]any)
		unres[u["namespace"].(string)+"\x00"+u["name"].(string)] = u["reason"].(string)
	}
	run := ev["run"].(map[string]any)["runId"].(string)
	r := o.gql(t, `query($id: ID!) { run(id: $id) { outputs { dataset { namespace name } } } }`,
		map[string]any{"id": run})["run"].(map[string]any)
	written := map[string]bool{}
	for _, x := range r["outputs"].([]any) {
		d := x.(map[string]any)["dataset"].(map[string]any)
		written[d["namespace"].(string)+"\x00"+d["name"].(string)] = true
	}
	for _, c := range cases {
		key := c.ns + "\x00" + c.nm
		if c.rule == "" {
			if !written[c.wantNS+"\x00"+c.nm] {
				t.Errorf("%q %q: not among the run's outputs %v", c.ns, c.nm, written)
			}
			continue
		}
		reason, ok := unres[key]
		if !ok {
			t.Errorf("rule %s: %q %q neither projected nor named by event(id) (unresolved: %v): dropped silently",
				c.rule, c.ns, c.nm, unres)
			continue
		}
		if !strings.Contains(reason, "(rule "+c.rule+")") {
			t.Errorf("rule %s: %q %q named with reason %q, which does not name the rule", c.rule, c.ns, c.nm, reason)
		}
	}
	for _, c := range others {
		reason, ok := unres[c.ns+"\x00"+c.nm]
		if !ok || !strings.Contains(reason, "(rule "+c.rule+")") {
			t.Errorf("rule %s: %q %q (not an output) named with %q (present: %v)", c.rule, c.ns, c.nm, reason, ok)
		}
	}
	if len(unres) != 9 {
		t.Errorf("event(id) names %d unresolved identities, want 9: %v", len(unres), unres)
	}
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
	jobNS := runID + "-readable" // the reader principal may describe it (harness_test.go policy)
	bad := map[string]any{"namespace": "postgres://", "name": "hidden-" + testenv.Token(4)}
	ev := o.run(jobNS, nil, []map[string]any{{"namespace": "s3://" + runID + "-readable", "name": "out-" + testenv.Token(4)}, bad})
	code, body := o.post(t, token, ev)
	if code != 202 {
		t.Fatalf("POST: %d %v", code, body)
	}
	id := body["eventId"].(string)
	waitEvents(t, store, []string{id}, projectTimeout)
	q := `query($id: ID!) { event(id: $id) { state unresolvedIdentities { namespace name } } }`
	ask := func(tok string) map[string]any {
		return gql(t, api, tok, q, map[string]any{"id": id})["event"].(map[string]any)
	}
	if e := ask(token); e["state"] != "PROJECTED" || len(e["unresolvedIdentities"].([]any)) != 1 {
		t.Fatalf("the producer that sent it: %v, want PROJECTED naming the one unresolved identity", e)
	}
	// event ids are scoped by principal (issue 13 item 5): anyone else asks about an event of its own, which
	// does not exist
	if e := ask(readerToken); e["state"] != "PENDING" || len(e["unresolvedIdentities"].([]any)) != 0 {
		t.Fatalf("reader: %v, want PENDING with no unresolved identities", e)
	}
}
