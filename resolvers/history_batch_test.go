package resolvers

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// wideFields is the field count of the wide dataset TestFieldTagHistoryBatched asks the histories of.
const wideFields = 200

// maxWideHistoryReads bounds the Neo4j reads of Dataset.fields { tagHistory } on the wide dataset: the dataset,
// its fields, then one fields read and one dataset read for every batch of the histories loader (ADR 0088;
// the loader's 2 ms window can split the 200 under load: 4 to 10 reads measured).
const maxWideHistoryReads = 20

const wideHistoryQ = `query($ns: String!) { dataset(namespace: $ns, name: "wide.t") {
  fields { path tagHistory { permissionsFiltered entries { name field } } } } }`

// TestFieldTagHistoryBatched: Dataset.fields { tagHistory } on a dataset of 200 fields, each with a tag of its
// own and the dataset-level tag, answers each field its own tag and the dataset's, in a bounded number of Neo4j
// reads (a read per field before the batching: 402 reads); the reads and the time are logged for the ADR.
func TestFieldTagHistoryBatched(t *testing.T) {
	cd := &testenv.CountingDriver{}
	h := newHarness(t, withCountedReads(cd))
	fx := h.fx
	ds := fx.Dataset("wide.t")
	paths := make([]any, wideFields)
	tags := []graph.TagInterval{{Name: "finance", Source: "gov", ValidFrom: graph.Millis(fx.T0), ValidTo: graph.OpenEnd, EventID: "ev-ds"}}
	for i := range paths {
		p := fmt.Sprintf("c%03d", i)
		paths[i] = map[string]any{"path": p, "key": graph.FieldKey(ds, p, graph.Millis(fx.T0))}
		tags = append(tags, graph.TagInterval{Name: p + ":owner=" + p, Source: "gov", ValidFrom: graph.Millis(fx.T0),
			ValidTo: graph.OpenEnd, EventID: "ev-" + p})
	}
	tj, _ := json.Marshal(tags)
	fx.Exec(`MATCH (d:Dataset {key: $d}) SET d.tagHistory = $th WITH d UNWIND $fields AS f
MERGE (x:Field {key: f.key}) SET x.datasetKey = $d, x.path = f.path, x.type = 'string', x.validFrom = $from, x.validTo = $open
MERGE (d)-[:HAS_FIELD]->(x)`, map[string]any{"d": ds, "th": string(tj), "fields": paths, "from": graph.Millis(fx.T0), "open": graph.OpenEnd})

	var a struct {
		Dataset struct {
			Fields []struct {
				Path       string
				TagHistory struct {
					PermissionsFiltered bool
					Entries             []struct {
						Name  string
						Field *string
					}
				}
			}
		}
	}
	h.mustQuery(wideHistoryQ, map[string]any{"ns": fx.NS}, &a) // warm: the plan caches, the connection pool
	cd.Reads()
	t0 := time.Now()
	h.mustQuery(wideHistoryQ, map[string]any{"ns": fx.NS}, &a)
	took, reads := time.Since(t0), cd.Reads()
	t.Logf("Dataset.fields { tagHistory } on %d fields: %d Neo4j reads, %v", wideFields, reads, took)
	if len(a.Dataset.Fields) != wideFields {
		t.Fatalf("%d fields, want %d", len(a.Dataset.Fields), wideFields)
	}
	for _, f := range a.Dataset.Fields {
		var names []string
		for _, e := range f.TagHistory.Entries {
			names = append(names, e.Name)
		}
		if len(names) != 2 || !slices.Contains(names, "finance") || !slices.Contains(names, f.Path+":owner="+f.Path) {
			t.Fatalf("field %s: history %v, want its own tag and the dataset's", f.Path, names)
		}
	}
	if reads > maxWideHistoryReads {
		t.Errorf("%d Neo4j reads for the histories of %d fields, want at most %d (batched)", reads, wideFields, maxWideHistoryReads)
	}
}
