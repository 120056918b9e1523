package history_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/loadtest/history"
)

// readTags reads a dataset's tags and tag history by name.
func readTags(ctx context.Context, t *testing.T, store *graph.Store, ns, name string) (string, []graph.TagInterval) {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, store.Driver, `MATCH (d:Dataset {namespace: $ns, name: $name}) RETURN d.tags AS tags, d.tagHistory AS h`,
		map[string]any{"ns": ns, "name": name}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read %s %s: %v (%d rows)", ns, name, err, len(res.Records))
	}
	tags, _ := res.Records[0].Get("tags")
	h, _ := res.Records[0].Get("h")
	var names []string
	for _, x := range tags.([]any) {
		names = append(names, x.(string))
	}
	s, _ := h.(string)
	return strings.Join(names, ","), graph.ParseTagHistory(s)
}

// With PIITags the loader writes projection version 6's tag form: a loaded source dataset's tags and tag history
// are those the projector writes for a tags facet listing the same tags at the dataset's creation (the loader
// writes no events, so no event id).
func TestLoaderWritesTheProjectorsTagHistory(t *testing.T) {
	store := testenv.Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	end := time.Now().UTC().Truncate(time.Second)
	w := smallWorld(t, end)
	l, err := history.NewLoader(store, history.Config{World: w, HistoryDays: 30, RunDays: 0, BatchRows: 500,
		Writers: 2, End: end, PIITags: true}, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx); err != nil {
		t.Fatalf("load: %v", err)
	}
	var src struct{ ns, name string }
	var tags []string
	for _, d := range w.Datasets {
		if len(d.Tags) > 0 {
			src.ns, src.name, tags = d.Namespace, d.Name, d.Tags
			break
		}
	}
	if tags == nil {
		t.Fatal("the world has no tagged dataset")
	}
	loadedTags, loadedHist := readTags(ctx, t, store, src.ns, src.name)
	if loadedTags == "" || len(loadedHist) != len(tags) {
		t.Fatalf("loaded %s: tags %q, history %+v (world tags %v)", src.name, loadedTags, loadedHist, tags)
	}

	// The projector, a tags facet with the same tags at the loaded dataset's creation, on a dataset of its own.
	proj, err := project.New(store, testNorm(t), noBump{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t) + "-pg://db:5432"
	ds := olevent.Dataset{Namespace: ns, Name: "tagged"}
	for _, s := range tags {
		field, kv, _ := strings.Cut(s, ":")
		k, v, _ := strings.Cut(kv, "=")
		ds.Tags = append(ds.Tags, olevent.Tag{Key: k, Value: v, Field: field})
	}
	created := time.UnixMilli(loadedHist[0].ValidFrom).UTC()
	ev := olevent.Event{ID: testenv.Namespace(t) + "-tags", Kind: olevent.KindDataset, EventTime: created,
		Producer: "https://example.com/t", SchemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json", Dataset: &ds}
	if _, err := proj.Apply(ctx, []project.Envelope{{Event: ev, ReceivedAt: time.Now(), Principal: "t", Source: "replay"}}); err != nil {
		t.Fatal(err)
	}
	_, cns, _, _ := testNorm(t).Dataset(ns, "tagged")
	projTags, projHist := readTags(ctx, t, store, cns, "tagged")
	if projTags != loadedTags || len(projHist) != len(loadedHist) {
		t.Fatalf("projected tags %q history %+v, loaded %q %+v", projTags, projHist, loadedTags, loadedHist)
	}
	for i := range projHist {
		p, l := projHist[i], loadedHist[i]
		p.EventID, p.By = "", "" // the loader writes no events, so no event id and no principal that set the tag
		if p != l {
			t.Errorf("tag interval %d: projected %+v, loaded %+v", i, p, l)
		}
	}
}

func testNorm(t *testing.T) *normalize.Normalizer {
	t.Helper()
	n, err := normalize.New(normalize.Config{DefaultEnv: "unmapped"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
