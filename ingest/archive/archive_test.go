package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/ownership"
)

func TestAppendReadRoundTripAcrossSegmentsAndTornTail(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, err := OpenDir(Config{Dir: dir, SegmentBytes: 1 << 20}, func() time.Time { clock = clock.Add(time.Second); return clock })
	if err != nil {
		t.Fatal(err)
	}
	d.cfg.SegmentBytes = 200 // force rotation in the test
	var want []string
	for b := range 5 {
		var recs []Record
		for i := range 3 {
			id := fmt.Sprintf("e-%d-%d", b, i)
			want = append(want, id)
			recs = append(recs, Record{EventID: id, Source: "test", Offset: int64(b*3 + i), Event: json.RawMessage(`{"x":1}`)})
		}
		if err := d.Append(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	_ = d.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	if len(segs) < 2 {
		t.Fatalf("expected rotation into several segments, got %d", len(segs))
	}
	// A crash mid-write leaves garbage at the end of the last segment.
	last := segs[len(segs)-1]
	f, _ := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.Write([]byte{0x1f, 0x8b, 0x08, 0x00, 0x01})
	_ = f.Close()

	var got []string
	var torn []string
	err = Read(dir, func(r Record) error { got = append(got, r.EventID); return nil }, func(s string, _ error) { torn = append(torn, s) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records out of order or lost:\n got %v\nwant %v", got, want)
	}
	if len(torn) != 1 {
		t.Fatalf("torn tail not reported: %v", torn)
	}
}

// The ownership set decided at accept time comes back from the archive exactly, so replay decides what an event
// may change as projection did; a record written before the set existed reads as unrestricted.
func TestOwnershipRoundTrips(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(Config{Dir: dir, SegmentBytes: 1 << 20}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{{EventID: "owned", Event: json.RawMessage(`{}`), Owned: ownership.Of([]string{"p2", "airflow"})},
		{EventID: "none", Event: json.RawMessage(`{}`), Owned: ownership.Of(nil)},
		{EventID: "all", Event: json.RawMessage(`{}`)}}
	if err := d.Append(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	_ = d.Close()
	got := map[string]ownership.Set{}
	if err := Read(dir, func(r Record) error { got[r.EventID] = r.Owned; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if o := got["owned"]; !o.Restricted || !o.Owns("p2") || !o.Owns("airflow") || o.Owns("v") {
		t.Fatalf("restricted set read back as %+v", o)
	}
	if o := got["none"]; !o.Restricted || o.Owns("p2") {
		t.Fatalf("empty restricted set read back as %+v", o)
	}
	if o := got["all"]; o.Restricted {
		t.Fatalf("unrestricted set read back as %+v", o)
	}
}
