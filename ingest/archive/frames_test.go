package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/headwater-data/headwater/ingest/ownership"
)

// writeLegacySegment writes a segment the way the archive did before the framing: one gzip member of
// newline-delimited Record JSON from encoding/json's Encoder.
func writeLegacySegment(t *testing.T, path string, recs []Record) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The archive keeps an event's bytes exactly as received (whitespace, newlines and key order included: a replay
// by a new normaliser reads what the producer sent), and a directory holding segments of the old
// newline-delimited format and the framed one reads back in write order.
func TestFramedSegmentsKeepRawBytesAndLegacySegmentsStillRead(t *testing.T) {
	dir := t.TempDir()
	received := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	writeLegacySegment(t, filepath.Join(dir, "20261130T080000.000000000Z-1-000001"+legacySegmentSuffix), []Record{
		{EventID: "old-1", ReceivedAt: received, Source: "gateway", Partition: 2, Offset: 7, Event: json.RawMessage(`{"a": 1}`)},
		{EventID: "old-2", ReceivedAt: received, Source: "gateway", Event: json.RawMessage(`{"b":2}`),
			Owned: ownership.Of([]string{"p1"})},
	})
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d, err := OpenDir(Config{Dir: dir, SegmentBytes: 1 << 20}, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	raw := "{\n  \"eventType\": \"START\",\n  \"z\": \"<&>\", \"a\": [1, 2]\n}\n"
	if err := d.Append(context.Background(), []Record{
		{EventID: "new-1", ReceivedAt: received, Principal: "p", Source: "kafka:t", Topic: "t", Partition: 1, Offset: 9,
			Event: json.RawMessage(raw), Owned: ownership.Of([]string{"p2"})},
		{EventID: "new-2", ReceivedAt: received, Source: "gateway", Event: json.RawMessage(`{}`)},
	}); err != nil {
		t.Fatal(err)
	}
	_ = d.Close()

	var got []Record
	if err := Read(dir, func(r Record) error { got = append(got, r); return nil }, func(s string, err error) {
		t.Errorf("segment %s reported torn: %v", s, err)
	}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.EventID)
	}
	if want := []string{"old-1", "old-2", "new-1", "new-2"}; !equalStrings(ids, want) {
		t.Fatalf("read %v, want %v in write order", ids, want)
	}
	if string(got[0].Event) != `{"a":1}` || got[0].Partition != 2 || got[0].Offset != 7 || !got[0].ReceivedAt.Equal(received) {
		t.Fatalf("legacy record read back as %+v", got[0])
	}
	if o := got[1].Owned; !o.Restricted || !o.Owns("p1") {
		t.Fatalf("legacy owned set read back as %+v", o)
	}
	n := got[2]
	if string(n.Event) != raw {
		t.Fatalf("event bytes changed by the archive:\n got %q\nwant %q", n.Event, raw)
	}
	if n.Principal != "p" || n.Source != "kafka:t" || n.Topic != "t" || n.Partition != 1 || n.Offset != 9 ||
		!n.ReceivedAt.Equal(received) || !n.Owned.Restricted || !n.Owned.Owns("p2") {
		t.Fatalf("framed envelope read back as %+v", n)
	}
	if got[3].Owned.Restricted {
		t.Fatalf("unrestricted set read back as %+v", got[3].Owned)
	}
}

// A framed segment cut inside a frame (a crash mid-write that left a whole gzip member of a partial frame cannot
// happen, but a torn member can) is reported torn, and the records before it are delivered.
func TestFramedSegmentCutInsideAFrameIsTorn(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(Config{Dir: dir, SegmentBytes: 1 << 20}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Append(context.Background(), []Record{{EventID: "kept", Event: json.RawMessage(`{"x":1}`)}}); err != nil {
		t.Fatal(err)
	}
	_ = d.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	// Append a second member holding a frame whose event is shorter than its length says.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := appendFrame(zw, Record{EventID: "cut", Event: json.RawMessage(`{"y":2}`)}); err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	var whole bytes.Buffer
	zr, _ := gzip.NewReader(&buf)
	_, _ = whole.ReadFrom(zr)
	var cut bytes.Buffer
	zw = gzip.NewWriter(&cut)
	_, _ = zw.Write(whole.Bytes()[:whole.Len()-3])
	_ = zw.Close()
	f, _ := os.OpenFile(segs[0], os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.Write(cut.Bytes())
	_ = f.Close()

	var ids []string
	torn := 0
	if err := Read(dir, func(r Record) error { ids = append(ids, r.EventID); return nil }, func(string, error) { torn++ }); err != nil {
		t.Fatal(err)
	}
	if !equalStrings(ids, []string{"kept"}) || torn != 1 {
		t.Fatalf("read %v with %d torn segments, want [kept] and 1", ids, torn)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkAppend measures the archive's cost per event of a 1,000-event batch of ~3.8 KB events.
func BenchmarkAppend(b *testing.B) {
	d, err := OpenDir(Config{Dir: b.TempDir(), SegmentBytes: 1 << 30}, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	ev := benchEvent()
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{EventID: "e", ReceivedAt: time.Now(), Source: "gateway", Event: ev, Owned: ownership.Of([]string{"p"})}
	}
	b.ResetTimer()
	for range b.N {
		if err := d.Append(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(recs)), "µs/event")
}

func benchEvent() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"eventType":"COMPLETE","eventTime":"2026-12-01T10:00:00.000Z","producer":"https://example.com/p","run":{"runId":"0190a3f0-0000-7000-8000-000000000000","facets":{}},"job":{"namespace":"airflow://prod","name":"dag.task"},"inputs":[`)
	for i := range 30 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"namespace":"postgres://warehouse:5432","name":"db.schema.table_`)
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`","facets":{"schema":{"_producer":"https://example.com/p","_schemaURL":"https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json","fields":[{"name":"id","type":"bigint"},{"name":"value","type":"text"}]}}}`)
	}
	b.WriteString(`],"outputs":[]}`)
	return b.Bytes()
}
