package trust_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/rules"
	"github.com/headwater-data/headwater/trust/truststore"
)

// namePerms lets a caller see every node except those whose name contains hide (a pure fake of the policy;
// the GraphQL and e2e tests use the real grant model).
type namePerms struct{ hide string }

func (n namePerms) Scope(context.Context, authz.Principal) (authz.Scope, error) {
	return authz.Scope{Fingerprint: "t", Global: n.hide == ""}, nil
}

func (n namePerms) Check(_ context.Context, _ authz.Principal, cs []authz.Check) ([]bool, error) {
	out := make([]bool, len(cs))
	for i, c := range cs {
		out[i] = n.hide == "" || !strings.Contains(c.Candidate.Name, n.hide)
	}
	return out, nil
}

type world struct {
	fx               *lineagetest.Fixture
	j1, j2, j4       string
	openRun, a, b, c string
	svc, narrow      *trust.Service
	source           string
}

// newWorld: expected j1..j5 (daily j1-j3, j4 no schedule, j5 paused); j1 reported an hour ago, j2 three days
// ago, j3 never; j1 has a run with START an hour old; j1 reads a and writes b (fresh, b has column
// lineage), j2 writes c (last observed ten days ago, stale).
func newWorld(t *testing.T) *world {
	store := testenv.Store(t)
	fx := lineagetest.New(t, store)
	w := &world{fx: fx, source: "src-" + testenv.Token(6)}
	w.j1, w.j2, w.j4 = fx.Job("j1"), fx.Job("j2.hidden"), fx.Job("j4")
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.lastSeenAt = $t`, map[string]any{"k": w.j2, "t": graph.Millis(fx.Now.Add(-72 * time.Hour))})
	w.openRun = "00000000-0000-4000-8000-" + testenv.Token(6) + "000000"
	fx.Run(w.openRun, w.j1, nil, nil, graph.PubPending, "START")
	done := "00000000-0000-4000-8000-" + testenv.Token(6) + "000001"
	fx.Run(done, w.j1, nil, nil, graph.PubPublished, "START", "COMPLETE")
	fx.Exec(`MATCH (r:Run) WHERE r.key IN $ks SET r.firstEventAt = r.startedAt`, map[string]any{"ks": []string{w.openRun, done}})
	w.a, w.b, w.c = fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c.hidden")
	fx.Flow(w.j1, []string{w.a}, []string{w.b})
	fx.Input(w.a, w.j2, lineagetest.Leg{})
	fx.Output(w.j2, w.c, lineagetest.Leg{LastObserved: fx.Now.Add(-10 * 24 * time.Hour)})
	fa, fb := fx.Field(w.a, "x", fx.T0, time.Time{}), fx.Field(w.b, "x", fx.T0, time.Time{})
	fx.ColumnFeeds(fa, fb, w.j1)
	fx.Unresolved(fx.NS, "weird name", "max-length")
	fx.Unresolved(fx.NS, "hidden weird", "max-length")
	jobs := []inventory.Job{
		{Namespace: fx.NS, Name: "j1", Schedule: "@daily", Interval: 24 * time.Hour, Criticality: "high"},
		{Namespace: fx.NS, Name: "j2.hidden", Schedule: "@daily", Interval: 24 * time.Hour, Criticality: "high"},
		{Namespace: fx.NS, Name: "j3", Schedule: "@daily", Interval: 24 * time.Hour},
		{Namespace: fx.NS, Name: "j4"},
		{Namespace: fx.NS, Name: "j5", Schedule: "@hourly", Interval: time.Hour, Paused: true},
	}
	inv := inventory.Inventory{Source: w.source, Kind: inventory.KindList, Jobs: jobs}
	if err := inv.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewStore(store).Register(t.Context(), inv, "test", fx.Now); err != nil {
		t.Fatal(err)
	}
	cfg := trust.Config{RunGrace: 30 * time.Minute}
	var err error
	if w.svc, err = trust.NewService(truststore.NewStore(store), namePerms{}, cfg, fx.Clock()); err != nil {
		t.Fatal(err)
	}
	w.narrow, _ = trust.NewService(truststore.NewStore(store), namePerms{hide: "hidden"}, cfg, fx.Clock())
	return w
}

func figure(t *testing.T, svc *trust.Service, q trust.Query, sig trust.Signal) *trust.Figure {
	t.Helper()
	rep, err := svc.Report(t.Context(), authz.Principal{Subject: "t"}, q)
	if err != nil {
		t.Fatal(err)
	}
	f, err := rep.Figure(t.Context(), sig)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func itemNames(f *trust.Figure) []string {
	var out []string
	for _, it := range f.Items {
		out = append(out, it.Name+":"+it.Status)
	}
	slices.Sort(out)
	return out
}

func TestSignalsOnTheRealGraph(t *testing.T) {
	w := newWorld(t)
	q := trust.Query{Namespace: w.fx.NS}
	cases := []struct {
		sig      trust.Signal
		num, den int
		items    []string
	}{
		{trust.SignalJobsReporting, 1, 3, []string{"j2.hidden:LATE", "j3:NEVER_REPORTED"}},
		{trust.SignalJobsInstrumented, 3, 5, []string{"j3:NEVER_REPORTED", "j5:PAUSED"}},
		{trust.SignalRunsWithoutTerminal, 1, 2, []string{"j1:START"}},
		{trust.SignalEdgeFreshness, 1, 2, []string{"c.hidden:"}},
		{trust.SignalColumnLineage, 1, 2, []string{"c.hidden:"}},
		{trust.SignalUnresolvedIdentities, 2, 0, []string{"hidden weird:", "weird name:"}},
	}
	for _, c := range cases {
		f := figure(t, w.svc, q, c.sig)
		if f.Numerator != c.num || f.Denominator != c.den || !slices.Equal(itemNames(f), c.items) {
			t.Errorf("%s = %d/%d %v, want %d/%d %v", c.sig, f.Numerator, f.Denominator, itemNames(f), c.num, c.den, c.items)
		}
	}
	crit := figure(t, w.svc, trust.Query{Namespace: w.fx.NS, Criticality: "high"}, trust.SignalJobsReporting)
	if crit.Numerator != 1 || crit.Denominator != 2 {
		t.Errorf("criticality high: %d/%d, want 1/2", crit.Numerator, crit.Denominator)
	}
}

// A caller who may not see j2.hidden and c.hidden gets figures that neither count nor name them.
func TestSignalsNeverCountWhatIsHidden(t *testing.T) {
	w := newWorld(t)
	q := trust.Query{Namespace: w.fx.NS}
	cases := []struct {
		sig      trust.Signal
		num, den int
	}{
		{trust.SignalJobsReporting, 1, 2},
		{trust.SignalJobsInstrumented, 2, 4},
		{trust.SignalEdgeFreshness, 1, 1},
		{trust.SignalColumnLineage, 1, 1},
		{trust.SignalUnresolvedIdentities, 1, 0},
	}
	for _, c := range cases {
		f := figure(t, w.narrow, q, c.sig)
		if f.Numerator != c.num || f.Denominator != c.den {
			t.Errorf("%s = %d/%d, want %d/%d", c.sig, f.Numerator, f.Denominator, c.num, c.den)
		}
		for _, it := range f.Items {
			if strings.Contains(it.Name+it.Message, "hidden") {
				t.Errorf("%s names a hidden node: %+v", c.sig, it)
			}
		}
	}
	rep, _ := w.narrow.Report(t.Context(), authz.Principal{Subject: "t"}, q)
	if !rep.PermissionsFiltered() {
		t.Error("a narrow caller's report must say permissionsFiltered")
	}
}

// ExpectedWriters answers the gaps' question: which expected jobs that write these datasets are not reporting.
func TestExpectedWriters(t *testing.T) {
	w := newWorld(t)
	ns := w.fx.NS
	inv := inventory.Inventory{Source: w.source + "-w", Kind: inventory.KindList, Jobs: []inventory.Job{
		{Namespace: ns, Name: "j1", Interval: time.Hour, Outputs: []inventory.Dataset{{Namespace: ns, Name: "b"}}},
		{Namespace: ns, Name: "j2.hidden", Interval: time.Hour, Outputs: []inventory.Dataset{{Namespace: ns, Name: "b"}}},
		{Namespace: ns, Name: "j9", Interval: time.Hour, Outputs: []inventory.Dataset{{Namespace: ns, Name: "other"}}},
	}}
	if err := inv.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewStore(w.fx.Store).Register(t.Context(), inv, "test", w.fx.Now); err != nil {
		t.Fatal(err)
	}
	got, err := gapsource.New(w.narrow, truststore.NewStore(w.fx.Store), w.fx.Clock()).ExpectedWriters(t.Context(), authz.Principal{Subject: "t"}, []string{ns + "|b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "j1" || got[0].Status != rules.StatusReporting {
		t.Fatalf("writers of b as the narrow caller: %+v", got)
	}
}

// dbt node jobs (ADR 0027) match by (unique_id, role) or by a recorded name; a model's test job never counts for
// the model.
func TestDbtNodeJobsMatchByUniqueIDAndRole(t *testing.T) {
	store := testenv.Store(t)
	fx := lineagetest.New(t, store)
	node, tests := fx.Job("db.s.p.m.build.run"), fx.Job("db.s.p.m.build.test")
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.dbtUniqueId = 'model.p.m', j.dbtRole = 'NODE', j.names = ['db.s.p.m.build.run']`, map[string]any{"k": node})
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.dbtUniqueId = 'model.p.m', j.dbtRole = 'TESTS', j.names = ['db.s.p.m.build.test']`, map[string]any{"k": tests})
	other := fx.Job("renamed-by-a-later-command")
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.dbtUniqueId = 'model.p.other', j.dbtRole = 'NODE', j.names = ['db.s.p.other', 'renamed-by-a-later-command']`, map[string]any{"k": other})
	inv := inventory.Inventory{Source: "dbt-" + testenv.Token(6), Kind: inventory.KindDbt, Jobs: []inventory.Job{
		{Namespace: fx.NS, Name: "db.s.p.m", MatchNames: []string{"db.s.p.m"}, DbtUniqueID: "model.p.m", DbtMatches: []string{"model.p.m|NODE"}},
		{Namespace: fx.NS, Name: "test.p.t", MatchNames: []string{"test.p.t"}, DbtUniqueID: "test.p.t", DbtMatches: []string{"test.p.t|NODE", "model.p.m|TESTS"}},
		{Namespace: fx.NS, Name: "db.s.p.other", MatchNames: []string{"db.s.p.other"}, DbtUniqueID: "model.p.other"},
		{Namespace: fx.NS, Name: "db.s.p.never", MatchNames: []string{"db.s.p.never"}, DbtUniqueID: "model.p.never", DbtMatches: []string{"model.p.never|NODE"}},
	}}
	if err := inv.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewStore(store).Register(t.Context(), inv, "test", fx.Now); err != nil {
		t.Fatal(err)
	}
	svc, _ := trust.NewService(truststore.NewStore(store), namePerms{}, trust.Config{}, fx.Clock())
	rep, _ := svc.Report(t.Context(), authz.Principal{Subject: "t"}, trust.Query{Namespace: fx.NS})
	f, err := rep.Figure(t.Context(), trust.SignalJobsInstrumented)
	if err != nil {
		t.Fatal(err)
	}
	if f.Numerator != 3 || f.Denominator != 4 || len(f.Items) != 1 || f.Items[0].Name != "db.s.p.never" {
		t.Fatalf("instrumented %d/%d %v, want 3/4 with db.s.p.never", f.Numerator, f.Denominator, itemNames(f))
	}
	// The model's own job last ran three days ago, its test job now: the daily model is late, its test is not.
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.lastSeenAt = $t`, map[string]any{"k": node, "t": graph.Millis(fx.Now.Add(-72 * time.Hour))})
	rep, _ = svc.Report(t.Context(), authz.Principal{Subject: "t"}, trust.Query{Namespace: fx.NS})
	for i := range inv.Jobs {
		inv.Jobs[i].Interval, inv.Jobs[i].Schedule = 24*time.Hour, "@daily"
	}
	if _, err := registry.NewStore(store).Register(t.Context(), inv, "test", fx.Now); err != nil {
		t.Fatal(err)
	}
	f, err = rep.Figure(t.Context(), trust.SignalJobsReporting)
	if err != nil {
		t.Fatal(err)
	}
	if got := itemNames(f); f.Numerator != 2 || !slices.Equal(got, []string{"db.s.p.m:LATE", "db.s.p.never:NEVER_REPORTED"}) {
		t.Fatalf("reporting %d/%d %v: the model's test job must not count for the model", f.Numerator, f.Denominator, got)
	}
}
