package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
)

// The upgrade fixtures (testdata/upgrade-v1/README.md, testdata/upgrade-v2/README.md): a graph and a raw-event
// archive written by projection version 1's own binary (commit db621b7), and by version 2's (6463f7a), and what
// each binary answered through GraphQL.
const (
	fixtureDir   = "testdata/upgrade-v1"
	fixtureDirV2 = "testdata/upgrade-v2"
)

// v1Graph is graph.json, as gen/export.go writes it.
type v1Graph struct {
	Namespace string `json:"namespace"`
	Nodes     []struct {
		Labels []string                   `json:"labels"`
		Props  map[string]json.RawMessage `json:"props"`
	} `json:"nodes"`
	Rels []struct {
		Type  string                     `json:"type"`
		From  int                        `json:"from"`
		To    int                        `json:"to"`
		Props map[string]json.RawMessage `json:"props"`
	} `json:"rels"`
}

// v1Answers is ids.json: version 1's GraphQL answers and the world's runIds and event ids.
type v1Answers struct {
	Namespace  string            `json:"namespace"`
	Principals map[string]string `json:"principals"`
	Datasets   []struct {
		Ask    [2]string      `json:"ask"`
		Answer map[string]any `json:"answer"`
	} `json:"datasets"`
	Jobs []struct {
		Ask    [2]string      `json:"ask"`
		Answer map[string]any `json:"answer"`
	} `json:"jobs"`
	SharedRun map[string]any `json:"sharedRun"`
	Lineage   map[string]any `json:"lineage"`
	// upgrade-v2 only: the searches, the hive table's column lineage and the API-granted reader's answer
	Search          map[string]map[string]any `json:"search"`
	IdentityLineage map[string]any            `json:"identityLineage"`
	ReaderDataset   map[string]any            `json:"readerDataset"`
	// upgrade-v9 only: email_h's upstream column lineage at minutes "171" and "175" (gen/maskchange.go)
	MaskChange map[string]any `json:"maskChange"`
	World      struct {
		Runs     map[string]string `json:"runs"`
		EventIDs map[string]string `json:"eventIds"`
		T0       time.Time         `json:"t0"` // the world's minute 0
	} `json:"world"`
}

func readFixture(t *testing.T) (*v1Graph, *v1Answers) {
	t.Helper()
	return readFixtureDir(t, fixtureDir)
}

func readFixtureDir(t *testing.T, fixtureDir string) (*v1Graph, *v1Answers) {
	t.Helper()
	var g v1Graph
	var a v1Answers
	for name, v := range map[string]any{"graph.json": &g, "ids.json": &a} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if g.Namespace == "" || g.Namespace != a.Namespace {
		t.Fatalf("fixture namespaces %q and %q", g.Namespace, a.Namespace)
	}
	return &g, &a
}

// fixtureScopes are the namespace prefixes the fixture's world lives under.
func fixtureScopes(fx string) []string {
	return []string{fx + "-", "s3://" + fx + "-", "postgres://" + fx + "-", "hive://" + fx + "-", "mysql://" + fx + "-",
		"hdfs://" + fx + "-", "kafka://" + fx + "-", "snowflake://" + fx + "-", "http://" + fx + "-", "iceberg://" + fx + "-"}
}

// lockFixture serializes this test across every worktree of the machine: the fixture is loaded under its own fixed
// namespace (its keys are hashes of its identities), and the stack is shared by all of them.
func lockFixture(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "headwater-e2e-upgrade-v1.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() })
}

// fixtureValue decodes one typed property value of the export.
func fixtureValue(raw json.RawMessage) (any, error) {
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 1 {
		return nil, fmt.Errorf("property value %s: want one type tag", raw)
	}
	for tag, v := range tagged {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		switch tag {
		case "s":
			var s string
			return s, dec.Decode(&s)
		case "b":
			var b bool
			return b, dec.Decode(&b)
		case "i":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return nil, err
			}
			return n.Int64()
		case "f":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return nil, err
			}
			return n.Float64()
		case "y":
			var s string
			if err := dec.Decode(&s); err != nil {
				return nil, err
			}
			return base64.StdEncoding.DecodeString(s)
		case "l":
			var items []json.RawMessage
			if err := dec.Decode(&items); err != nil {
				return nil, err
			}
			out := make([]any, 0, len(items))
			for _, it := range items {
				x, err := fixtureValue(it)
				if err != nil {
					return nil, err
				}
				out = append(out, x)
			}
			return out, nil
		}
		return nil, fmt.Errorf("property value %s: unknown type tag %q", raw, tag)
	}
	return nil, nil
}

func fixtureProps(t *testing.T, raw map[string]json.RawMessage) map[string]any {
	t.Helper()
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		x, err := fixtureValue(v)
		if err != nil {
			t.Fatalf("property %s: %v", k, err)
		}
		out[k] = x
	}
	return out
}

// loadV1Graph writes the fixture's nodes and relationships exactly as version 1 wrote them, in one transaction.
func loadV1Graph(t *testing.T, store *graph.Store, g *v1Graph) {
	t.Helper()
	ctx := context.Background()
	sess := store.Session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		elem := make([]string, len(g.Nodes))
		byLabels := map[string][]any{}
		for i, n := range g.Nodes {
			for _, l := range n.Labels {
				if !isIdent(l) {
					return nil, fmt.Errorf("node %d: label %q", i, l)
				}
			}
			ls := strings.Join(n.Labels, ":")
			byLabels[ls] = append(byLabels[ls], map[string]any{"i": i, "props": fixtureProps(t, n.Props)})
		}
		for ls, rows := range byLabels {
			res, err := tx.Run(ctx, "UNWIND $rows AS row CREATE (n:"+ls+") SET n = row.props RETURN row.i AS i, elementId(n) AS e",
				map[string]any{"rows": rows})
			if err != nil {
				return nil, err
			}
			recs, err := res.Collect(ctx)
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				i, _ := r.Get("i")
				e, _ := r.Get("e")
				elem[i.(int64)] = e.(string)
			}
		}
		byType := map[string][]any{}
		for _, r := range g.Rels {
			if !isIdent(r.Type) {
				return nil, fmt.Errorf("relationship type %q", r.Type)
			}
			byType[r.Type] = append(byType[r.Type], map[string]any{"a": elem[r.From], "b": elem[r.To], "props": fixtureProps(t, r.Props)})
		}
		for typ, rows := range byType {
			if _, err := tx.Run(ctx, `UNWIND $rows AS row MATCH (a) WHERE elementId(a) = row.a MATCH (b) WHERE elementId(b) = row.b
				CREATE (a)-[r:`+typ+`]->(b) SET r = row.props`, map[string]any{"rows": rows}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatalf("load the version-1 graph: %v", err)
	}
}

func isIdent(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// eraseFixture deletes whatever a previous run (or a step of this one) left of the fixture's world: the nodes of
// the fixture under their version-1 keys, and everything under its namespaces, runIds and event ids in either
// version's form. Nothing else writes these namespaces, runIds or ids (they were drawn at random when the fixture
// was made), so this never touches another test's data.
func eraseFixture(t *testing.T, store *graph.Store, g *v1Graph, a *v1Answers) {
	t.Helper()
	keysBy := map[string][]string{}
	for _, n := range g.Nodes {
		for _, prop := range []string{"key", "ident"} {
			if raw, ok := n.Props[prop]; ok {
				v, _ := fixtureValue(raw)
				keysBy[n.Labels[0]+"\x00"+prop] = append(keysBy[n.Labels[0]+"\x00"+prop], v.(string))
			}
		}
	}
	var runs, ids []string
	for _, r := range a.World.Runs {
		runs = append(runs, r)
	}
	for _, n := range g.Nodes {
		if n.Labels[0] == graph.LabelEvent {
			v, _ := fixtureValue(n.Props["key"])
			ids = append(ids, v.(string))
		}
	}
	ids = append(ids, a.World.EventIDs["squatted"]) // producer A's, never an Event in version 1
	sort.Strings(ids)
	q := func(cypher string, params map[string]any) {
		if _, err := neo4j.ExecuteQuery(context.Background(), store.Driver, cypher, params, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(store.Database)); err != nil {
			t.Fatalf("erase the fixture: %v", err)
		}
	}
	for lk, keys := range keysBy {
		p := strings.SplitN(lk, "\x00", 2)
		q("UNWIND $keys AS k MATCH (n:"+p[0]+" {"+p[1]+": k}) DETACH DELETE n", map[string]any{"keys": keys})
	}
	for _, p := range fixtureScopes(a.Namespace) {
		erase(t, store, scope{jobNS: p, dsNS: p}, nil)
	}
	q(`MATCH (r:Run) WHERE r.runId IN $runs OR r.key IN $runs DETACH DELETE r`, map[string]any{"runs": runs})
	q(`MATCH (e:Event|Quarantined) WHERE e.key IN $ids OR e.eventId IN $ids DETACH DELETE e`, map[string]any{"ids": ids})
	// the upgrade-v2 world's API-granted role (its grants are re-stated under new ids by the upgrade)
	q(`MATCH (n:Role|Grant|RoleBinding) WHERE n.name = $role OR n.role = $role DETACH DELETE n`,
		map[string]any{"role": a.Namespace + "-pg-reader"})
}

// dumpFixture is project.Dump over the fixture's namespaces.
func dumpFixture(t *testing.T, store *graph.Store, fx string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range fixtureScopes(fx) {
		d, err := project.Dump(context.Background(), store, p)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(d)
	}
	return b.String()
}

// copyArchive copies the fixture's archive segments to a fresh directory.
func copyArchive(t *testing.T) string {
	t.Helper()
	return copyArchiveDir(t, fixtureDir)
}

func copyArchiveDir(t *testing.T, fixtureDir string) string {
	t.Helper()
	dir := t.TempDir()
	segs, err := filepath.Glob(filepath.Join(fixtureDir, "archive", "*.ndjson.gz"))
	framed, _ := filepath.Glob(filepath.Join(fixtureDir, "archive", "*.frames.gz")) // archives from version 4 on (ADR 0038)
	segs = append(segs, framed...)
	if err != nil || len(segs) == 0 {
		t.Fatalf("fixture archive: %v (%d segments)", err, len(segs))
	}
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
