package decode

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// TestDecodeValidatedInterpretsLikeDecode: for every fixture (run, job and dataset events from Airflow, Spark,
// dbt and Flink, with column lineage, renames and declared lineage) the consumer's path for gateway-validated
// events gives exactly the Event that full validation gives, apart from the content id it skips.
func TestDecodeValidatedInterpretsLikeDecode(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) < 5 {
		t.Fatalf("fixtures: %v", files)
	}
	for _, f := range files {
		raw := fixture(t, filepath.Base(f))
		full := decodeOK(t, d, raw)
		fast, err := d.DecodeValidated(raw)
		if err != nil {
			t.Fatalf("%s: DecodeValidated: %v", f, err)
		}
		fast.SetContentDigest(full.ContentDigest()) // DecodeValidated computes no content id; compare the rest
		if !reflect.DeepEqual(full, fast) {
			t.Errorf("%s: DecodeValidated differs from Decode:\n full %+v\n fast %+v", f, full, fast)
		}
	}
	// Not JSON at all: still a ValidationError, never a panic.
	if _, err := d.DecodeValidated([]byte("{")); err == nil {
		t.Error("DecodeValidated accepted broken JSON")
	}
}
