package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

const unreportedQuery = `query($ns: String!, $n: String!) { lineage(start: {dataset: {namespace: $ns, name: $n}}, direction: UPSTREAM, depth: 1) {
	nodes { id } gaps { kind numerator denominator message nodes since } } }`

type gapAnswer struct {
	Kind                   string
	Numerator, Denominator *int
	Message                string
	Nodes                  []string
	Since                  *string
}

func unreportedGaps(t *testing.T, o *ownTest, ns, name string) []gapAnswer {
	t.Helper()
	b, _ := json.Marshal(o.gql(t, unreportedQuery, map[string]any{"ns": ns, "n": name})["lineage"].(map[string]any)["gaps"])
	var all []gapAnswer
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var out []gapAnswer
	for _, g := range all {
		if g.Kind == "UNREPORTED_WRITE" {
			out = append(out, g)
		}
	}
	return out
}

// Issue 18, "writes nobody reported" (docs/adr/0050-unreported-writes.md): pyiceberg commits two appends to a
// table with no OpenLineage event; the sync records both snapshots. A Spark-like run then reports writing the
// first (its output's version facet names the snapshot id, as the Iceberg integration sends it). Past the write
// grace the table's lineage answer carries one UNREPORTED_WRITE gap, 1 of its 2 commits, dated at the second;
// once a run reports the second, the gap is gone.
func TestCatalogCommitsNoRunReportedAreGaps(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api, metrics := freePort(t), freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+t.TempDir(),
		"--trust-write-grace=1s", "--lineage-trust-gaps-ttl=-1s")
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-unreported-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_unrep_"+tok, "fx-unrep-"+tok
	orders := ns + ".orders"

	icebergStep(t, "create", ns)
	first := icebergStep(t, "append-1", ns)["snapshot"]
	second := icebergStep(t, "append-2", ns)["snapshot"]
	icebergSync(t, store, api, uri, cat, ns)

	report := func(snapshot any) {
		t.Helper()
		ev := o.run(o.jobNS, nil, []map[string]any{o.ds(uri, orders, map[string]any{
			"version": map[string]any{"datasetVersion": snapshotText(snapshot)}})})
		code, body := o.post(t, token, ev)
		if code != 202 {
			t.Fatalf("run event: %d %v", code, body)
		}
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}
	report(first)
	time.Sleep(1500 * time.Millisecond) // past the write grace

	d := icebergDataset(t, o, uri, orders, nil)
	if d == nil || len(d.Versions.Nodes) != 2 {
		t.Fatalf("the table's versions: %+v, want the two snapshots", d)
	}
	gaps := unreportedGaps(t, o, uri, orders)
	if len(gaps) != 1 || *gaps[0].Numerator != 1 || *gaps[0].Denominator != 2 || len(gaps[0].Nodes) != 1 || gaps[0].Nodes[0] != d.ID ||
		!strings.Contains(gaps[0].Message, "1 of the last 2 commits to this table came from no instrumented job") || gaps[0].Since == nil {
		t.Fatalf("UNREPORTED_WRITE gaps %+v, want one: 1 of 2 on %s", gaps, d.ID)
	}
	var committed string
	for _, v := range d.Versions.Nodes {
		if v.Version == snapshotText(second) && v.CommittedAt != nil {
			committed = *v.CommittedAt
		}
	}
	if at, _ := time.Parse(time.RFC3339Nano, *gaps[0].Since); committed == "" || !at.Equal(mustTime(t, committed)) {
		t.Errorf("the gap's since %s, want the second snapshot's commit %s", *gaps[0].Since, committed)
	}

	// The coverage figure of the catalog's namespace says the same: 1 of 2 commits reported, the table named.
	// The items are paged through: the catalog's namespace holds every test's tables on a reused stack.
	var fig struct {
		Signal                 string
		Numerator, Denominator int
		Items                  struct {
			Nodes []struct {
				Kind, Name, Message string
				Count               int
			}
			EndCursor *string
		}
	}
	var mine []string
	var b []byte
	for after := (*string)(nil); ; after = fig.Items.EndCursor {
		cov := o.gql(t, `query($ns: String, $after: String) { coverage(namespace: $ns) { reportedWrites { signal numerator denominator
			items(first: 100, after: $after) { nodes { kind name count message } endCursor } } } }`, map[string]any{"ns": uri, "after": after})
		b, _ = json.Marshal(cov["coverage"].(map[string]any)["reportedWrites"])
		fig.Items.EndCursor = nil
		if err := json.Unmarshal(b, &fig); err != nil {
			t.Fatal(err)
		}
		for _, it := range fig.Items.Nodes {
			if it.Name == orders {
				mine = append(mine, fmt.Sprintf("%s %d %s", it.Kind, it.Count, it.Message))
			}
		}
		if fig.Items.EndCursor == nil || len(fig.Items.Nodes) == 0 {
			break
		}
	}
	if fig.Signal != "reported_writes" || fig.Denominator < 2 || len(mine) != 1 ||
		!strings.HasPrefix(mine[0], "DATASET 1 ") || !strings.Contains(mine[0], "1 of 2 commits in the window came from no instrumented job") {
		t.Errorf("coverage reportedWrites: %s; this table's items %v, want one: 1 of 2 unreported", b, mine)
	}

	// Which run produced which snapshot: the first names the reporting run's job, the second none yet.
	writers := func() map[string][]string {
		t.Helper()
		v := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { versions(first: 10) {
			nodes { version writtenBy { runId job { namespace name } } } } } }`, map[string]any{"ns": uri, "n": orders})
		b, _ := json.Marshal(v["dataset"].(map[string]any)["versions"].(map[string]any)["nodes"])
		var nodes []struct {
			Version   string
			WrittenBy []struct {
				RunID string
				Job   struct{ Namespace, Name string }
			}
		}
		if err := json.Unmarshal(b, &nodes); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, n := range nodes {
			out[n.Version] = []string{}
			for _, w := range n.WrittenBy {
				out[n.Version] = append(out[n.Version], w.Job.Namespace)
			}
		}
		return out
	}
	if w := writers(); len(w[snapshotText(first)]) != 1 || w[snapshotText(first)][0] != o.jobNS || len(w[snapshotText(second)]) != 0 {
		t.Errorf("writtenBy per snapshot: %v, want the first written by a run of %s, the second by none", w, o.jobNS)
	}

	report(second)
	if w := writers(); len(w[snapshotText(second)]) != 1 {
		t.Errorf("after the second report, writtenBy: %v", w)
	}
	if gaps := unreportedGaps(t, o, uri, orders); len(gaps) != 0 {
		t.Errorf("after a run reported the second snapshot: %+v, want no UNREPORTED_WRITE", gaps)
	}
}

// snapshotText is a snapshot id as the driver prints it (text: Iceberg's ids are 64-bit).
func snapshotText(v any) string {
	s, _ := v.(string)
	return s
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
