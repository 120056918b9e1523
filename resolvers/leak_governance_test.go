package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/ingest/gateway"
)

// The leak suite's cases of the governance mutations (ADR 0067): setTags, removeTags, block and unblock on a
// hidden dataset, with an edge from a hidden field through a hidden job, and on a visible one without
// MANAGE_TAGS. The events the mutations hand to the gateway are recorded here (the path through the real gateway
// is e2e's TestGovernanceMutationsThroughTheGateway).

// sentEvents records what the mutations submitted and accepts it.
type sentEvents struct {
	mu     sync.Mutex
	events [][]byte
}

func (s *sentEvents) SubmitWith(_ context.Context, evs [][]byte, _ gateway.Guard) (gateway.Submission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, evs...)
	var sent struct{ EventID string } // the mutation names its event (ADR 0088): the gateway keeps that id
	_ = json.Unmarshal(evs[0], &sent)
	return gateway.Submission{Accepted: true, Results: []gateway.Result{{Status: "accepted", EventID: sent.EventID}}}, nil
}

func (s *sentEvents) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

const (
	leakSetTagsQ = `mutation($ns: String!, $name: String!, $field: String) {
  setTags(dataset: {namespace: $ns, name: $name}, field: $field, tags: [{key: "pii", value: "true"}]) { accepted eventId } }`
	leakRemoveTagsQ = `mutation($ns: String!, $name: String!) {
  removeTags(dataset: {namespace: $ns, name: $name}, tags: [{key: "pii"}]) { accepted eventId } }`
	leakBlockQ = `mutation($ns: String!, $name: String!, $field: String!) {
  block(target: {dataset: {namespace: $ns, name: $name}, field: $field}, reason: "masked") { accepted eventId } }`
	leakUnblockQ = `mutation($ns: String!, $name: String!, $field: String!) {
  unblock(target: {dataset: {namespace: $ns, name: $name}, field: $field}) { accepted eventId } }`
	leakBlockEdgeQ = `mutation($ns: String!, $name: String!, $from: String!, $job: String!) {
  block(target: {dataset: {namespace: $ns, name: $name}, field: "c",
    edge: {job: {namespace: $ns, name: $job}, from: {namespace: $ns, name: $from, field: "c"}}}, reason: "r") { accepted eventId } }`
)

// governanceOperations are the mutations TestLeakSuite calls as every principal.
func (w *world) governanceOperations() map[string]struct {
	q    string
	vars map[string]any
} {
	type op = struct {
		q    string
		vars map[string]any
	}
	ns, h1, job := w.fx.NS, w.secrets[0], w.secrets[2]
	return map[string]op{
		"setTags hidden":           {leakSetTagsQ, map[string]any{"ns": ns, "name": h1}},
		"setTags hidden field":     {leakSetTagsQ, map[string]any{"ns": ns, "name": h1, "field": "c"}},
		"setTags visible":          {leakSetTagsQ, map[string]any{"ns": ns, "name": "pub.mid", "field": "c"}},
		"removeTags hidden":        {leakRemoveTagsQ, map[string]any{"ns": ns, "name": h1}},
		"block hidden":             {leakBlockQ, map[string]any{"ns": ns, "name": h1, "field": "c"}},
		"unblock hidden":           {leakUnblockQ, map[string]any{"ns": ns, "name": h1, "field": "c"}},
		"block edge from hidden":   {leakBlockEdgeQ, map[string]any{"ns": ns, "name": "pub.behind", "from": h1, "job": "pub.j3"}},
		"block edge hidden job":    {leakBlockEdgeQ, map[string]any{"ns": ns, "name": "pub.out", "from": "pub.mid", "job": job}},
		"block visible no grant":   {leakBlockQ, map[string]any{"ns": ns, "name": "pub.out", "field": "c"}},
		"unblock visible no grant": {leakUnblockQ, map[string]any{"ns": ns, "name": "pub.out", "field": "c"}},
	}
}

// TestGovernanceMutationOnHiddenIsNotFound: each mutation on a dataset the caller may not describe answers
// byte-identically to one on a dataset that does not exist (NOT_FOUND, naming neither), nothing is sent, and the
// refusal is audited (DENY, operation `graphql setTags(...)`); on a visible dataset without MANAGE_TAGS it is
// FORBIDDEN naming the rule; the admin (MANAGE_GRANTS on everything implies MANAGE_TAGS) is accepted.
func TestGovernanceMutationOnHiddenIsNotFound(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	// narrow may manage the tags of what it sees (pub.*), so the edge cases get past the target's MANAGE_TAGS
	w.apply(grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role("narrow"), Privilege: authz.PrivManageTags, On: w.pubPrefix()}})
	if err := w.policy.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	hidden := w.secrets[0]
	missing := "sec.missing" + strings.Repeat("x", len(hidden)-len("sec.missing"))
	for name, op := range w.governanceOperations() {
		if !strings.Contains(name, "hidden") {
			continue
		}
		hid := map[string]any{}
		miss := map[string]any{}
		for k, v := range op.vars {
			hid[k], miss[k] = v, v
			if v == hidden {
				miss[k] = missing
			}
			if v == w.secrets[2] {
				miss[k] = "sec.missingjob" + strings.Repeat("x", len(w.secrets[2])-len("sec.missingjob"))
			}
		}
		got, want := w.post(w.narrow, op.q, hid), w.post(w.narrow, op.q, miss)
		if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("NOT_FOUND")) {
			t.Errorf("%s: hidden %s\n differs from missing %s", name, got, want)
		}
		w.noLeak(name, got)
	}
	if n := w.sent.count(); n != 0 {
		t.Fatalf("refused mutations sent %d events", n)
	}
	body := string(w.post(w.narrow2, leakSetTagsQ, map[string]any{"ns": w.fx.NS, "name": "pub.mid", "field": "c"}))
	if !strings.Contains(body, "governance-manage-tags: MANAGE_TAGS on "+w.fx.NS+" pub.mid is required") || !strings.Contains(body, "FORBIDDEN") {
		t.Errorf("setTags without MANAGE_TAGS: %s", body)
	}
	if body := string(w.post(w.admin, leakSetTagsQ, map[string]any{"ns": w.fx.NS, "name": "pub.mid", "field": "c"})); !strings.Contains(body, `"accepted":true`) || w.sent.count() != 1 {
		t.Errorf("the admin's setTags: %s (sent %d)", body, w.sent.count())
	}
	var denied, allowed int
	for _, r := range w.audit.all() {
		if !strings.Contains(r.Operation, "graphql setTags(") && !strings.Contains(r.Operation, "graphql block(") &&
			!strings.Contains(r.Operation, "graphql unblock(") && !strings.Contains(r.Operation, "graphql removeTags(") {
			continue
		}
		switch {
		case (r.Principal == w.narrow || r.Principal == w.narrow2) && r.Decision == audit.DecisionDeny:
			denied++
		case r.Principal == w.admin && r.Decision == audit.DecisionAllow && strings.Contains(r.Reason, "event "):
			allowed++
		}
	}
	if denied != 2*7+1 || allowed != 1 { // 7 hidden operations, each asked twice, and the forbidden one
		t.Errorf("audited %d denials and %d acceptances of the mutations, want 15 and 1: %+v", denied, allowed, w.audit.all())
	}
}
