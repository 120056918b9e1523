package project

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
)

// decodedFixtures decodes the decoder's fixtures as the consumer does (DecodeValidated) into Envelopes, and makes
// a rec builder with a real normaliser.
func decodedFixtures(tb testing.TB) (raws [][]byte, dec *decode.Decoder, canon Canonicalizer) {
	tb.Helper()
	files, _ := filepath.Glob("../olevent/decode/testdata/*.json")
	if len(files) == 0 {
		tb.Fatal("no fixtures")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		raws = append(raws, raw)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		tb.Fatal(err)
	}
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		tb.Fatal(err)
	}
	return raws, dec, norm
}

// changesKept decodes raw, builds its rec and returns its dataset changes (what the fold state keeps).
func changesKept(tb testing.TB, dec *decode.Decoder, canon Canonicalizer, raw []byte) map[string]*dsChange {
	ev, err := dec.DecodeValidated(raw)
	if err != nil {
		tb.Fatal(err)
	}
	olevent.ResolveID("", &ev)
	r, err := buildRec(Envelope{Event: ev, ReceivedAt: time.Now(), Source: "replay"}, canon)
	if err != nil {
		tb.Fatal(err)
	}
	bindForTest(r)
	return changesOf([]*rec{r})
}

// bindForTest gives each identity the key the projector's binding would (bindIdentities reads it from Neo4j).
func bindForTest(r *rec) {
	for _, d := range r.datasets() {
		d.ID.Key = d.ID.canonical()
		for _, m := range []map[string][]colInput{d.ColFields, d.DeclFields} {
			for _, ins := range m {
				for _, in := range ins {
					if in.DS != nil {
						in.DS.Key = in.DS.canonical()
					}
				}
			}
		}
		for _, in := range d.Declared {
			in.Key = in.canonical()
		}
	}
}

// BenchmarkDatasetChangesRetained decodes an event, builds its dataset changes and keeps them, as the fold state
// keeps a dataset's changes and state for minutes. retained-B/op is the heap still in use per event once
// everything but the kept changes is garbage: with changes that slice the event's bytes (before ADR 0040) it is
// the whole event, however little of it the changes hold.
func BenchmarkDatasetChangesRetained(b *testing.B) {
	raws, dec, canon := decodedFixtures(b)
	kept := make([]map[string]*dsChange, 0, 4096)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		kept = append(kept, changesKept(b, dec, canon, raws[n%len(raws)]))
		n++
	}
	b.StopTimer()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "retained-B/op")
	runtime.KeepAlive(kept)
}

// TestDatasetChangesShareNoEventBytes: a dataset change keeps no slice of the decoded event's bytes, so changing
// (or freeing) the event's buffer leaves every kept facet value and field name as it was.
func TestDatasetChangesShareNoEventBytes(t *testing.T) {
	raws, dec, canon := decodedFixtures(t)
	for _, raw := range raws {
		own := append([]byte(nil), raw...)
		// DecodeValidated parses a copy of its argument, so the test reaches that copy through the Event: its
		// facet values are the spans a change could keep.
		ev, err := dec.DecodeValidated(own)
		if err != nil {
			t.Fatal(err)
		}
		olevent.ResolveID("", &ev)
		r, err := buildRec(Envelope{Event: ev, ReceivedAt: time.Now(), Source: "replay"}, canon)
		if err != nil {
			t.Fatal(err)
		}
		bindForTest(r)
		changes := changesOf([]*rec{r})
		want := map[string]string{}
		for k, c := range changes {
			for fk, f := range c.facets {
				want[k+"/"+fk] = string(f.V)
			}
		}
		// overwrite every facet value of the event in place: a change sharing those bytes would see it
		for _, d := range append(append([]olevent.Dataset(nil), ev.Inputs...), ev.Outputs...) {
			for _, v := range d.Facets {
				for i := range v {
					v[i] = 'x'
				}
			}
		}
		for k, c := range changes {
			for fk, f := range c.facets {
				if got := string(f.V); got != want[k+"/"+fk] {
					t.Fatalf("dataset %s facet %s changed with the event's bytes: %q", k, fk, got)
				}
			}
		}
	}
}
