package decode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// FuzzDecode checks that Decode never panics, always returns either an event or a *ValidationError, and accepts
// only input the standard library deems valid JSON.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"run":{"runId":"x"},"job":{}}`))
	f.Add([]byte(`{"eventTime":"2026-03-01T11:00:00Z","producer":"https://p","schemaURL":"https://s","dataset":{"namespace":"a","name":"b","facets":{"schema":{"fields":[{"name":"a","fields":[{}]}]}}}}`))
	lim := olevent.DefaultLimits()
	lim.MaxJSONDepth = 32
	d, err := NewDecoder(lim, func() time.Time { return testNow })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := d.Decode(raw)
		if err != nil {
			var ve *olevent.ValidationError
			if !errors.As(err, &ve) || ve.Field == "" || ve.Rule == "" || ve.Message == "" {
				t.Fatalf("error %v is not a complete *ValidationError", err)
			}
			return
		}
		if !json.Valid(raw) { // the fast parsers must not accept what the standard library calls invalid JSON
			t.Fatalf("accepted invalid JSON: %q", raw)
		}
		olevent.ResolveID("", &ev)
		if ev.ID == "" || olevent.PartitionKey(&ev) == "" {
			t.Fatalf("accepted event without id or partition key: %+v", ev)
		}
	})
}
