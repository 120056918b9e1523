package resolvers

import (
	"github.com/prometheus/client_golang/prometheus"
	"maps"

	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/sampler"
	"github.com/headwater-data/headwater/trust/truststore"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/inventory"
)

const leakLineageQ = `query($ns: String!, $name: String!, $dir: Direction!, $depth: Int!, $gran: Granularity, $max: Int, $after: String) {
  lineage(start: {dataset: {namespace: $ns, name: $name}}, direction: $dir, depth: $depth, granularity: $gran,
          maxNodes: $max, after: $after) {
    nodes { __typename id ... on Dataset { namespace name currentName tags { name } aliases { name kind }
              fields { path } lastWrittenBy { runId errorMessage } }
            ... on Field { path dataset { name } }
            ... on RestrictedNode { neighbourOf direction } }
    edges { id from to job { id name } evidence { kind producer runId eventIds jobVersion } intervals { validFrom } }
    truncated cursor fanOutMarkers { node direction shown } gaps { kind message nodes edges numerator denominator since }
    coverage { datasets withExpectedWriter reporting label } permissionsFiltered
  } }`

const leakCoverageQ = `query($ns: String) { coverage(namespace: $ns) { permissionsFiltered
  jobsReporting { numerator denominator groups { key numerator denominator } items(first: 500) { totalCount nodes { nodes name message } }
    trendScope trend { numerator denominator } }
  jobsInstrumented { numerator denominator items(first: 500) { nodes { nodes name message } } }
  runsWithoutTerminal { numerator denominator items(first: 500) { nodes { nodes name message } } }
  edgeFreshness { numerator denominator items(first: 500) { nodes { nodes name message } } trendScope trend { numerator denominator } }
  columnLineage { numerator denominator items(first: 500) { nodes { nodes name message } } }
  reportedWrites { numerator denominator items(first: 500) { nodes { nodes name message } } }
  unresolvedIdentities { numerator items(first: 500) { nodes { name message } } }
  quietProducers { numerator denominator items { nodes { producer message } } }
  rejectedEvents { numerator denominator items { nodes { producer reason } } }
  canaries { numerator denominator items(first: 500) { nodes { name message reason } } } } }`

const leakPiiFlowQ = `query($from: NodeRef) { piiFlow(tag: "pii", from: $from, depth: 5) { tag depth truncated permissionsFiltered
  origins { field { id path dataset { name tags { name } } } tags { name } }
  reached { field { id path dataset { name } } effect origin { path } distance path { edge { id from to job { name } } rule explanation } }
  stops { field { path dataset { name } } reason edge { id to } next { path dataset { name } } message }
  gaps { kind message nodes edges } } }`

// operations are every public read operation, with arguments naming this world's nodes.
func (w *world) operations() map[string]struct {
	q    string
	vars map[string]any
} {
	ns := w.fx.NS
	type op = struct {
		q    string
		vars map[string]any
	}
	lin := func(name, dir string, depth int, gran string) map[string]any {
		return map[string]any{"ns": ns, "name": name, "dir": dir, "depth": depth, "gran": gran}
	}
	ops := map[string]op{
		"lineage both":      {leakLineageQ, lin("pub.mid", "BOTH", 3, "DATASET")},
		"lineage src down":  {leakLineageQ, lin("pub.src", "DOWNSTREAM", 4, "DATASET")},
		"lineage behind up": {leakLineageQ, lin("pub.behind", "UPSTREAM", 3, "DATASET")},
		"lineage fields":    {leakLineageQ, lin("pub.mid", "DOWNSTREAM", 3, "FIELD")},
		"impact": {`query($ns: String!) { impact(field: {namespace: $ns, name: "pub.mid", field: "c"}) {
  direct { field { path dataset { name } } path { from to job { name } } } indirect { field { path } }
  jobs { name } truncated gaps { kind message nodes numerator denominator since } coverage { datasets withExpectedWriter reporting label }
  permissionsFiltered } }`, map[string]any{"ns": ns}},
		"dataset": {`query($ns: String!) { dataset(namespace: $ns, name: "pub.mid") { id name tags { name }
  aliases { namespace name kind } fields { path } lastWrittenBy { runId job { name } inputs { dataset { name } }
  outputs { dataset { name } } errorMessage jobVersion { sql } } } }`, map[string]any{"ns": ns}},
		"job runs": {`query($ns: String!) { job(namespace: $ns, name: "pub.j2") { name version { sql sqlWithheld }
  runs { nodes { runId errorMessage errorMessageWithheld inputs { dataset { name } } outputs { dataset { name } } events { eventId } } } } }`,
			map[string]any{"ns": ns}},
		"search": {`query($q: String!) { search(query: $q, first: 2) { nodes { __typename ... on Dataset { id name }
  ... on Job { id name } } endCursor hasNextPage permissionsFiltered } }`, map[string]any{"q": "pub.m"}},
		"coverage":             {leakCoverageQ, map[string]any{"ns": ns}},
		"piiFlow from dataset": {leakPiiFlowQ, map[string]any{"from": map[string]any{"dataset": map[string]any{"namespace": ns, "name": "pub.mid"}}}},
		"piiFlow from field":   {leakPiiFlowQ, map[string]any{"from": map[string]any{"field": map[string]any{"namespace": ns, "name": "pub.mid", "field": "c"}}}},
		"effectiveTags behind": {effectiveQ, map[string]any{"ns": ns, "name": "pub.behind", "infl": true}},
		"effectiveTags out":    {effectiveQ, map[string]any{"ns": ns, "name": "pub.out", "infl": true}},
		"governance histories": {leakHistoryQ, map[string]any{"ns": ns}},
		"job tag histories":    {leakJobTagHistoryQ, map[string]any{"ns": ns}},
		"search hidden": {`query($q: String!) { search(query: $q) { nodes { __typename ... on Dataset { id name } }
  endCursor hasNextPage permissionsFiltered } }`, map[string]any{"q": w.secrets[0][:9]}},
	}
	maps.Copy(ops, w.governanceOperations()) // leak_governance_test.go
	return ops
}

// TestLeakSuite calls every public operation as every principal in OMIT and REDACT mode, with the result cache
// on, and asserts that nothing a narrow principal receives (responses, errors, cursors, ids decoded) or can reach
// in Redis names a hidden node.
func TestLeakSuite(t *testing.T) {
	for _, mode := range []authz.HiddenMode{authz.HiddenOmit, authz.HiddenRedact} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t, worldOpt{mode: mode, cache: true})
			w.buildHistories(false)
			w.buildJobTagHistories()
			w.sampleTrends()
			for round := range 2 { // the second round is served from the result cache
				for name, op := range w.operations() {
					adminBody := w.post(w.admin, op.q, op.vars)
					if round == 0 && len(w.leaks(string(adminBody))) == 0 && (name == "lineage both" || name == "coverage" || name == "piiFlow from dataset" || name == "governance histories" || name == "job tag histories") {
						t.Errorf("admin answer should name hidden nodes (the suite would be vacuous): %s", adminBody)
					}
					for _, p := range []string{w.narrow, w.narrow2} {
						w.noLeak(name+" as "+p, w.post(p, op.q, op.vars))
					}
				}
			}
			w.cursorPages(w.narrow)
			for _, v := range w.redisValues(t.Context(), "hw:c:res:*") {
				if strings.Contains(v, w.fx.NS+"-narrow") { // never: principals are not in values
					t.Errorf("cached value names a principal: %s", v)
				}
			}
			w.checkTrends()
			w.checkShape(mode)
			w.checkTrustGaps()
			w.checkHistories()
			w.checkJobTagHistories()
		})
	}
}

// cursorPages walks a lineage answer one node per page and checks every page and cursor.
func (w *world) cursorPages(p string) {
	w.t.Helper()
	vars := map[string]any{"ns": w.fx.NS, "name": "pub.mid", "dir": "BOTH", "depth": 3, "gran": "DATASET", "max": 2}
	for page := range 10 {
		body := w.post(p, leakLineageQ, vars)
		w.noLeak("cursor page", body)
		var r struct {
			Data struct {
				Lineage struct{ Cursor *string } `json:"lineage"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &r)
		if r.Data.Lineage.Cursor == nil {
			if page == 0 {
				w.t.Errorf("maxNodes 2 should truncate: %s", body)
			}
			return
		}
		vars["after"] = *r.Data.Lineage.Cursor
	}
	w.t.Error("cursor pages did not end")
}

type shapeAnswer struct {
	Data struct {
		Lineage struct {
			Nodes []struct {
				Typename    string `json:"__typename"`
				ID          string `json:"id"`
				Name        string `json:"name"`
				NeighbourOf string `json:"neighbourOf"`
				Direction   string `json:"direction"`
				Tags        []struct{ Name string }
			} `json:"nodes"`
			Edges []struct {
				From, To string
				Job      *struct{ Name string }
			} `json:"edges"`
			PermissionsFiltered bool `json:"permissionsFiltered"`
		} `json:"lineage"`
	} `json:"data"`
}

// checkShape asserts what the narrow principal does see: visible nodes, the edge through the hidden job with
// job null, not the node behind the hidden one, placeholders only in REDACT mode, and per-principal ids.
func (w *world) checkShape(mode authz.HiddenMode) {
	w.t.Helper()
	op := w.operations()["lineage both"]
	var a, b shapeAnswer
	_ = json.Unmarshal(w.post(w.narrow, op.q, op.vars), &a)
	_ = json.Unmarshal(w.post(w.narrow2, op.q, op.vars), &b)
	names := map[string]bool{}
	var restricted []string
	for _, n := range a.Data.Lineage.Nodes {
		names[n.Name] = true
		if n.Typename == "RestrictedNode" {
			restricted = append(restricted, n.NeighbourOf+"/"+n.Direction)
		}
		if n.Name == "pub.mid" && len(n.Tags) != 0 {
			w.t.Errorf("sensitive tag shown without VIEW_SENSITIVE: %+v", n.Tags)
		}
	}
	for _, want := range []string{"pub.src", "pub.mid", "pub.out"} {
		if !names[want] {
			w.t.Errorf("narrow lineage lacks visible %s: %+v", want, a.Data.Lineage.Nodes)
		}
	}
	if names["pub.behind"] {
		w.t.Error("a node reachable only through a hidden one was returned")
	}
	if !a.Data.Lineage.PermissionsFiltered {
		w.t.Error("permissionsFiltered false for a narrow principal")
	}
	jobNull := false
	for _, e := range a.Data.Lineage.Edges {
		if e.To == api.DatasetID(w.out) && e.Job == nil {
			jobNull = true
		}
	}
	if !jobNull {
		w.t.Errorf("the edge mid->out through a hidden job should show job null: %+v", a.Data.Lineage.Edges)
	}
	want := 0
	if mode == authz.HiddenRedact {
		want = 2 // mid downstream (H1), src upstream (H2)
	}
	if len(restricted) != want {
		w.t.Errorf("%s: placeholders %v, want %d", mode, restricted, want)
	}
	if mode == authz.HiddenRedact && len(b.Data.Lineage.Nodes) > 0 {
		ids := map[string]bool{}
		for _, n := range a.Data.Lineage.Nodes {
			if n.Typename == "RestrictedNode" {
				ids[n.ID] = true
			}
		}
		for _, n := range b.Data.Lineage.Nodes {
			if n.Typename == "RestrictedNode" && ids[n.ID] {
				w.t.Errorf("placeholder id %s shared between principals", n.ID)
			}
		}
	}
}

// TestOmitIdenticalAnswers: two graphs differing only in parts hidden from the narrow principal (more hidden
// neighbours, another hidden job between two visible datasets, hidden upstream of the hidden) give byte-identical
// answers to every operation.
//
// Among them (issue 13 item 10): a visible dataset with dataset-level lineage from a visible and a hidden dataset
// and no column lineage shows a NO_COLUMN_LINEAGE gap on its field; adding column lineage from the hidden dataset
// only must not remove it ("a column comes from one you cannot see").
func TestOmitIdenticalAnswers(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	w.buildHistories(false)
	ops := w.operations()
	colDst, hCol := w.columnsFromHidden()
	ops["lineage fields from hidden"] = struct {
		q    string
		vars map[string]any
	}{leakLineageQ, map[string]any{"ns": w.fx.NS, "name": "pub.coldst", "dir": "UPSTREAM", "depth": 2, "gran": "FIELD"}}
	before := map[string][]byte{}
	for name, op := range ops {
		before[name] = w.post(w.narrow, op.q, op.vars)
	}
	if !bytes.Contains(before["lineage fields from hidden"], []byte("NO_COLUMN_LINEAGE")) {
		t.Fatalf("a field without column lineage under dataset lineage should carry the gap: %s", before["lineage fields from hidden"])
	}
	fx := w.fx
	fx.ColumnFeeds(hCol, colDst, fx.Job(w.hidden("coljob")))
	extra, extraJob := fx.Dataset(w.hidden("extra")), fx.Job(w.hidden("job2"))
	fx.Flow(fx.Job("pub.j9"), []string{w.mid}, []string{extra})
	fx.Flow(extraJob, []string{w.mid}, []string{w.out})
	fx.Flow(extraJob, []string{fx.Dataset(w.hidden("far"))}, []string{w.h1})
	extraCol := fx.Field(extra, "c", fx.T0, fx.T0.AddDate(1, 0, 0))
	fx.ColumnFeeds(w.midCol, extraCol, extraJob)
	w.hiddenTrust(extraJob)
	w.buildHistories(true) // one more block, naming only hidden nodes
	for name, op := range ops {
		after := w.post(w.narrow, op.q, op.vars)
		if !bytes.Equal(before[name], after) {
			t.Errorf("%s: answer changed with hidden parts only:\nbefore %s\nafter  %s", name, before[name], after)
		}
	}
}

// hiddenTrust adds what only the hidden part knows of trust: an expected job in the hidden part, never reported,
// listing visible pub.mid and pub.out as outputs, and a quiet producer of the hidden job (ADR 0032).
func (w *world) hiddenTrust(hiddenJob string) {
	fx := w.fx
	day := 24 * time.Hour
	registerList(w.t, fx, []inventory.Job{{Namespace: fx.NS, Name: w.hidden("expected2"), Interval: day,
		Outputs: []inventory.Dataset{{Namespace: fx.NS, Name: "pub.mid"}, {Namespace: fx.NS, Name: "pub.out"}}}})
	w.gaps.InventoryChanged() // what the registry does after a registration (the index is read again)
	producerRun(fx, hiddenJob, w.hidden("prod3"), []time.Time{fx.Now.Add(-9 * day), fx.Now.Add(-8 * day), fx.Now.Add(-7 * day)})
}

// columnsFromHidden writes pub.colsrc -(pub.jcol)-> pub.coldst <-(hidden job)- hidden dataset, each with a
// column c and no column lineage, and returns the keys of pub.coldst.c and the hidden dataset's c.
func (w *world) columnsFromHidden() (dst, hidden string) {
	fx := w.fx
	src, d, h := fx.Dataset("pub.colsrc"), fx.Dataset("pub.coldst"), fx.Dataset(w.hidden("colsrc"))
	w.secretKey(h, api.DatasetID(h))
	fx.Flow(fx.Job("pub.jcol"), []string{src}, []string{d})
	fx.Flow(fx.Job(w.hidden("coljob")), []string{h}, []string{d})
	fx.Field(src, "c", fx.T0, time.Time{})
	hidden = fx.Field(h, "c", fx.T0, time.Time{})
	w.secretKey(hidden, api.FieldID(hidden))
	return fx.Field(d, "c", fx.T0, time.Time{}), hidden
}

// TestHiddenRootIsNotFound: a root the caller may not see answers byte-identically to a missing one (up to the
// name asked), for dataset, job, lineage, impact and run; and the denial is audited.
func TestHiddenRootIsNotFound(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	hiddenName := w.secrets[0] // H1's name
	missing := "sec.missing" + strings.Repeat("x", len(hiddenName)-len("sec.missing"))
	qs := map[string]string{
		"dataset": `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name } }`,
		"job":     `query($ns: String!, $n: String!) { job(namespace: $ns, name: $n) { id name } }`,
		"lineage": `query($ns: String!, $n: String!) { lineage(start: {dataset: {namespace: $ns, name: $n}}) { nodes { id } } }`,
		"impact":  `query($ns: String!, $n: String!) { impact(field: {namespace: $ns, name: $n, field: "c"}) { truncated } }`,
	}
	for name, q := range qs {
		hid := hiddenName
		if name == "job" {
			hid = w.secrets[2] // the hidden job
		}
		got := w.post(w.narrow, q, map[string]any{"ns": w.fx.NS, "n": hid})
		miss := w.post(w.narrow, q, map[string]any{"ns": w.fx.NS, "n": missing})
		if !bytes.Equal(got, bytes.ReplaceAll(miss, []byte(missing), []byte(hid))) || !bytes.Contains(got, []byte("NOT_FOUND")) {
			t.Errorf("%s: hidden root %s\n differs from missing %s", name, got, miss)
		}
	}
	runQ := `query($id: ID!) { run(id: $id) { runId } }`
	var hiddenRun string
	for _, s := range w.secrets {
		if strings.HasPrefix(s, "00000000-") {
			hiddenRun = s
		}
	}
	missRun := "00000000-0000-4000-8000-ffffffffffff"
	got, miss := w.post(w.narrow, runQ, map[string]any{"id": hiddenRun}), w.post(w.narrow, runQ, map[string]any{"id": missRun})
	if !bytes.Equal(got, bytes.ReplaceAll(miss, []byte(missRun), []byte(hiddenRun))) {
		t.Errorf("run: hidden %s differs from missing %s", got, miss)
	}
	denied := false
	for _, r := range w.audit.all() {
		denied = denied || (r.Principal == w.narrow && r.Decision == audit.DecisionDeny)
	}
	if !denied {
		t.Errorf("no denial audited: %+v", w.audit.all())
	}
}

// TestLookupByHiddenNameIsNotFound (issue 13 item 13): a visible dataset looked up by another name of it that the
// caller may not describe (here a symlink in the hidden part of the namespace) answers like a name that does not
// exist, for dataset and lineage, instead of answering the visible dataset with resolvedFrom naming the hidden
// name; a caller who may describe that name still finds the dataset through it.
func TestLookupByHiddenNameIsNotFound(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	alias := w.alias
	missing := "sec.missing" + strings.Repeat("x", len(alias)-len("sec.missing"))
	qs := map[string]string{
		"dataset": `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name resolvedFrom { name kind } } }`,
		"lineage": `query($ns: String!, $n: String!) { lineage(start: {dataset: {namespace: $ns, name: $n}}) { nodes { id } } }`,
	}
	for name, q := range qs {
		got := w.post(w.narrow, q, map[string]any{"ns": w.fx.NS, "n": alias})
		miss := w.post(w.narrow, q, map[string]any{"ns": w.fx.NS, "n": missing})
		if !bytes.Equal(got, bytes.ReplaceAll(miss, []byte(missing), []byte(alias))) || !bytes.Contains(got, []byte("NOT_FOUND")) {
			t.Errorf("%s by a hidden name: %s\n differs from a missing name: %s", name, got, miss)
		}
	}
	admin := w.post(w.admin, qs["dataset"], map[string]any{"ns": w.fx.NS, "n": alias})
	if !bytes.Contains(admin, []byte(`"name":"pub.mid"`)) || !bytes.Contains(admin, []byte(alias)) {
		t.Errorf("the admin should find pub.mid through its symlink, with resolvedFrom: %s", admin)
	}
}

// sampleTrends stores this namespace's scoped trend points (the hidden nodes are in the same namespace).
func (w *world) sampleTrends() {
	w.t.Helper()
	smp := sampler.New(w.trust, truststore.NewStore(w.fx.Store), sampler.NewMetrics(prometheus.NewRegistry()), nil)
	if err := smp.SampleScope(w.t.Context(), w.fx.Now, trust.TrendScope{Kind: trust.ScopeNamespace, Key: w.fx.NS}); err != nil {
		w.t.Fatal(err)
	}
}

// checkTrends: the admin gets the namespace's points (they count the hidden nodes); the narrow principals, who
// hold only a prefix of the namespace, get no trend at all.
func (w *world) checkTrends() {
	w.t.Helper()
	vars := map[string]any{"ns": w.fx.NS}
	if admin := string(w.post(w.admin, leakCoverageQ, vars)); !strings.Contains(admin, `"trendScope":"namespace:`+w.fx.NS+`"`) {
		w.t.Errorf("the admin's coverage has no namespace trend (the check would be vacuous): %s", admin)
	}
	for _, p := range []string{w.narrow, w.narrow2} {
		body := string(w.post(p, leakCoverageQ, vars))
		if strings.Count(body, `"trendScope":null,"trend":[]`) != 2 {
			w.t.Errorf("%s got a trend of a namespace it holds only a prefix of: %s", p, body)
		}
	}
}
