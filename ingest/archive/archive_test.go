package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	for b := 0; b < 5; b++ {
		var recs []Record
		for i := 0; i < 3; i++ {
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
