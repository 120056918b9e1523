package project

import (
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// v2Canon canonicalises as normalize-1 did (projection version 2): today's rules, then the default port dropped.
type v2Canon struct{ n *normalize.Normalizer }

func (c v2Canon) Dataset(ns, name string) (string, string, string, error) {
	env, cns, cnm, err := c.n.Dataset(ns, name)
	return env, normalize.KeyNamespace(cns), cnm, err
}

func (c v2Canon) Job(ns, name string) (string, string, error) {
	cns, cnm, err := c.n.Job(ns, name)
	return normalize.KeyNamespace(cns), cnm, err
}

var normVersionProp = regexp.MustCompile(`normVersion="[^"]*"(, )?`)

// Projection version 3 writes the default port the naming spec writes. A graph version 2 wrote (namespaces
// without the port) upgraded in place is the graph version 3 projects from the same events: same keys, same
// history, names (primary, renamed, symlink) rebound under the new form, unresolved records re-keyed, a
// DatasetEvent's subject namespace rewritten, and an event whose owned set was recorded in version 2's form still
// changes what its producer owned.
func TestUpgradeIdentitiesFromProjectionVersion2(t *testing.T) {
	s := newScen(t)
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.ToLower(strings.ReplaceAll(s.ns, "_", "-"))
	pg, hive, kafka := "postgres://"+tok+"-wh", "hive://"+tok+"-ms:9083", "kafka://"+tok+"-b1,"+tok+"-b2:9093"
	own := "postgres://" + tok + "-own"
	at := func(sec int) time.Time { return s.at(sec) }
	ev := func(id string, sec int, job string, ins, outs []olevent.Dataset) olevent.Event {
		e := s.runEv(id, olevent.TypeComplete, sec, job, id, ins, outs)
		e.Job.Namespace = tok + "-jobs"
		return e
	}
	renamed := olevent.Dataset{Namespace: pg + ":5432", Name: "shop.public.Customers", Schema: schemaOf("id", "name"),
		Lifecycle: &olevent.Lifecycle{State: "RENAME", PreviousIdentifier: &olevent.Identifier{Namespace: pg, Name: "shop.public.customers_old"}}}
	table := olevent.Dataset{Namespace: hive, Name: "Default.Orders", Schema: schemaOf("id", "amount"),
		Symlinks: []olevent.Identifier{{Namespace: "hdfs://" + tok + "-nn", Name: "/warehouse/orders", Type: "LOCATION"}}}
	thief := olevent.Dataset{Namespace: pg, Name: "shop.public.thief",
		Symlinks: []olevent.Identifier{{Namespace: "hdfs://" + tok + "-nn:8020", Name: "/warehouse/orders"}}}
	gate := olevent.Dataset{Namespace: pg, Name: "shop.public.Customers", Description: "customers"}
	owned := olevent.Dataset{Namespace: own + ":5432", Name: "app.t", Schema: schemaOf("x"), Description: "owner's words"}
	batches := [][]Envelope{
		{{Event: ev("a", 10, "load", nil, []olevent.Dataset{withSchema(olevent.Dataset{Namespace: pg, Name: "shop.public.customers_old"}, "id")})}},
		{{Event: ev("b", 20, "load", nil, []olevent.Dataset{renamed})}},
		{{Event: ev("c", 30, "spark", []olevent.Dataset{{Namespace: pg + ":5432", Name: "shop.public.Customers"}}, []olevent.Dataset{table})}},
		{{Event: ev("d", 40, "steal", nil, []olevent.Dataset{thief})}},
		{{Event: ev("e", 50, "stream", []olevent.Dataset{{Namespace: hive, Name: "default.orders"}}, []olevent.Dataset{{Namespace: kafka, Name: "Orders"}})}},
		{{Event: s.dsEv("f", 60, gate)}},
		// the archive records the owned set as version 2 canonicalised it: "postgres://<tok>-own"
		{{Event: ev("g", 70, "own", nil, []olevent.Dataset{owned}), Principal: "owner", Owned: ownership.Of([]string{own, tok + "-jobs"})}},
	}
	for _, b := range batches {
		for i := range b {
			b[i].ReceivedAt, b[i].Source = at(100), "replay"
			if b[i].Principal == "" {
				b[i].Principal = testPrincipal
			}
		}
	}
	project := func(p *Projector) {
		for _, b := range batches {
			if _, err := p.Apply(s.ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	scopes := []string{tok + "-", "postgres://" + tok, "hive://" + tok, "hdfs://" + tok, "kafka://" + tok}
	dump := func() string {
		var b strings.Builder
		for _, p := range scopes {
			d, err := Dump(s.ctx, s.store, p)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(d)
		}
		return normVersionProp.ReplaceAllString(b.String(), "")
	}
	wipe := func() {
		s.query(`MATCH (n) WHERE (n:Dataset OR n:Job OR n:DatasetName OR n:UnresolvedIdentity)
			AND (n.namespace STARTS WITH $p OR coalesce(split(n.namespace, '://')[1], '') STARTS WITH $p)
			OPTIONAL MATCH (n)-[:HAS_FIELD|HAS_VERSION]->(x)
			OPTIONAL MATCH (n)<-[:VERSION_OF|OF_JOB|ABOUT_JOB]-(y)
			OPTIONAL MATCH (y)<-[:OF_RUN]-(z:Event)
			DETACH DELETE n, x, y, z`, map[string]any{"p": tok + "-"})
		s.query(`MATCH (e:Event) WHERE e.eventId STARTS WITH $p DETACH DELETE e`, map[string]any{"p": s.ns})
	}
	v3, err := New(s.store, norm, s.bump, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	project(v3)
	want := dump()
	for _, w := range []string{`namespace="` + pg + `:5432"`, `namespace="hive://` + tok + `-ms:9083"`,
		`namespace="kafka://` + tok + `-b1:9092,` + tok + `-b2:9093"`, `subjectNamespace="` + pg + `:5432"`,
		`namespace="hdfs://` + tok + `-nn:8020", reason="symlink names another dataset"`, `description="owner's words"`,
		`name="default.orders", namespace="hive://` + tok + `-ms:9083", searchName="default.orders"`} {
		if !strings.Contains(want, w) {
			t.Fatalf("version 3 projection lacks %s:\n%s", w, want)
		}
	}
	keys := s.query(`MATCH (d:Dataset) WHERE d.namespace STARTS WITH 'postgres://'+$p RETURN d.key AS k ORDER BY k`, map[string]any{"p": tok})

	wipe()
	v2, err := New(s.store, v2Canon{norm}, s.bump, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	project(v2)
	s.query(`MATCH (x) WHERE (x:Dataset OR x:Job) AND coalesce(split(x.namespace, '://')[1], x.namespace) STARTS WITH $p
		REMOVE x.searchName`, map[string]any{"p": tok + "-"}) // version 2 wrote none
	before := dump()
	if strings.Contains(before, pg+":5432") || before == want {
		t.Fatalf("the simulated version-2 graph already has version 3's form:\n%s", before)
	}
	for _, scope := range []string{tok + "-", tok + "-"} { // twice: idempotent
		if _, err := v3.UpgradeIdentities(s.ctx, scope); err != nil {
			t.Fatal(err)
		}
	}
	project(v3) // the replay after the upgrade: all duplicates
	if got := dump(); got != want {
		t.Fatalf("upgraded version-2 graph differs from a version-3 projection:\n%s", diffLines(want, got))
	}
	if got := s.query(`MATCH (d:Dataset) WHERE d.namespace STARTS WITH 'postgres://'+$p RETURN d.key AS k ORDER BY k`,
		map[string]any{"p": tok}); len(got) != len(keys) || got[0]["k"] != keys[0]["k"] {
		t.Fatalf("dataset keys %v, want %v", got, keys)
	}
	if k := graph.DatasetKey("prod", pg, "shop.public.customers_old"); keys[0]["k"] != k && keys[1]["k"] != k {
		t.Fatalf("the renamed dataset's key is not version 2's %s: %v", k, keys)
	}
	wipe()
}

// A payload version 2 stored names a canonical unresolved identifier without its default port; event(id) names it
// as it is canonical now. An identifier that never canonicalised is named as sent.
func TestUnresolvedInPayloadNamesVersion2NamespacesInTodaysForm(t *testing.T) {
	r := &rec{ID: "e", Kind: "RUN", Outputs: []*dsRec{{ID: &ident{RawNS: "hdfs://nn", RawName: "/t", Env: "prod", NS: "hdfs://nn",
		Name: "/t", Unresolved: reasonSymlinkConflict}}, {ID: &ident{RawNS: "POSTGRES://", RawName: "x", Unresolved: "cannot canonicalise: missing-host"}}}}
	payload, err := encodePayload(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnresolvedInPayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	want := []UnresolvedIdentifier{{"POSTGRES://", "x", "cannot canonicalise: missing-host"}, {"hdfs://nn:8020", "/t", reasonSymlinkConflict}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
