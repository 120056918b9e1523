package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

const (
	setTagsM = `mutation($ns: String!, $name: String!, $field: String, $tags: [TagInput!]!) {
  setTags(dataset: {namespace: $ns, name: $name}, field: $field, tags: $tags, reason: "e2e") { accepted eventId } }`
	removeTagsM = `mutation($ns: String!, $name: String!, $field: String, $tags: [TagInput!]!) {
  removeTags(dataset: {namespace: $ns, name: $name}, field: $field, tags: $tags) { accepted eventId } }`
	blockM = `mutation($ns: String!, $name: String!, $field: String!, $reason: String!) {
  block(target: {dataset: {namespace: $ns, name: $name}, field: $field}, reason: $reason) { accepted eventId } }`
	unblockM = `mutation($ns: String!, $name: String!, $field: String!) {
  unblock(target: {dataset: {namespace: $ns, name: $name}, field: $field}) { accepted eventId } }`
	fieldTagsQ  = `query($ns: String!, $name: String!) { dataset(namespace: $ns, name: $name) { tags { name source } fields { path tags { name } } } }`
	eventStateQ = `query($id: ID!) { event(id: $id) { state } }`
)

// mutate runs one governance mutation as tok and returns its event id, after waiting for it to be projected.
func (w *piiWorld) mutate(t *testing.T, tok, q, op string, vars map[string]any) string {
	t.Helper()
	d, errs := gqlErrs(t, w.api, tok, q, vars)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", op, errs)
	}
	var ans struct {
		Accepted bool
		EventID  string
	}
	b, _ := json.Marshal(d[op])
	if err := json.Unmarshal(b, &ans); err != nil || !ans.Accepted || ans.EventID == "" {
		t.Fatalf("%s: answer %s", op, b)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		d, errs := gqlErrs(t, w.api, tok, eventStateQ, map[string]any{"id": ans.EventID})
		if b, _ := json.Marshal(d); len(errs) == 0 && strings.Contains(string(b), `"PROJECTED"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: event %s not projected within 90 s", op, ans.EventID)
		}
	}
	w.ids = append(w.ids, ans.EventID)
	return ans.EventID
}

// fieldTags renders a dataset's fields' tags as "path:tag,tag path:..." in the order answered.
func (w *piiWorld) fieldTags(t *testing.T, name string) string {
	t.Helper()
	d, errs := gqlErrs(t, w.api, token, fieldTagsQ, map[string]any{"ns": w.sc.dsNS, "name": name})
	if len(errs) > 0 {
		t.Fatalf("fields: %v", errs)
	}
	var ans struct {
		Dataset struct {
			Fields []struct {
				Path string
				Tags []struct{ Name string }
			}
		}
	}
	b, _ := json.Marshal(d)
	_ = json.Unmarshal(b, &ans)
	var out []string
	for _, f := range ans.Dataset.Fields {
		var tags []string
		for _, tg := range f.Tags {
			tags = append(tags, tg.Name)
		}
		out = append(out, f.Path+":"+strings.Join(tags, ","))
	}
	return strings.Join(out, " ")
}

// TestGovernanceMutationsThroughTheGateway (ADR 0067): setTags, removeTags, block and unblock as GraphQL
// mutations against the real serve (gateway, Kafka, consumer, Neo4j). customers.email is copied into copy.email
// (DIRECT/IDENTITY). setTags tags customers.email pii: Field.tags shows it and piiFlow reaches copy.email;
// block on copy.email stops the flow there (BLOCKED "by <the admin>: <why>"), unblock restores it; removeTags
// removes the tag (no origin any more). A reader without MANAGE_TAGS is FORBIDDEN naming the rule. The
// mutations' events are in the archive: a replay of it into an erased graph gives the same graph.
func TestGovernanceMutationsThroughTheGateway(t *testing.T) {
	archive := t.TempDir()
	w := startPii(t, "--archive-dir="+archive)
	m := time.Minute
	w.taggedAt(t, 1*m, "customers", []string{"id", "email"})
	w.run(t, "copy", 3*m, []string{"customers"}, "copy", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	waitEvents(t, testenv.Store(t), w.ids, 90*time.Second)
	if got := w.fieldTags(t, "customers"); got != "email: id:" {
		t.Fatalf("before setTags: %s", got)
	}
	ds := func(name, field string, tags ...map[string]any) map[string]any {
		v := map[string]any{"ns": w.sc.dsNS, "name": name, "field": field}
		if tags != nil {
			v["tags"] = tags
		}
		return v
	}
	now := func() time.Duration { return time.Since(w.t0) }

	// a reader without MANAGE_TAGS is refused, naming the rule, and nothing changes
	_, errs := gqlErrs(t, w.api, w.narrow, setTagsM, ds("customers", "email", map[string]any{"key": "pii", "value": "true"}))
	want := fmt.Sprintf("governance-manage-tags: MANAGE_TAGS on %s customers is required", w.sc.dsNS)
	if len(errs) != 1 || errs[0]["message"] != want || errs[0]["extensions"].(map[string]any)["code"] != "FORBIDDEN" {
		t.Fatalf("setTags without MANAGE_TAGS: %v, want FORBIDDEN %q", errs, want)
	}

	w.mutate(t, token, setTagsM, "setTags", ds("customers", "email", map[string]any{"key": "pii", "value": "true"}))
	if got := w.fieldTags(t, "customers"); got != "email:email:pii=true id:" {
		t.Fatalf("after setTags: Field.tags %s", got)
	}
	d, _ := gqlErrs(t, w.api, token, fieldTagsQ, ds("customers", ""))
	if b, _ := json.Marshal(d); !strings.Contains(string(b), `"source":"headwater:`+subject+`"`) {
		t.Fatalf("the tag's source should name the mutation's principal: %s", b)
	}
	f, raw := w.flow(t, token, "pii", now())
	if got := fmt.Sprint(f.reached()); got != "map[copy.email:CARRIED IDENTITY]" {
		t.Fatalf("after setTags: piiFlow reached %s\n%s", got, raw)
	}

	w.mutate(t, token, blockM, "block", map[string]any{"ns": w.sc.dsNS, "name": "copy", "field": "email", "reason": "masked in the view"})
	f, raw = w.flow(t, token, "pii", now())
	if len(f.reached()) != 0 || !strings.Contains(raw, `"message":"BLOCKED by `+subject+`: masked in the view","next":{"dataset":{"name":"copy"},"path":"email"},"reason":"BLOCKED"`) {
		t.Fatalf("after block: piiFlow %s", raw)
	}
	w.mutate(t, token, unblockM, "unblock", map[string]any{"ns": w.sc.dsNS, "name": "copy", "field": "email"})
	f, raw = w.flow(t, token, "pii", now())
	if got := fmt.Sprint(f.reached()); got != "map[copy.email:CARRIED IDENTITY]" || strings.Contains(raw, "BLOCKED") {
		t.Fatalf("after unblock: piiFlow reached %s\n%s", got, raw)
	}

	w.mutate(t, token, removeTagsM, "removeTags", ds("customers", "email", map[string]any{"key": "pii"}))
	if got := w.fieldTags(t, "customers"); got != "email: id:" {
		t.Fatalf("after removeTags: Field.tags %s", got)
	}
	f, raw = w.flow(t, token, "pii", now())
	if len(f.Origins) != 0 || len(f.reached()) != 0 {
		t.Fatalf("after removeTags: piiFlow %s", raw)
	}

	// the archive has the mutations' events: replayed into an erased graph, it gives the same graph
	store := testenv.Store(t)
	projected := dump(t, store, w.sc)
	for _, key := range []string{"tagHistory", "blockHistory"} {
		if !strings.Contains(projected, key) {
			t.Fatalf("the projected graph has no %s:\n%s", key, projected)
		}
	}
	erase(t, store, w.sc, w.ids)
	rp := start(t, testenv.KafkaConfig(t), nil, "replay", "--dir="+archive)
	if err := rp.wait(t, 120*time.Second); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if got := dump(t, store, w.sc); got != projected {
		t.Fatalf("replay from the archive differs:\n%s", diff(got, projected))
	}
}
