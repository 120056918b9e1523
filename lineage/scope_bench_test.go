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

// benchFan is the fan-out of the benchmark tree: root -> 15 -> 225 -> 3375 datasets (3,616 datasets, 241 jobs).
const benchFan = 15

// buildTree writes a 3-level downstream tree in bulk: every dataset of level l feeds benchFan datasets of level
// l+1 through one job. Every other child is named "sec.*" (hidden from the narrow principal), the rest "pub.*".
func buildTree(b *testing.B, fx *lineagetest.Fixture) {
	var ds []map[string]any
	var flows []map[string]any
	name := func(parent string, i int) string {
		if i%2 == 1 {
			return fmt.Sprintf("sec.%s_%02d", parent, i)
		}
		return fmt.Sprintf("pub.%s_%02d", parent, i)
	}
	level := []string{"pub.root"}
	ds = append(ds, map[string]any{"key": graph.DatasetKey("", fx.NS, "pub.root"), "name": "pub.root", "ident": graph.DatasetIdent("", fx.NS, "pub.root")})
	for lvl := range 3 {
		var next []string
		for _, parent := range level {
			var outs []any
			for i := range benchFan {
				n := name(fmt.Sprintf("l%d_%d", lvl, len(next)), i)
				next = append(next, n)
				k := graph.DatasetKey("", fx.NS, n)
				ds = append(ds, map[string]any{"key": k, "name": n, "ident": graph.DatasetIdent("", fx.NS, n)})
				outs = append(outs, k)
			}
			jn := "pub.job_" + parent
			flows = append(flows, map[string]any{"job": graph.JobKey(fx.NS, jn), "jname": jn,
				"in": graph.DatasetKey("", fx.NS, parent), "outs": outs})
		}
		level = next
	}
	leg := map[string]any{"kind": graph.KindObserved, "froms": []any{graph.Millis(fx.T0)}, "tos": []any{graph.OpenEnd},
		"pubs": []any{graph.PubPublished}, "validTo": graph.OpenEnd, "firstObservedAt": graph.Millis(fx.T0),
		"lastObservedAt": graph.Millis(fx.Now.Add(-time.Hour)), "producer": "https://bench", "lastRunState": "COMPLETE"}
	fx.Exec(`UNWIND $ds AS d MERGE (x:Dataset {key: d.key}) SET x.namespace = $ns, x.name = d.name, x.env = '', x.tags = []
MERGE (n:DatasetName {ident: d.ident}) SET n.namespace = $ns, n.name = d.name, n.env = ''
MERGE (n)-[r:NAMES]->(x) SET r.kind = 'PRIMARY', r.validFrom = $t0, r.validTo = $open`,
		map[string]any{"ds": toAnyMaps(ds), "ns": fx.NS, "t0": graph.Millis(fx.T0), "open": graph.OpenEnd})
	fx.Exec(`UNWIND $flows AS f MERGE (j:Job {key: f.job}) SET j.namespace = $ns, j.name = f.jname
WITH f, j MATCH (i:Dataset {key: f.in}) CREATE (i)-[a:INPUT_TO]->(j) SET a = $leg
WITH f, j UNWIND f.outs AS o MATCH (d:Dataset {key: o}) CREATE (j)-[b:OUTPUT_TO]->(d) SET b = $leg`,
		map[string]any{"flows": toAnyMaps(flows), "ns": fx.NS, "leg": leg})
}

func toAnyMaps(in []map[string]any) []any {
	out := make([]any, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// BenchmarkScopedLineage compares the 3-hop lineage latency (P50/P99) of a narrow principal (lineage on pub.*
// only) with an admin (ROOT) on the same 3,616-dataset tree, without cache so every hop reads Neo4j and runs the
// batched check. `go test ./lineage -run XXX -bench ScopedLineage -benchtime 200x`
func BenchmarkScopedLineage(b *testing.B) {
	store := testenv.Store(b)
	fx := lineagetest.New(b, store)
	buildTree(b, fx)
	gs := grantstore.NewGrantStore(store, time.Now)
	admin, narrow := fx.NS+"-admin", fx.NS+"-narrow"
	roleA, roleN := fx.NS+"-radmin", fx.NS+"-rnarrow"
	_, err := gs.Apply(context.Background(), "bench", []grant.Change{
		{Op: grant.OpCreateRole, Role: &grant.Role{Name: roleA}}, {Op: grant.OpCreateRole, Role: &grant.Role{Name: roleN}},
		{Op: grant.OpGrant, Grant: &grant.Grant{Role: roleA, Privilege: authz.PrivViewLineage, On: grant.Root()}},
		{Op: grant.OpGrant, Grant: &grant.Grant{Role: roleN, Privilege: authz.PrivViewLineage,
			On: grant.Securable{Kind: grant.SecPrefix, Namespace: fx.NS, Name: "pub"}}},
		{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: admin, Role: roleA}},
		{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: narrow, Role: roleN}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = gs.Apply(context.Background(), "bench-cleanup", []grant.Change{
			{Op: grant.OpDeleteRole, Role: &grant.Role{Name: roleA}}, {Op: grant.OpDeleteRole, Role: &grant.Role{Name: roleN}}})
	})
	pol, err := grantpolicy.NewGrantPolicy(context.Background(), gs, grantpolicy.PolicyOptions{Names: grantstore.GraphNames{Store: store},
		EpochCheckInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	svc, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123",
		MaxNodes: 5000, FanOut: 200}, Policy: pol, Clock: fx.Clock(), Catalog: newCatalog(b, store, pol, nil, fx.Clock())})
	if err != nil {
		b.Fatal(err)
	}
	args := lineage.LineageArgs{Start: api.NodeRef{Dataset: &api.DatasetRef{Namespace: fx.NS, Name: "pub.root"}},
		Direction: api.Downstream, Depth: 3, Granularity: api.GranDataset, MaxNodes: 5000}
	for _, who := range []string{admin, narrow} {
		name := "admin"
		if who == narrow {
			name = "narrow"
		}
		b.Run(name, func(b *testing.B) {
			ctx := authz.WithPrincipal(context.Background(), authz.Principal{Subject: who, Kind: "user"})
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
