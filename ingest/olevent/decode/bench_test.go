package decode

import (
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// BenchmarkDecode measures Decode plus ResolveID (deterministic id) on the producer fixtures.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"airflow_task_complete.json", "spark_complete.json", "flink_running.json"} {
		raw := fixture(b, name)
		d := newTestDecoder(b, olevent.DefaultLimits())
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ev, err := d.Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				olevent.ResolveID("", &ev)
			}
		})
	}
}
