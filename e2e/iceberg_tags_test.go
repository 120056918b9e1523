package e2e

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// catalogTagsOf is the dataset's tags now, each as name/source.
func catalogTagsOf(t *testing.T, o *ownTest, ns, name string) (tags []string) {
	t.Helper()
	d := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { tags { name source } } }`,
		map[string]any{"ns": ns, "n": name})["dataset"].(map[string]any)
	for _, tg := range d["tags"].([]any) {
		m := tg.(map[string]any)
		src, _ := m["source"].(string)
		tags = append(tags, m["name"].(string)+"/"+src)
	}
	sort.Strings(tags)
	return tags
}

// fieldTagsOf are the field's own tags (Field.tags) as name/source, sorted.
func fieldTagsOf(t *testing.T, o *ownTest, ns, name, path string) (tags []string) {
	t.Helper()
	d := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { fields { path tags { name source } } } }`,
		map[string]any{"ns": ns, "n": name})["dataset"].(map[string]any)
	for _, f := range d["fields"].([]any) {
		fm := f.(map[string]any)
		if fm["path"] != path {
			continue
		}
		for _, tg := range fm["tags"].([]any) {
			m := tg.(map[string]any)
			src, _ := m["source"].(string)
			tags = append(tags, m["name"].(string)+"/"+src)
		}
	}
	sort.Strings(tags)
	return tags
}

// Issue 19 "from the catalog" / ADR 0075 end to end: real pyiceberg sets the table properties headwater.tags
// ("finance, tier=gold") and headwater.column-tags.customer ("pii.name"); the catalog sync through the gateway makes
// them the dataset's and the field's tags (source ICEBERG_CATALOG); a second sync with nothing changed writes
// nothing; a piiFlow of pii from the catalog-tagged column follows a Spark-shaped read of the table; removing the
// properties removes the tags at the next sync, and the sync after that writes nothing again.
func TestIcebergCatalogTagsBecomeTags(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api, metrics := freePort(t), freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-icetag-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_tags_"+tok, "fx-"+tok
	uuidNS := "iceberg://" + cat
	orders := ns + ".orders"

	icebergStep(t, "create", ns)
	appended := icebergStep(t, "append-1", ns)
	icebergSync(t, store, api, uri, cat, ns)
	if tags := catalogTagsOf(t, o, uri, orders); len(tags) != 0 {
		t.Fatalf("tags before any tag property: %v", tags)
	}

	icebergStep(t, "set-tags", ns)
	icebergSync(t, store, api, uri, cat, ns)
	// The column's tag is the dataset's entry with field "customer" (Dataset.tags renders it customer:pii.name) and
	// the field's own tag (Field.tags).
	tags := catalogTagsOf(t, o, uri, orders)
	if want := []string{"customer:pii.name/ICEBERG_CATALOG", "finance/ICEBERG_CATALOG", "tier=gold/ICEBERG_CATALOG"}; !slices.Equal(tags, want) {
		t.Errorf("Dataset.tags after the tag properties: %v, want %v", tags, want)
	}
	if got := fieldTagsOf(t, o, uri, orders, "customer"); !slices.Equal(got, []string{"customer:pii.name/ICEBERG_CATALOG"}) {
		t.Errorf("Field.tags of customer after the tag properties: %v", got)
	}

	// nothing changed: nothing written
	accepted, seq := syncWrites(t, store, metrics, uuidNS)
	line, ids := icebergSync(t, store, api, uri, cat, ns)
	time.Sleep(3 * time.Second)
	if a, s := syncWrites(t, store, metrics, uuidNS); len(ids) != 0 || !strings.Contains(line, "1 unchanged") || a != accepted || s != seq {
		t.Errorf("a sync with nothing changed wrote %d events (%s): accepted %v -> %v, table writes %d -> %d", len(ids), line, accepted, a, seq, s)
	}

	// piiFlow from the catalog-tagged column, through a read of the table as Spark reports it
	location := filepath.Dir(filepath.Dir(appended["metadataLocation"].(string)))
	report := location + "_customers"
	ev := sparkIcebergRead(o, uri, orders, location, appended["snapshot"].(string), report, map[string]string{"who": "customer"})
	if code, body := o.post(t, token, ev); code != 202 {
		t.Fatalf("read: %d %v", code, body)
	} else {
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}
	d := o.gql(t, `query($ns: String!, $n: String!) { piiFlow(tag: "pii", from: {field: {namespace: $ns, name: $n, field: "customer"}}) {
		origins { field { path } tags { name } } reached { field { path dataset { name } } effect } } }`,
		map[string]any{"ns": uri, "n": orders})["piiFlow"].(map[string]any)
	if s := jsonOf(d); !strings.Contains(s, `"path":"who"`) || !strings.Contains(s, `"name":"customer:pii.name"`) {
		t.Errorf("piiFlow of pii from %s.customer: %s, want the origin tagged pii.name reaching %s.who", orders, s, report)
	}

	// the properties removed: the tags go at the next sync; the sync after it writes nothing
	icebergStep(t, "unset-tags", ns)
	icebergSync(t, store, api, uri, cat, ns)
	if tags := catalogTagsOf(t, o, uri, orders); len(tags) != 0 {
		t.Errorf("after removing the tag properties: Dataset.tags %v, want none", tags)
	}
	if line, ids := icebergSync(t, store, api, uri, cat, ns); len(ids) != 0 {
		t.Errorf("the sync after the removal wrote %d events (%s), want none", len(ids), line)
	}
}

// ADR 0087 end to end: real pyiceberg tags a table (headwater.tags, headwater.column-tags.customer) that a
// producer also tags (a DatasetEvent's tags facet, source dbt). Each source changes only its own tags: the sync's
// facet keeps the producer's (Dataset.tags is the union, each with its source); a later producer facet replaces the
// list (the catalog's are gone until the next sync), and the next sync brings them back beside the producer's,
// dated now; a sync with nothing changed writes nothing; removing the properties removes only the catalog's.
func TestCatalogAndProducerTagsOnOneTable(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-icetag2-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_tags2_"+tok, "fx-t2-"+tok
	orders := ns + ".orders"
	producerTags := func(at time.Time, keys ...string) {
		t.Helper()
		var list []any
		for _, k := range keys {
			list = append(list, map[string]any{"key": k, "source": "dbt"})
		}
		ev := o.datasetEvent(o.ds(uri, orders, map[string]any{"tags": map[string]any{"_producer": "https://example.com/dbt",
			"_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json", "tags": list}}))
		ev["eventTime"] = at.UTC().Format(time.RFC3339Nano)
		if code, body := o.post(t, token, ev); code != 202 {
			t.Fatalf("producer tags: %d %v", code, body)
		} else {
			waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
		}
	}
	catalog := []string{"customer:pii.name/ICEBERG_CATALOG", "finance/ICEBERG_CATALOG", "tier=gold/ICEBERG_CATALOG"}
	union := func(p ...string) []string {
		out := append(append([]string{}, p...), catalog...)
		sort.Strings(out)
		return out
	}

	icebergStep(t, "create", ns)
	icebergSync(t, store, api, uri, cat, ns)
	producerTags(time.Now().Add(-time.Minute), "certified")
	icebergStep(t, "set-tags", ns)
	icebergSync(t, store, api, uri, cat, ns)
	if got, want := catalogTagsOf(t, o, uri, orders), union("certified/dbt"); !slices.Equal(got, want) {
		t.Errorf("after the catalog tagged a table the producer tagged: %v, want %v", got, want)
	}

	producerTags(time.Now(), "certified", "reviewed") // the producer's latest facet replaces the list
	if got, want := catalogTagsOf(t, o, uri, orders), []string{"certified/dbt", "reviewed/dbt"}; !slices.Equal(got, want) {
		t.Errorf("after the producer's later facet: %v, want %v", got, want)
	}
	icebergSync(t, store, api, uri, cat, ns)
	if got, want := catalogTagsOf(t, o, uri, orders), union("certified/dbt", "reviewed/dbt"); !slices.Equal(got, want) {
		t.Errorf("after the next sync: %v, want %v (the catalog's back beside the producer's)", got, want)
	}
	if line, ids := icebergSync(t, store, api, uri, cat, ns); len(ids) != 0 {
		t.Errorf("a sync with nothing changed wrote %d events (%s)", len(ids), line)
	}

	icebergStep(t, "unset-tags", ns)
	icebergSync(t, store, api, uri, cat, ns)
	if got, want := catalogTagsOf(t, o, uri, orders), []string{"certified/dbt", "reviewed/dbt"}; !slices.Equal(got, want) {
		t.Errorf("after the catalog's properties were removed: %v, want only the producer's %v", got, want)
	}
}
