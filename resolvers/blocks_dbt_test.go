package resolvers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// TestEdgeBlockThroughADbtNodeJob (ADR 0082): a dbt node's job is keyed by its unique_id (ADR 0027), not by
// JobKey(namespace, name); an edge block naming it by one of the names it was reported under (pub.proj.m's
// build name) still stops the flow at that edge, BLOCKED with who and why, and pub.dbtdst.c is not reached.
func TestEdgeBlockThroughADbtNodeJob(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	fx := w.fx
	src, dst := fx.Dataset("pub.dbtsrc"), fx.Dataset("pub.dbtdst")
	job := "dbt-node-" + testenv.Token(6)
	fx.Exec(`CREATE (j:Job {key: $k, namespace: $ns, name: 'pub.proj.m', searchName: 'pub.proj.m', processingType: 'BATCH',
  dbtUniqueId: 'model.proj.m', dbtRole: 'NODE', names: ['pub.proj.m', 'pub.proj.m.build.run'], firstSeenAt: $t0, lastSeenAt: $now})`,
		map[string]any{"k": job, "ns": fx.NS, "t0": graph.Millis(fx.T0), "now": graph.Millis(fx.Now)})
	fx.Flow(job, []string{src}, []string{dst})
	srcC, dstC := fx.Field(src, "c", fx.T0, time.Time{}), fx.Field(dst, "c", fx.T0, time.Time{})
	fx.ColumnFeeds(srcC, dstC, job, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY"})
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tags = ['c:pii']`, map[string]any{"k": src})
	blocks, _ := json.Marshal([]graph.BlockInterval{{Field: "c", By: "gov-admin", Reason: "the model hashes it", ValidFrom: 1,
		ValidTo: graph.OpenEnd, Edge: &graph.BlockEdge{JobNamespace: fx.NS, JobName: "pub.proj.m.build.run",
			JobKey: graph.JobKey(fx.NS, "pub.proj.m.build.run"), Namespace: fx.NS, Name: "pub.dbtsrc", Field: "c"}}})
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.blockHistory = $b`, map[string]any{"k": dst, "b": string(blocks)})

	body := w.post(w.admin, leakPiiFlowQ, map[string]any{"from": map[string]any{"field": map[string]any{
		"namespace": fx.NS, "name": "pub.dbtsrc", "field": "c"}}})
	var a piiFlowAnswer
	if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) > 0 {
		t.Fatalf("piiFlow: %v %s", err, body)
	}
	if got := reachedNames(a); got != "" {
		t.Errorf("the edge through the dbt node's job is blocked, yet reached %s\n%s", got, body)
	}
	if !strings.Contains(string(body), `"reason":"BLOCKED"`) || !strings.Contains(string(body), "BLOCKED by gov-admin: the model hashes it") {
		t.Errorf("want a BLOCKED stop with who and why at the edge:\n%s", body)
	}
}
