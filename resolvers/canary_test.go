package resolvers

import (
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/canary"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/truststore"
)

// A canary "c.a reaches c.b through c.j", registered through GraphQL (audited), fails while the graph knows the
// dataset only under its old name (the rename to c.b was never reported): the check says c.b is not in the graph,
// coverage counts 0 of 1 with the failure and since when. Registering the alias (the symlink c.b -> the dataset
// the job writes, as the projector binds a `symlinks` facet) makes the next check pass: 1 of 1, failingSince
// cleared, 1 of 2 checks passed. Retiring it (audited) drops it from the figure. This is the GraphQL contract
// check (its alias is written as the projector writes it); e2e TestCanaryRecheckedAfterBatches registers the
// alias the way a user does, with an ingested event carrying the symlinks facet, and sees the canary pass.
func TestCanaryBrokenByUnreportedRenameFixedByAlias(t *testing.T) {
	h := newHarness(t)
	store := h.fx.Store
	fx := h.fx
	a, old := fx.Dataset("c.a"), fx.Dataset("c.b_old")
	fx.Flow(fx.Job("c.j"), []string{a}, []string{old})
	aud := &memAudit{}
	ts, err := trust.NewService(truststore.NewStore(store), nil, trust.Config{}, fx.Clock())
	if err != nil {
		t.Fatal(err)
	}
	d := testDeps{Store: store, Clock: fx.Clock(), Lineage: lineage.Config{CursorKey: testCursorKey}, Trust: ts,
		Canaries: canaries.NewService(canaries.NewStore(store), nil, nil, aud, fx.Clock())}
	h.srv = serveAs(t, d, "alice")
	name := fx.NS + "-orders-path"
	t.Cleanup(func() {
		fx.Exec(`MATCH (c:Canary {key: $k}) DETACH DELETE c`, map[string]any{"k": name})
	})
	var reg struct{ RegisterCanary struct{ Name string } }
	h.mustQuery(`mutation($in: CanaryInput!) { registerCanary(input: $in) { name } }`, map[string]any{"in": map[string]any{
		"name": name, "from": map[string]any{"namespace": fx.NS, "name": "c.a"},
		"to": map[string]any{"namespace": fx.NS, "name": "c.b"}, "job": map[string]any{"namespace": fx.NS, "name": "c.j"}}}, &reg)
	cat, err := catalog.New(store, catalog.Options{Policy: authz.AllowAll{}, Clock: fx.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	lin, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: testCursorKey}, Catalog: cat, Clock: fx.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	checker := canary.NewChecker(lin, cat, canaries.NewStore(store), fx.Clock(), nil)
	check := func() canaryFigure {
		t.Helper()
		if _, _, err := checker.CheckAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		return h.canaryFigure()
	}
	f := check()
	if f.Numerator != 0 || f.Denominator != 1 || len(f.Items) != 1 || !strings.Contains(f.Items[0].Message, fx.NS+" c.b is not in the graph") ||
		f.Items[0].Since == nil || !f.Items[0].Since.Equal(fx.Now) {
		t.Fatalf("before the alias: %+v", f)
	}
	fx.Exec(`MATCH (d:Dataset {key: $k}) MERGE (n:DatasetName {ident: $ident}) SET n.namespace = $ns, n.name = 'c.b', n.env = ''
MERGE (n)-[r:NAMES]->(d) SET r.kind = $kind, r.validFrom = $t0, r.validTo = $open`, map[string]any{"k": old,
		"ident": graph.DatasetIdent("", fx.NS, "c.b"), "ns": fx.NS, "kind": graph.NameSymlink, "t0": graph.Millis(fx.T0), "open": graph.OpenEnd})
	if f := check(); f.Numerator != 1 || f.Denominator != 1 || len(f.Items) != 0 {
		t.Fatalf("after the alias: %+v", f)
	}
	var list struct {
		Canaries []struct {
			Name           string
			Ok             *bool
			FailingSince   *string
			Checks, Passes int
		}
	}
	h.mustQuery(`{ canaries { name ok failingSince checks passes } }`, nil, &list)
	found := false
	for _, c := range list.Canaries {
		if c.Name == name {
			found = true
			if c.Ok == nil || !*c.Ok || c.FailingSince != nil || c.Checks != 2 || c.Passes != 1 {
				t.Errorf("canary %+v", c)
			}
		}
	}
	if !found {
		t.Fatalf("canaries lack %s: %+v", name, list)
	}
	var ret struct{ RetireCanary bool }
	h.mustQuery(`mutation($n: String!) { retireCanary(name: $n) }`, map[string]any{"n": name}, &ret)
	if f := h.canaryFigure(); f.Denominator != 0 {
		t.Errorf("retired canary still counted: %+v", f)
	}
	ops := map[string]bool{}
	for _, r := range aud.all() {
		ops[r.Operation+":"+string(r.Decision)] = true
	}
	if !ops[canaries.OpRegister+":"+"ALLOW"] || !ops[canaries.OpRetire+":"+"ALLOW"] {
		t.Errorf("audit records %v", ops)
	}
}

type canaryFigure struct {
	Numerator, Denominator int
	Items                  []struct {
		Name, Message string
		Since         *time.Time
	}
}

// canaryFigure is the canaries figure of the fixture's namespace (other tests' canaries share the database).
func (h *harness) canaryFigure() canaryFigure {
	h.t.Helper()
	var r struct {
		Coverage struct {
			Canaries struct {
				Numerator, Denominator int
				Items                  struct {
					Nodes []struct {
						Name, Message string
						Since         *time.Time
					}
				}
			}
		}
	}
	h.mustQuery(`query($ns: String) { coverage(namespace: $ns) { canaries { numerator denominator
  items(first: 500) { nodes { name message since } } } } }`, map[string]any{"ns": h.fx.NS}, &r)
	c := r.Coverage.Canaries
	return canaryFigure{Numerator: c.Numerator, Denominator: c.Denominator, Items: c.Items.Nodes}
}

// hiddenCanary registers a failing canary from visible pub.mid to the hidden H1 (its name a secret): the narrow
// principals' coverage must neither count nor name it.
func (w *world) hiddenCanary() {
	fx := w.fx
	st := canaries.NewStore(fx.Store)
	name := w.hidden("canary")
	h1 := w.secrets[0] // the hidden H1's name
	c := canaries.Canary{Name: name, From: canaries.End{Namespace: fx.NS, Name: "pub.mid"},
		To: canaries.End{Namespace: fx.NS, Name: h1}, RegisteredAt: fx.Now}
	if err := st.Put(w.t.Context(), c); err != nil {
		w.t.Fatal(err)
	}
	if err := st.SetCheck(w.t.Context(), name, fx.Now, false, "pub.mid does not reach "+h1); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { fx.Exec(`MATCH (c:Canary {key: $k}) DETACH DELETE c`, map[string]any{"k": name}) })
}
