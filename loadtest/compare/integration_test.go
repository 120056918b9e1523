package compare_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/catalog/eventstatus"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/loadtest/compare"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/resolvers"
	"github.com/headwater-data/headwater/search"
)

const day = 24 * time.Hour

// fixture is a small world loaded by the history loader under a unique prefix, plus two declared
// dataset-to-dataset relationships (the loader writes none): one in force, one closed and ATTEMPTED.
type fixture struct {
	store *graph.Store
	world *gen.World
	end   time.Time
	ref   reference
}

func load(t *testing.T) *fixture {
	t.Helper()
	store := testenv.Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	end := time.Now().UTC().Truncate(time.Second)
	c := gen.DefaultConfig(11, end)
	c.Prefix, c.Datasets, c.RunsPerDay, c.HubConsumers = testenv.Namespace(t), 200, 100, 20
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.NewLoader(store, history.Config{World: w, HistoryDays: 365, RunDays: 0, BatchRows: 1000,
		Writers: 2, End: end}, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx); err != nil {
		t.Fatalf("load: %v", err)
	}
	fx := &fixture{store: store, world: w, end: end}
	fx.declare(ctx, t)
	fx.ref = readReference(ctx, t, store, c.Prefix)
	return fx
}

// declare adds leaf -> hub's first consumer output style edges: DECLARED_FEEDS from two leaves to a hub
// (an in-force PUBLISHED one and a closed ATTEMPTED one), so walks through declared lineage are exercised.
func (fx *fixture) declare(ctx context.Context, t *testing.T) {
	t.Helper()
	leaves := fx.world.Leaves()
	hub := fx.world.Datasets[fx.world.Hubs[0]]
	end := fx.end.UnixMilli()
	for i, rel := range []struct {
		froms, tos []int64
		pub        string
	}{
		{[]int64{end - 300*day.Milliseconds()}, []int64{graph.OpenEnd}, graph.PubPublished},
		{[]int64{end - 300*day.Milliseconds()}, []int64{end - 10*day.Milliseconds()}, graph.PubAttempted},
	} {
		from := fx.world.Datasets[leaves[i]]
		_, err := neo4j.ExecuteQuery(ctx, fx.store.Driver, `MATCH (a:Dataset {namespace: $ans, name: $an}), (b:Dataset {namespace: $bns, name: $bn})
CREATE (a)-[:DECLARED_FEEDS {kind: 'DECLARED', froms: $froms, tos: $tos, pubs: [$pub], validTo: $tos[size($tos)-1],
  firstObservedAt: $froms[0], lastObservedAt: $froms[0], producer: 'compare-test', eventIds: [], derivation: 'lineageFacet',
  jobVersion: '', lastRunId: '', lastRunState: '', normVersion: 'compare-test'}]->(b)`,
			map[string]any{"ans": from.Namespace, "an": from.Name, "bns": hub.Namespace, "bn": hub.Name,
				"froms": rel.froms, "tos": rel.tos, "pub": rel.pub},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(fx.store.Database))
		if err != nil {
			t.Fatalf("declare: %v", err)
		}
	}
}

// canon maps the prefix's staging namespaces to "staging" like the service's --identity-environments.
type canon struct{ envs map[string]string }

func (c canon) Dataset(ns, name string) (string, string, string, error) {
	if env, ok := c.envs[ns]; ok {
		return env, ns, name, nil
	}
	return gen.EnvProd, ns, name, nil
}
func (canon) Job(ns, name string) (string, string, error) { return ns, name, nil }

var _ catalog.Canonicalizer = canon{}

// headwater serves the real GraphQL handler in-process (allow-all policy, no Redis: uncached).
func (fx *fixture) headwater(t *testing.T, doer func(http.RoundTripper) http.RoundTripper, maxNodes int) *compare.Headwater {
	t.Helper()
	const key = "compare-test-cursor-key-0123456789abcdef"
	cat, err := catalog.New(fx.store, catalog.Options{Canon: canon{gen.Environments(fx.world.Config.Prefix)}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := lineage.NewService(fx.store, lineage.Options{Config: lineage.Config{CursorKey: key}, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	srch, err := search.New(fx.store, cat, search.Options{CursorKey: key})
	if err != nil {
		t.Fatal(err)
	}
	events := eventstatus.New(fx.store, cat, eventstatus.Options{CursorKey: key})
	h, err := resolvers.NewHandler(resolvers.Deps{Lineage: svc, Catalog: cat, Search: srch, Events: events,
		Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), authz.Principal{Subject: "compare", Kind: "user"})))
	}))
	t.Cleanup(srv.Close)
	rt := http.DefaultTransport
	if doer != nil {
		rt = doer(rt)
	}
	return &compare.Headwater{URL: srv.URL, Client: &http.Client{Transport: rt}, MaxNodes: maxNodes,
		Timeout: 30 * time.Second, MaxPages: 500}
}

func (fx *fixture) naive() *compare.Naive {
	return &compare.Naive{Driver: fx.store.Driver, Database: fx.store.Database, Timeout: 30 * time.Second}
}

func root(d gen.Dataset) compare.Root {
	return compare.Root{Namespace: d.Namespace, Name: d.Name}
}

// roots: the hub, the two leaves with declared edges, and mid-graph datasets (lineage both ways).
func (fx *fixture) roots() []compare.Root {
	w := fx.world
	hub := root(w.Datasets[w.Hubs[0]])
	hub.Hub = true
	leaves := w.Leaves()
	out := []compare.Root{hub, root(w.Datasets[leaves[0]]), root(w.Datasets[leaves[1]]), root(w.Datasets[leaves[len(leaves)-1]])}
	mid := 0
	for _, d := range w.Datasets {
		if d.Layer == 2 && mid < 3 {
			out = append(out, root(d))
			mid++
		}
	}
	return out
}

// widest returns the n datasets with the most consumer jobs (wide first hops, so fan-out budgets split them).
func (fx *fixture) widest(n int) []compare.Root {
	cons := fx.world.Consumers()
	ids := make([]int, 0, len(cons))
	for id := range cons {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int) int {
		if cons[a] != cons[b] {
			return cons[b] - cons[a]
		}
		return a - b
	})
	var out []compare.Root
	for _, id := range ids[:min(n, len(ids))] {
		out = append(out, root(fx.world.Datasets[id]))
	}
	return out
}
