package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// piiWorld is one piiFlow scenario: datasets under dsNS (and hidden ones under secNS), jobs under jobNS, events
// through the gateway, a serve process with `pii` sensitive and a narrow reader.
type piiWorld struct {
	sc     scope
	secNS  string
	api    string
	narrow string // token of a reader with DESCRIBE, VIEW_LINEAGE, VIEW_SENSITIVE on jobNS and dsNS only
	policy string // the policy file serve runs with
	t0     time.Time
	ids    []string
	args   []string       // more arguments of serve (an archive directory)
	kc     kafkaio.Config // the topics every serve of the world shares (set by the first)
	proj   *proc          // the first serve, the one that runs the consumer
}

// col is one column-lineage input: "dataset.field TYPE/SUBTYPE[/mask] ..." (dataset in dsNS unless it starts
// with "sec:").
func (w *piiWorld) col(spec string) map[string]any {
	parts := strings.Fields(spec)
	ns, ref := w.sc.dsNS, parts[0]
	if r, ok := strings.CutPrefix(ref, "sec:"); ok {
		ns, ref = w.secNS, r
	}
	ds, field, _ := strings.Cut(ref, ".")
	var ts []any
	for _, t := range parts[1:] {
		p := strings.Split(t, "/")
		ts = append(ts, map[string]any{"type": p[0], "subtype": p[1], "description": "", "masking": len(p) > 2})
	}
	return map[string]any{"namespace": ns, "name": ds, "field": field, "transformations": ts}
}

func (w *piiWorld) ds(name string) map[string]any {
	if r, ok := strings.CutPrefix(name, "sec:"); ok {
		return map[string]any{"namespace": w.secNS, "name": r}
	}
	return map[string]any{"namespace": w.sc.dsNS, "name": name}
}

// run sends a COMPLETE run of job at t0+at reading ins and writing out, whose column lineage maps each output
// field to its inputs (col specs separated by ";"); an empty map sends no column lineage.
func (w *piiWorld) run(t *testing.T, job string, at time.Duration, ins []string, out string, fields map[string]string) {
	t.Helper()
	output := w.ds(out)
	if len(fields) > 0 {
		cl := map[string]any{}
		for f, specs := range fields {
			var inputs []any
			for s := range strings.SplitSeq(specs, ";") {
				inputs = append(inputs, w.col(strings.TrimSpace(s)))
			}
			cl[f] = map[string]any{"inputFields": inputs}
		}
		output["facets"] = map[string]any{"columnLineage": map[string]any{"_producer": "https://example.com/e2e",
			"_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json", "fields": cl}}
	}
	var inputs []any
	for _, in := range ins {
		inputs = append(inputs, w.ds(in))
	}
	w.send(t, map[string]any{"eventType": "COMPLETE", "eventTime": w.t0.Add(at).UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": uuid.NewString()}, "job": map[string]any{"namespace": w.sc.jobNS, "name": job},
		"inputs": inputs, "outputs": []any{output}})
}

func (w *piiWorld) send(t *testing.T, ev map[string]any) {
	t.Helper()
	id := uuid.NewString()
	ev["eventId"] = id
	b, _ := json.Marshal(ev)
	if c := send(t, w.api, token, b); c != http.StatusAccepted {
		t.Fatalf("send: %d %s", c, b)
	}
	w.ids = append(w.ids, id)
}

// tagged sends a DatasetEvent giving dataset name a schema and tags ("field:key" or "key").
func (w *piiWorld) tagged(t *testing.T, name string, paths []string, tags ...string) {
	t.Helper()
	var tt []any
	for _, tg := range tags {
		field, key, ok := strings.Cut(tg, ":")
		m := map[string]any{"key": key, "value": "true", "source": "e2e", "field": field}
		if !ok {
			m = map[string]any{"key": tg, "value": "true", "source": "e2e"}
		}
		tt = append(tt, m)
	}
	d := w.ds(name)
	d["facets"] = map[string]any{
		"schema": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
			"fields": schemaFacet(paths...)["fields"]},
		"tags": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json",
			"tags": tt}}
	w.send(t, map[string]any{"eventTime": w.t0.UTC().Format(time.RFC3339Nano), "producer": "https://example.com/e2e",
		"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent", "dataset": d})
}

// startPii writes a policy file that is the suite's plus `pii` as a sensitive tag and the narrow reader's role,
// and starts serve with it.
func startPii(t *testing.T, serveArgs ...string) *piiWorld {
	t.Helper()
	sc := newScope(t)
	w := &piiWorld{sc: sc, secNS: sc.dsNS + "-sec", api: freePort(t), t0: time.Now().Add(-time.Hour).Truncate(time.Millisecond)}
	base, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	role, subject := runID+"-pii-"+sc.token, runID+"-pii-reader-"+sc.token
	policy := strings.Replace(string(base), "hiddenNeighbours: OMIT\n", "hiddenNeighbours: OMIT\nsensitive:\n  tags: [pii]\n", 1)
	policy = strings.Replace(policy, "bindings:\n", fmt.Sprintf(`  - name: %[1]s
    grants:
      - privileges: [DESCRIBE, VIEW_LINEAGE, VIEW_SENSITIVE]
        on: {namespace: "%[2]s"}
      - privileges: [DESCRIBE, VIEW_LINEAGE, VIEW_SENSITIVE]
        on: {namespace: "%[3]s"}
bindings:
  - role: %[1]s
    subjects: [%[4]s]
`, role, sc.jobNS, sc.dsNS, subject), 1)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	store := testenv.Store(t)
	w.narrow, _, err = apitoken.NewStore(store, time.Now).Create(t.Context(), apitoken.NewToken{Owner: subject, Kind: "user", CreatedBy: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	w.policy = file
	w.args = serveArgs
	w.proj = w.serve(t, w.api, true)
	return w
}

// serve starts a serve process on addr with the scenario's policy file and extra environment; consumer says
// whether it projects (a second process only answers queries).
func (w *piiWorld) serve(t *testing.T, addr string, consumer bool, env ...string) *proc {
	t.Helper()
	env = append(env, "HEADWATER_AUTHZ_POLICY_FILE="+w.policy)
	metrics := freePort(t)
	args := append([]string{"serve", "--http-addr=" + addr, "--http-metrics-addr=" + metrics}, w.args...)
	if !consumer {
		args = append(args, "--no-consumer")
	}
	if w.kc.EventsTopic == "" {
		w.kc = testenv.KafkaConfig(t)
	}
	p := start(t, w.kc, env, args...)
	p.metrics = metrics
	waitHTTP(t, "http://"+addr+"/readyz", 60*time.Second)
	return p
}

// scenario sends the pipeline: customers (email, phone tagged pii, pii.phone) -> stage (identity, transformation,
// hash with masking, a masked token no job reads by column, a filter on email on every column: the Spark
// integration's shape) -> agg (collect_set:
// aggregation; count: aggregation with masking), -> joined (join key email: INDIRECT; case when country then
// email: TRANSFORMATION + CONDITIONAL), -> mart_hash (a copy of the hash), -> copy_a and copy_b -> final (two paths),
// final -> export (no column lineage), and stage -> sec:secret_copy -> behind (through a namespace the narrow
// reader may not see). copy_a's and copy_b's later runs stop mapping email (their edges close at +15m, +20m);
// mask_email copies customers.email into masked.email at +5m and starts masking it at +12m (ADR 0091).
func (w *piiWorld) scenario(t *testing.T) {
	m := time.Minute
	w.tagged(t, "customers", []string{"id", "email", "phone", "country"}, "email:pii", "phone:pii.phone")
	w.run(t, "stage", 1*m, []string{"customers"}, "stage", map[string]string{
		"email":        "customers.email DIRECT/IDENTITY",
		"email_domain": "customers.email DIRECT/TRANSFORMATION",
		"email_hash":   "customers.email DIRECT/TRANSFORMATION/mask",
		"email_token":  "customers.email DIRECT/TRANSFORMATION/mask",
		"phone":        "customers.phone DIRECT/IDENTITY",
		"id":           "customers.id DIRECT/IDENTITY; customers.email INDIRECT/FILTER",
		"country":      "customers.country DIRECT/IDENTITY; customers.email INDIRECT/FILTER"})
	w.run(t, "agg", 2*m, []string{"stage"}, "agg", map[string]string{
		"emails":   "stage.email DIRECT/AGGREGATION",
		"n_emails": "stage.email DIRECT/AGGREGATION/mask",
		"country":  "stage.country DIRECT/IDENTITY INDIRECT/GROUP_BY"})
	w.run(t, "join", 3*m, []string{"stage", "orders"}, "joined", map[string]string{
		"amount":  "orders.amount DIRECT/IDENTITY; stage.email INDIRECT/JOIN",
		"contact": "stage.email DIRECT/TRANSFORMATION; stage.country INDIRECT/CONDITIONAL"})
	w.run(t, "hashcopy", 4*m, []string{"stage"}, "mart_hash", map[string]string{"email_hash": "stage.email_hash DIRECT/IDENTITY"})
	w.run(t, "mask_email", 5*m, []string{"customers"}, "masked", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	w.run(t, "copy_a", 5*m, []string{"stage"}, "copy_a", map[string]string{"email": "stage.email DIRECT/IDENTITY"})
	w.run(t, "copy_b", 5*m, []string{"stage"}, "copy_b", map[string]string{"email": "stage.email DIRECT/IDENTITY"})
	w.run(t, "final", 6*m, []string{"copy_a", "copy_b"}, "final", map[string]string{"email": "copy_a.email DIRECT/IDENTITY; copy_b.email DIRECT/IDENTITY"})
	w.run(t, "export", 7*m, []string{"final"}, "export", nil)
	w.run(t, "sec_copy", 8*m, []string{"stage"}, "sec:secret_copy", map[string]string{"email": "stage.email DIRECT/IDENTITY"})
	w.run(t, "sec_back", 9*m, []string{"sec:secret_copy"}, "behind", map[string]string{"email": "sec:secret_copy.email DIRECT/IDENTITY"})
	w.run(t, "mask_email", 12*m, []string{"customers"}, "masked", map[string]string{"email": "customers.email DIRECT/TRANSFORMATION/mask"})
	w.run(t, "copy_a", 15*m, []string{"stage"}, "copy_a", map[string]string{"email": "stage.id DIRECT/IDENTITY"})
	w.run(t, "copy_b", 20*m, []string{"stage"}, "copy_b", map[string]string{"email": "stage.id DIRECT/IDENTITY"})
	waitEvents(t, testenv.Store(t), w.ids, projectTimeout)
}

const piiFlowQ = `query($ns: String!, $asOf: Time, $tag: String!) {
  piiFlow(tag: $tag, from: {field: {namespace: $ns, name: "customers", field: "email"}}, asOf: $asOf) {
    tag depth truncated permissionsFiltered
    origins { field { id path dataset { name } } tags { name } }
    reached { field { id path dataset { namespace name } } effect distance origin { path }
      path { rule explanation edge { from to job { name } transformations { type subtype masking } } } }
    stops { field { id path dataset { name } } reason message next { path dataset { name } } }
    gaps { kind nodes } } }`

type piiReach struct {
	Field struct {
		ID      string
		Path    string
		Dataset struct{ Namespace, Name string }
	}
	Effect   string
	Distance int
	Path     []struct {
		Rule        string
		Explanation string
		Edge        struct{ Job *struct{ Name string } }
	}
}

type piiFlowResult struct {
	Tag                 string
	Truncated           bool
	PermissionsFiltered bool
	Origins             []struct {
		Field struct{ ID, Path string }
		Tags  []struct{ Name string }
	}
	Reached []piiReach
	Stops   []struct {
		Field struct {
			ID      string
			Path    string
			Dataset struct{ Name string }
		}
		Reason  string
		Message string
		Next    *struct {
			Path    string
			Dataset struct{ Name string }
		}
	}
	Gaps []struct {
		Kind  string
		Nodes []string
	}
}

func (w *piiWorld) flow(t *testing.T, tok, tag string, at time.Duration) (piiFlowResult, string) {
	t.Helper()
	d, errs := gqlErrs(t, w.api, tok, piiFlowQ, map[string]any{"ns": w.sc.dsNS, "tag": tag,
		"asOf": w.t0.Add(at).UTC().Format(time.RFC3339Nano)})
	if len(errs) > 0 {
		t.Fatalf("piiFlow: %v", errs)
	}
	raw, _ := json.Marshal(d["piiFlow"])
	var f piiFlowResult
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f, string(raw)
}

// reached renders a flow's reached fields as "dataset.field EFFECT rule,rule" sorted as answered.
func (f piiFlowResult) reached() map[string]string {
	out := map[string]string{}
	for _, r := range f.Reached {
		var rules []string
		for _, s := range r.Path {
			rules = append(rules, s.Rule)
		}
		out[r.Field.Dataset.Name+"."+r.Field.Path] = r.Effect + " " + strings.Join(rules, ",")
	}
	return out
}

func (f piiFlowResult) stops() map[string]bool {
	out := map[string]bool{}
	for _, s := range f.Stops {
		k := s.Field.Dataset.Name + "." + s.Field.Path + " " + s.Reason
		if s.Next != nil {
			k += " -> " + s.Next.Dataset.Name + "." + s.Next.Path
		}
		out[k] = true
	}
	return out
}

// TestPiiFlowThroughTheGateway: the flow of `pii` from customers.email, with events sent through the gateway and
// projected by the consumer, answers each real column-lineage shape by its rule (identity and transformation
// carry, a hash with masking and a count stop it, collect_set carries it as aggregated, a join key and a filter
// only influence, case-when carries the branch value), says "unknown: no column lineage" across a dataset-level
// edge, follows the graph in time (final.email keeps the tag after copy_a's edge closes because copy_b's still
// holds it, and loses it when both have closed), shows a narrow reader nothing behind a namespace it may not see,
// audits every call, and (a second server with a governance file) stops at aggregations when told to.
func TestPiiFlowThroughTheGateway(t *testing.T) {
	w := startPii(t)
	w.scenario(t)
	f, raw := w.flow(t, token, "pii", 10*time.Minute)
	want := map[string]string{
		"stage.email":        "CARRIED IDENTITY",
		"stage.email_domain": "CARRIED TRANSFORMATION",
		"stage.id":           "INFLUENCED INDIRECT",
		"stage.country":      "INFLUENCED INDIRECT",
		"agg.emails":         "AGGREGATED IDENTITY,AGGREGATION",
		"joined.contact":     "CARRIED IDENTITY,TRANSFORMATION",
		"joined.amount":      "INFLUENCED IDENTITY,INDIRECT",
		"copy_a.email":       "CARRIED IDENTITY,IDENTITY",
		"copy_b.email":       "CARRIED IDENTITY,IDENTITY",
		"final.email":        "CARRIED IDENTITY,IDENTITY,IDENTITY",
		"secret_copy.email":  "CARRIED IDENTITY,IDENTITY",
		"behind.email":       "CARRIED IDENTITY,IDENTITY,IDENTITY",
		"masked.email":       "CARRIED IDENTITY",
	}
	if got := f.reached(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reached at +10m:\n got %v\nwant %v\n%s", got, want, raw)
	}
	for _, s := range []string{"customers.email MASKED -> stage.email_hash", "stage.email MASKED -> agg.n_emails",
		"final.email NO_COLUMN_LINEAGE"} {
		if !f.stops()[s] {
			t.Errorf("stop %q missing: %v", s, f.stops())
		}
	}
	if f.stops()["customers.email MASKED -> masked.email"] {
		t.Errorf("at +10m mask_email did not mask yet: %v", f.stops())
	}
	f.noColumnGapsOnlyWhereTheTagIs(t, raw)
	if !strings.Contains(raw, "unknown: no column lineage") || len(f.Origins) != 1 || f.Origins[0].Tags[0].Name != "email:pii=true" ||
		f.PermissionsFiltered || f.Tag != "pii" {
		t.Errorf("origins, the no-column-lineage message or the flags: %s", raw)
	}
	w.inTime(t)
	w.narrowSeesNothingHidden(t)
	w.exportAndExplain(t)
	w.audited(t)
	w.aggregationStops(t)
}

// noColumnGapsOnlyWhereTheTagIs: a NO_COLUMN_LINEAGE gap of a flow names only fields the answer shows (an origin,
// a field reached, influence included, or where the flow stopped), never a field past a stop (stage.email_token,
// masked, has no column lineage onward while stage has dataset-level lineage onward: the flow there is known, it
// stopped; the demo's orders_clean.customer_hash showed it), and final.email's gap is there.
func (f piiFlowResult) noColumnGapsOnlyWhereTheTagIs(t *testing.T, raw string) {
	t.Helper()
	carrying, shown := map[string]bool{}, map[string]bool{}
	for _, s := range f.Stops {
		shown[s.Field.ID] = true
		if s.Reason == "NO_COLUMN_LINEAGE" {
			carrying[s.Field.ID] = true
		}
	}
	for _, r := range f.Reached {
		shown[r.Field.ID] = true
	}
	for _, o := range f.Origins {
		shown[o.Field.ID] = true
	}
	named := 0
	for _, g := range f.Gaps {
		if g.Kind != "NO_COLUMN_LINEAGE" {
			continue
		}
		for _, n := range g.Nodes {
			if !shown[n] {
				t.Errorf("a NO_COLUMN_LINEAGE gap names %s, a field the flow did not reach: %s", n, raw)
			}
			if carrying[n] {
				named++
			}
		}
	}
	if named == 0 || len(carrying) == 0 {
		t.Errorf("want final.email's NO_COLUMN_LINEAGE gap and stop: %s", raw)
	}
}

// aggregationStops: a second server whose governance file says `pii` stops at aggregations answers the same
// graph without agg.emails, with an AGGREGATION stop before it.
func (w *piiWorld) aggregationStops(t *testing.T) {
	t.Helper()
	gov := filepath.Join(t.TempDir(), "governance.yaml")
	if err := os.WriteFile(gov, []byte("version: 1\nclasses:\n  - name: pii\n    aggregation: STOP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.api = freePort(t)
	w.serve(t, w.api, false, "HEADWATER_GOVERNANCE_FILE="+gov)
	f, raw := w.flow(t, token, "pii", 10*time.Minute)
	if _, ok := f.reached()["agg.emails"]; ok || !f.stops()["stage.email AGGREGATION -> agg.emails"] {
		t.Errorf("with aggregation: STOP, agg.emails should be an AGGREGATION stop, not reached: %v %v\n%s", f.reached(), f.stops(), raw)
	}
	if f.reached()["joined.contact"] != "CARRIED IDENTITY,TRANSFORMATION" {
		t.Errorf("aggregation: STOP changes only aggregations: %v", f.reached())
	}
}

// inTime: after copy_a's edge closed final.email is still reached, through copy_b; after both closed it is not.
// After mask_email started masking (+12m) masked.email is a MASKED stop, not reached: the edge's transformations
// are those of its runs at the asOf, not only its latest run's.
func (w *piiWorld) inTime(t *testing.T) {
	t.Helper()
	f, raw := w.flow(t, token, "pii", 17*time.Minute)
	r := f.reached()
	if _, ok := r["masked.email"]; ok || !f.stops()["customers.email MASKED -> masked.email"] {
		t.Errorf("at +17m mask_email masks: masked.email should be a MASKED stop: %v %v\n%s", r, f.stops(), raw)
	}
	if _, ok := r["copy_a.email"]; ok || r["final.email"] != "CARRIED IDENTITY,IDENTITY,IDENTITY" {
		t.Errorf("at +17m (copy_a closed) final.email should be reached through copy_b only: %v\n%s", r, raw)
	}
	for _, p := range f.Reached {
		if p.Field.Dataset.Name == "final" && (p.Path[1].Edge.Job == nil || p.Path[1].Edge.Job.Name != "copy_b") {
			t.Errorf("final.email's path at +17m should go through copy_b: %s", raw)
		}
	}
	f, raw = w.flow(t, token, "pii", 25*time.Minute)
	r = f.reached()
	if _, ok := r["final.email"]; ok {
		t.Errorf("at +25m (both copies closed) final.email should not carry the tag: %v\n%s", r, raw)
	}
	if r["stage.email"] != "CARRIED IDENTITY" {
		t.Errorf("at +25m stage.email should still carry the tag: %v", r)
	}
}

// narrowSeesNothingHidden: the reader without grants on secNS gets the visible flow, nothing naming secNS or the
// dataset only it reaches, and permissionsFiltered.
func (w *piiWorld) narrowSeesNothingHidden(t *testing.T) {
	t.Helper()
	f, raw := w.flow(t, w.narrow, "pii", 10*time.Minute)
	if strings.Contains(raw, w.secNS) || strings.Contains(raw, "secret_copy") || strings.Contains(raw, "behind") {
		t.Errorf("narrow reader sees what is hidden: %s", raw)
	}
	if r := f.reached(); r["final.email"] == "" || r["stage.email"] == "" || !f.PermissionsFiltered {
		t.Errorf("narrow reader should see the visible flow, filtered: %s", raw)
	}
}

// audited: each piiFlow call wrote an audit record naming it (also the narrow reader's).
func (w *piiWorld) audited(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, errs := gqlErrs(t, w.api, token, `query($p: String) { auditRecords(first: 200, principal: $p) { nodes { operation principal nodes { name } } } }`,
			map[string]any{"p": runID + "-pii-reader-" + w.sc.token})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		raw, _ := json.Marshal(d)
		if strings.Contains(string(raw), `piiFlow(tag: \"pii\")`) && strings.Contains(string(raw), `"name":"customers"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit record of the narrow reader's piiFlow: %s", raw)
		}
		time.Sleep(time.Second)
	}
}
