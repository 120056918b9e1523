package resolvers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/resolvers/guard"
)

// Hostile payloads of issue 13 items 3 and 4; the benchmark in limits_bench_test.go sends the same ones.

// fragmentBomb is a document of n fragments where fragment i spreads fragment i+1 twice (2^n fields expanded).
func fragmentBomb(n int) string {
	var b strings.Builder
	b.WriteString("query { ...F0 }\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { __typename }\n", n)
	return b.String()
}

// repeatedTypename is one selection set of n `__typename` fields (quadratic overlapping-fields validation).
func repeatedTypename(n int) string { return "{" + strings.Repeat(" __typename", n) + " }" }

// hugeList is a request body with a list variable of n items.
func hugeList(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"query":"query($e: [EvidenceKind!]) { lineage(start: {dataset: {namespace: \"x\", name: \"y\"}}, evidence: $e) { truncated } }","variables":{"e":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"OBSERVED"`)
	}
	b.WriteString("]}}")
	return b.Bytes()
}

// queryBody is the JSON body of one operation.
func queryBody(q string) []byte {
	b, _ := json.Marshal(map[string]any{"query": q})
	return b
}

// hostile is one refused payload: its body, and the status it must get.
type hostile struct {
	name   string
	body   func() io.Reader
	length int64 // Content-Length; -1 sends it chunked
	status int
}

func hostilePayloads() []hostile {
	fixed := func(b []byte) func() io.Reader { return func() io.Reader { return bytes.NewReader(b) } }
	var cases []hostile
	for n := 24; n <= 30; n++ {
		b := queryBody(fragmentBomb(n))
		cases = append(cases, hostile{fmt.Sprintf("fragment bomb n=%d", n), fixed(b), int64(len(b)), http.StatusBadRequest})
	}
	tn := queryBody(repeatedTypename(20000))
	big := make([]byte, 64<<20)
	list := hugeList(1_000_000)
	inBody := hugeList(guard.DefaultMaxListItems + 1)
	return append(cases,
		hostile{"20,000 __typename", fixed(tn), int64(len(tn)), http.StatusBadRequest},
		hostile{"64 MiB body", fixed(big), int64(len(big)), http.StatusRequestEntityTooLarge},
		hostile{"64 MiB body chunked", fixed(big), -1, http.StatusRequestEntityTooLarge},
		hostile{"1,000,000-item list", fixed(list), int64(len(list)), http.StatusRequestEntityTooLarge},
		hostile{"list over the item limit within the body limit", fixed(inBody), int64(len(inBody)), http.StatusBadRequest},
	)
}

func (h *harness) postRaw(body io.Reader, length int64, principal string) (int, gqlResponse) {
	h.t.Helper()
	status, _, r := h.postRawHeaders(body, length, principal)
	return status, r
}

// postRawHeaders is postRaw answering the response's headers too.
func (h *harness) postRawHeaders(body io.Reader, length int64, principal string) (int, http.Header, gqlResponse) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL, body)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = length
	if principal != "" {
		req.Header.Set(principalHeader, principal)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r gqlResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatalf("status %d, body not JSON: %.300s", resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, r
}

func TestHostileGraphQLPayloadsAreRefusedBeforeWork(t *testing.T) {
	h := newHarness(t)
	for _, c := range hostilePayloads() {
		status, r := h.postRaw(c.body(), c.length, "")
		if status != c.status || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest || r.Errors[0].Message == "" {
			t.Errorf("%s: status %d, errors %+v; want %d and one BAD_REQUEST", c.name, status, r.Errors, c.status)
		}
		if len(r.Errors) == 1 && len(r.Errors[0].Message) > 300 {
			t.Errorf("%s: the message repeats the request: %.100s...", c.name, r.Errors[0].Message)
		}
	}
}

func TestGETQueryStringOverTheBodyLimitIs414(t *testing.T) {
	h := newHarness(t, func(d *testDeps) { d.Limits.MaxBodyBytes = 8 << 10 })
	q := url.Values{"query": {repeatedTypename(2000)}}
	resp, err := http.Get(h.srv.URL + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r gqlResponse
	_ = json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != http.StatusRequestURITooLong || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest {
		t.Fatalf("status %d errors %+v", resp.StatusCode, r.Errors)
	}
	// and a GET of a hostile document within the size limit is refused by the document limits
	if r := h.get(url.Values{"query": {fragmentBomb(24)}}); len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest {
		t.Fatalf("GET fragment bomb: %+v", r.Errors)
	}
}

// TestDocumentLimitsEachRefuse checks each written and expanded limit with a document just over it, and that
// the same shape just under it passes.
func TestDocumentLimitsEachRefuse(t *testing.T) {
	h := newHarness(t)
	fragments := func(n int) string {
		var b strings.Builder
		b.WriteString("{ __typename")
		for i := range n {
			fmt.Fprintf(&b, " ...G%d", i)
		}
		b.WriteString(" }")
		for i := range n {
			fmt.Fprintf(&b, " fragment G%d on Query { a%d: __typename }", i, i)
		}
		return b.String()
	}
	spreads := func(n int) string {
		return "{ ...S" + strings.Repeat(" ...S", n-1) + " } fragment S on Query { __typename }"
	}
	nested := func(n int) string { // n selection sets: the operation's, __schema, types, fields, type, ofType...
		return "{ __schema { types { fields { type {" + strings.Repeat(" ofType {", n-5) + " name" + strings.Repeat(" }", n)
	}
	expanded := func(n int) string { // 2^n distinct response paths: fragment i selects fragment i+1 under a: and b:
		var b strings.Builder
		b.WriteString("{ __schema { queryType { ...F0 } } }")
		for i := range n {
			fmt.Fprintf(&b, " fragment F%d on __Type { a: ofType { ...F%d } b: ofType { ...F%d } }", i, i+1, i+1)
		}
		fmt.Fprintf(&b, " fragment F%d on __Type { name }", n)
		return b.String()
	}
	skipped := func(n int) string { // 10 tokens per field
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: __typename @skip(if: false)", i)
		}
		return b.String() + " }"
	}
	cases := []struct {
		name      string
		ok, over  string
		wantInMsg string
	}{
		{"tokens", skipped((guard.DefaultMaxTokens - 2) / 10), skipped((guard.DefaultMaxTokens-2)/10 + 1), "tokens"},
		{"fragment definitions", fragments(guard.DefaultMaxFragments), fragments(guard.DefaultMaxFragments + 1), "fragment definitions"},
		{"fragment spreads", spreads(guard.DefaultMaxFieldRepeats), spreads(guard.DefaultMaxSpreads + 1), "fragment spreads"},
		{"expanded fields", expanded(8), expanded(9), "fields with its fragments expanded"},
		{"repeats of one field", repeatedTypename(guard.DefaultMaxFieldRepeats), repeatedTypename(guard.DefaultMaxFieldRepeats + 1), "selected more than"},
		{"repeats through fragments", spreads(guard.DefaultMaxFieldRepeats), spreads(guard.DefaultMaxFieldRepeats + 1), "selected more than"},
		{"nesting", nested(guard.DefaultMaxNesting - 1), nested(guard.DefaultMaxNesting + 1), "nest deeper"},
	}
	for _, c := range cases {
		if errs := h.query("", c.ok, nil, nil); len(errs) != 0 {
			t.Errorf("%s: just under the limit: %+v", c.name, errs)
		}
		errs := h.query("", c.over, nil, nil)
		if len(errs) != 1 || errs[0].code() != guard.CodeBadRequest || !strings.Contains(errs[0].Message, c.wantInMsg) {
			t.Errorf("%s: just over the limit: %+v", c.name, errs)
		}
	}
}

func TestIntrospectionPassesDefaultLimits(t *testing.T) {
	h := newHarness(t)
	for _, f := range []string{"testdata/introspection.graphql", "testdata/introspection-classic.graphql"} {
		q, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Schema struct{ Types []struct{ Name string } } `json:"__schema"`
		}
		if errs := h.query("", string(q), nil, &out); len(errs) != 0 || len(out.Schema.Types) < 20 {
			t.Fatalf("%s: %d types, errors %+v", f, len(out.Schema.Types), errs)
		}
	}
}

// TestContractOperationsPassDefaultLimits sends every operation of the client contract (API.md) that the schema
// serves (piiFlow is not served yet), each with every field the contract sketches, and
// expects no limit to refuse it (NOT_FOUND for an unknown node is fine).
func TestContractOperationsPassDefaultLimits(t *testing.T) {
	h := newHarness(t)
	ds, job := h.fx.Dataset("a"), h.fx.Job("j")
	h.fx.Flow(job, []string{ds}, []string{h.fx.Dataset("b")})
	h.fx.Run("run-1", job, []string{ds}, nil, "PUBLISHED", "START", "COMPLETE")
	ns := h.fx.NS
	for name, op := range contractOperations {
		vars := map[string]any{"ns": ns, "start": dsStart(ns, "a"), "field": map[string]any{"namespace": ns, "name": "a", "field": "x"}}
		for _, e := range h.query("", op, vars, nil) {
			if e.code() != guard.CodeNotFound {
				t.Errorf("%s: %+v", name, e)
			}
		}
	}
}

const contractRun = `id state conflictingStates startedAt endedAt job { id name } jobVersion { id definitionHash } parent { id }
  events { eventType } inputs { dataset { id name } version publication observedAt }
  outputs { dataset { id name } version publication observedAt }`

const contractEdge = `from to job { id name } validFrom validTo intervals { validFrom validTo } lastObservedAt stale
  evidence { kind producer source runId runState jobVersion observedAt publication derivation }
  transformations { type subtype masking description }`

var contractOperations = map[string]string{
	"dataset": `query($ns: String!) { dataset(namespace: $ns, name: "a") { id namespace name environment
  fields { id path type tags { name } dataset { id } } aliases { namespace name } owners { name type } tags { name }
  versions(first: 5) { nodes { version } endCursor hasNextPage } lastWrittenBy { ` + contractRun + ` } } }`,
	"job": `query($ns: String!) { job(namespace: $ns, name: "j") { id namespace name version { id definitionHash }
  runs(first: 5) { nodes { ` + contractRun + ` } endCursor hasNextPage } } }`,
	"run":    `{ run(id: "run-1") { ` + contractRun + ` } }`,
	"search": `{ search(query: "a", first: 20) { nodes { __typename } endCursor hasNextPage } }`,
	"lineage": `query($start: NodeRef!) { lineage(start: $start, direction: BOTH, depth: 3, granularity: DATASET,
  evidence: [OBSERVED, DECLARED], includeAttempted: false, maxNodes: 500) {
  nodes { id __typename ... on Dataset { namespace name } ... on Field { path } ... on Job { name } }
  edges { ` + contractEdge + ` } truncated cursor gaps { kind message nodes } permissionsFiltered } }`,
	"impact": `query($field: FieldRef!) { impact(field: $field, depth: 5) {
  direct { field { id path } path { ` + contractEdge + ` } } indirect { field { id path } path { from to } }
  jobs { id name } truncated gaps { kind message nodes } } }`,
	"event": `{ event(id: "nope") { id state reason field producer receivedAt } }`,
	"coverage": `query($ns: String) { coverage(namespace: $ns, criticality: "high") { asOf window permissionsFiltered
  ` + contractFigures + ` } }`,
}

// contractFigures selects every field of every coverage figure.
var contractFigures = func() string {
	var b strings.Builder
	for _, f := range []string{"jobsReporting", "jobsInstrumented", "runsWithoutTerminal", "quietProducers",
		"rejectedEvents", "unresolvedIdentities", "edgeFreshness", "columnLineage", "reportedWrites"} {
		b.WriteString(f + ` { signal numerator denominator ratio window description label
    groups { dimension key numerator denominator } trend { at numerator denominator ratio }
    items(first: 20) { totalCount endCursor hasNextPage nodes { kind nodes namespace name criticality status source
      producer reason count since message } } }
  `)
	}
	return b.String()
}()

// TestCostBudgetIsPerPrincipal: a principal whose complexity budget is spent is refused with 429 RATE_LIMITED and
// a Retry-After; another principal is not affected.
func TestCostBudgetIsPerPrincipal(t *testing.T) {
	h := newHarness(t, func(d *testDeps) { d.Limits.CostPerSecond, d.Limits.CostBurst = 1, guard.MaxComplexity })
	var b strings.Builder
	b.WriteString("{")
	for i := range guard.MaxComplexity / 20 { // complexity 10 each: half the burst
		fmt.Fprintf(&b, " r%d: run(id: \"x\") { id state startedAt endedAt conflictingStates job { id name namespace } }", i)
	}
	heavy := queryBody(b.String() + " }")
	post := func(principal string) (int, gqlResponse, string) {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL, bytes.NewReader(heavy))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(principalHeader, principal)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r gqlResponse
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r, resp.Header.Get("Retry-After")
	}
	for i := range 2 {
		if status, r, _ := post("spender"); status != http.StatusOK || r.Errors[0].code() != guard.CodeNotFound {
			t.Fatalf("request %d within the budget: %d %+v", i, status, r.Errors)
		}
	}
	status, r, retry := post("spender")
	if status != http.StatusTooManyRequests || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeRateLimited || retry == "" {
		t.Fatalf("over the budget: %d %+v Retry-After %q", status, r.Errors, retry)
	}
	if status, r, _ := post("saver"); status != http.StatusOK || r.Errors[0].code() != guard.CodeNotFound {
		t.Fatalf("another principal: %d %+v", status, r.Errors)
	}
}
