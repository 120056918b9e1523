package grantstore

import (
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/graph"
)

func TestGraphNamesResolveJobsForHops(t *testing.T) {
	f := newFixture(t)
	jobNS := f.prefix + "-airflow"
	jk := graph.JobKey(jobNS, "dag.task")
	dk := graph.DatasetKey("prod", f.ns, "a.b")
	fk := graph.FieldKey(dk, "col", 0)
	_, err := neo4j.ExecuteQuery(f.ctx, f.store.store.Driver, `
MERGE (j:Job {key: $jk}) SET j.namespace = $jns, j.name = 'dag.task'
MERGE (d:Dataset {key: $dk}) SET d.namespace = $dns, d.name = 'a.b'
MERGE (fl:Field {key: $fk}) SET fl.datasetKey = $dk, fl.path = 'col'`,
		map[string]any{"jk": jk, "jns": jobNS, "dk": dk, "dns": f.ns, "fk": fk}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(f.store.store.Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = neo4j.ExecuteQuery(t.Context(), f.store.store.Driver,
			"MATCH (n:Job|Dataset|Field) WHERE n.key IN [$jk, $dk, $fk] DETACH DELETE n", map[string]any{"jk": jk, "dk": dk, "fk": fk},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(f.store.store.Database))
	})
	names, err := GraphNames{Store: f.store.store}.Names(f.ctx, []string{jk, fk, "job_unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if names[jk] != (grantpolicy.NodeName{Namespace: jobNS, Name: "dag.task"}) || names[fk] != (grantpolicy.NodeName{Namespace: f.ns, Name: "a.b"}) || len(names) != 2 {
		t.Fatalf("names: %+v", names)
	}
	// A policy with the resolver decides key-only job candidates by their names.
	pol, err := grantpolicy.NewGrantPolicy(f.ctx, f.store, grantpolicy.PolicyOptions{EnvironmentOf: envOfTest, Names: GraphNames{Store: f.store.store},
		Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("jobs")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("jobs"), Privilege: authz.PrivDescribe, On: prefix(jobNS, "dag")}},
		grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: f.prefix + "-eve", Role: f.role("jobs")}})
	eve := authz.Principal{Subject: f.prefix + "-eve"}
	if _, err := pol.Scope(f.ctx, eve); err != nil {
		t.Fatal(err)
	}
	got, err := describe(f.ctx, pol, eve, []authz.Candidate{{Kind: authz.KindJob, Key: jk}, {Kind: authz.KindJob, Key: "job_unknown"}})
	if err != nil {
		t.Fatal(err)
	}
	if !got[0] || got[1] {
		t.Errorf("allowed = %v, want [true false]", got)
	}
}
