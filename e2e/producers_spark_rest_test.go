package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 18, "lineage of a Spark job through the REST catalog lands on the synced table node": real Spark 3.5 with
// the OpenLineage listener and iceberg-spark-runtime creates a table in the fixture REST catalog (CTAS) and
// appends to it; the catalog sync then records the table. The table Spark wrote is the synced table (one node:
// the catalog's name, its uuid alias), its last writer is the Spark run, and the snapshot of the append is
// written by that run (its output's version facet names the snapshot id).
func TestSparkThroughTheRESTCatalogLandsOnTheSyncedTable(t *testing.T) {
	home, jars := sparkHome(t)
	p := newProducerRun(t, "sparkrest")
	src, _ := filepath.Abs("testdata/producers/spark")
	copyTree(t, src, p.work)
	events := filepath.Join(p.work, "events.jsonl")
	uri := testenv.IcebergURI()
	db := "hw_sparkrest_" + testenv.Token(4)
	env := []string{"SPARK_LOCAL_IP=127.0.0.1", "PYSPARK_PYTHON=" + filepath.Join(home, "venv", "bin", "python")}
	p.run(t, p.work, env, 0, filepath.Join(home, "venv", "bin", "python"), filepath.Join(p.work, "rest_job.py"),
		p.work, p.url(), token, p.jobNS, events, strings.Join(jars, ","), uri, db)
	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)

	cat := "fx-sparkrest-" + testenv.Token(4)
	icebergSync(t, p.store, p.api, uri, cat, db)

	o := &ownTest{t: t, api: p.api}
	v := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name aliases { namespace kind }
		lastWrittenBy { job { namespace name } }
		versions(first: 10) { nodes { version operation writtenBy { job { namespace } } } } } }`,
		map[string]any{"ns": uri, "n": db + ".orders"})
	b, _ := json.Marshal(v["dataset"])
	var d struct {
		ID, Name string
		Aliases  []struct{ Namespace, Kind string }
		Last     *struct {
			Job struct{ Namespace, Name string }
		} `json:"lastWrittenBy"`
		Versions struct {
			Nodes []struct {
				Version, Operation string
				WrittenBy          []struct{ Job struct{ Namespace string } }
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	uuidBound := false
	for _, a := range d.Aliases {
		uuidBound = uuidBound || a.Namespace == "iceberg://"+cat
	}
	if !uuidBound || d.Last == nil || d.Last.Job.Namespace != p.jobNS {
		t.Fatalf("the synced table %s: %s; want its uuid alias in iceberg://%s and the Spark run of %s as its last writer", db+".orders", b, cat, p.jobNS)
	}
	byRun := 0
	for _, n := range d.Versions.Nodes {
		for _, w := range n.WrittenBy {
			if w.Job.Namespace == p.jobNS {
				byRun++
			}
		}
	}
	if len(d.Versions.Nodes) < 2 || byRun < 1 {
		t.Errorf("the table's snapshots %s: want the CTAS and the append, at least one written by the Spark run", b)
	}
	// no second node for the table under the location Spark may also report it by
	recs, err := p.store.ReadRecords(t.Context(), `MATCH (d:Dataset) WHERE d.name = $name OR d.name ENDS WITH $location
		RETURN d.namespace AS ns, d.name AS n`, map[string]any{"name": db + ".orders", "location": db + "/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("%d nodes for the table, want one: %v", len(recs), recs)
	}
}
