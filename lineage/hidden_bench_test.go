package lineage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// buildHub writes pub.hub -(pub.j)-> three visible outputs and hidden more outputs named sec.*, in bulk.
func buildHub(fx *lineagetest.Fixture, hidden int) {
	var ds, outs []any
	add := func(n string) {
		k := graph.DatasetKey("", fx.NS, n)
		ds = append(ds, map[string]any{"key": k, "name": n, "ident": graph.DatasetIdent("", fx.NS, n)})
		outs = append(outs, k)
	}
	for i := range 3 {
		add(fmt.Sprintf("pub.out%d", i))
	}
	for i := range hidden {
		add(fmt.Sprintf("sec.out%04d", i))
	}
	fx.Exec(`UNWIND $ds AS d MERGE (x:Dataset {key: d.key}) SET x.namespace = $ns, x.name = d.name, x.env = '', x.tags = []
MERGE (n:DatasetName {ident: d.ident}) SET n.namespace = $ns, n.name = d.name, n.env = ''
MERGE (n)-[r:NAMES]->(x) SET r.kind = 'PRIMARY', r.validFrom = $t0, r.validTo = $open`,
		map[string]any{"ds": ds, "ns": fx.NS, "t0": graph.Millis(fx.T0), "open": graph.OpenEnd})
	hub, job := fx.Dataset("pub.hub"), fx.Job("pub.j")
	leg := map[string]any{"kind": graph.KindObserved, "froms": []any{graph.Millis(fx.T0)}, "tos": []any{graph.OpenEnd},
		"pubs": []any{graph.PubPublished}, "validTo": graph.OpenEnd, "firstObservedAt": graph.Millis(fx.T0),
		"lastObservedAt": graph.Millis(fx.Now.Add(-time.Hour)), "producer": "https://bench", "lastRunState": "COMPLETE"}
	fx.Exec(`MATCH (h:Dataset {key: $hub}), (j:Job {key: $job}) CREATE (h)-[a:INPUT_TO]->(j) SET a = $leg
WITH j UNWIND $outs AS o MATCH (d:Dataset {key: o}) CREATE (j)-[b:OUTPUT_TO]->(d) SET b = $leg`,
		map[string]any{"hub": hub, "job": job, "outs": outs, "leg": leg})
}

// BenchmarkHiddenDegree is the uncached latency (P50/P99) of a narrow principal's one-hop lineage of a visible hub
// with three visible outputs and 0 or 990 hidden ones (issue 13 item 11: latency must not tell the hidden degree),
// in OMIT and REDACT mode. `go test ./lineage -run XXX -bench HiddenDegree -benchtime 200x`
func BenchmarkHiddenDegree(b *testing.B) {
	store := testenv.Store(b)
	gs := grantstore.NewGrantStore(store, time.Now)
	red, err := authz.NewRedactor("bench-redact-key-0123456789abcdef0123")
	if err != nil {
		b.Fatal(err)
	}
	for _, hidden := range []int{0, 990} {
		fx := lineagetest.New(b, store)
		buildHub(fx, hidden)
		narrow, role := fx.NS+"-narrow", fx.NS+"-rnarrow"
		if _, err := gs.Apply(context.Background(), "bench", []grant.Change{
			{Op: grant.OpCreateRole, Role: &grant.Role{Name: role}},
			{Op: grant.OpGrant, Grant: &grant.Grant{Role: role, Privilege: authz.PrivViewLineage,
				On: grant.Securable{Kind: grant.SecPrefix, Namespace: fx.NS, Name: "pub"}}},
			{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: narrow, Role: role}},
		}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_, _ = gs.Apply(context.Background(), "bench-cleanup", []grant.Change{{Op: grant.OpDeleteRole, Role: &grant.Role{Name: role}}})
		})
		for _, mode := range []authz.HiddenMode{authz.HiddenOmit, authz.HiddenRedact} {
			pol, err := grantpolicy.NewGrantPolicy(context.Background(), gs, grantpolicy.PolicyOptions{Names: grantstore.GraphNames{Store: store},
				EpochCheckInterval: time.Second, Settings: authz.Settings{HiddenNeighbours: mode}})
			if err != nil {
				b.Fatal(err)
			}
			svc, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123"},
				Policy: pol, Redactor: red, Clock: fx.Clock(), Catalog: newCatalog(b, store, pol, red, fx.Clock())})
			if err != nil {
				b.Fatal(err)
			}
			args := lineage.LineageArgs{Start: api.NodeRef{Dataset: &api.DatasetRef{Namespace: fx.NS, Name: "pub.hub"}},
				Direction: api.Downstream, Depth: 1, Granularity: api.GranDataset}
			b.Run(fmt.Sprintf("%s/hidden_%d", mode, hidden), func(b *testing.B) {
				ctx := authz.WithPrincipal(context.Background(), authz.Principal{Subject: narrow, Kind: "user"})
				var lat []time.Duration
				var nodes int
				for b.Loop() {
					t0 := time.Now()
					g, err := svc.Lineage(ctx, args)
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					nodes = len(g.Nodes)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(nodes), "nodes")
			})
		}
	}
}
