package drive

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

func TestCostPerProjectedEventSeparatesTheGenerator(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	bounds := []float64{0.1, 0.2, 0.4, math.Inf(1)}
	first := &Reading{At: t0, CPU: map[string]float64{"headwater": 10, "neo4j": 20, GeneratorProcess: 1},
		Projected: 1000, TxLogBytes: 5 << 20, Load1: 2, Visible: Histogram{Bounds: bounds, Counts: []float64{5, 5, 5, 5}}}
	sent := &Reading{At: t0.Add(10 * time.Second), Projected: 5000, Load1: 3}
	last := &Reading{At: t0.Add(20 * time.Second), CPU: map[string]float64{"headwater": 14, "neo4j": 26, GeneratorProcess: 1.5},
		Projected: 9000, TxLogBytes: 5<<20 + 8000*4096, Load1: 4,
		// 100 more observations: 50 ≤ 0.1 s, 40 in (0.1, 0.2], 10 in (0.2, 0.4].
		Visible: Histogram{Bounds: bounds, Counts: []float64{55, 95, 105, 105}}}
	c := costOf(first, sent, last, nil, 10*time.Second)
	if c.Projected != 8000 || c.ProjectedDuringSend != 4000 || c.ProjectedPerSec != 400 || c.ProjectedPerSecWindow != 400 {
		t.Fatalf("projected figures %+v", c)
	}
	if c.CPUMsPerEvent["headwater"] != 0.5 || c.CPUMsPerEvent["neo4j"] != 0.75 || c.AllInMsPerEvent != 1.25 {
		t.Fatalf("cpu per event %v, all-in %v", c.CPUMsPerEvent, c.AllInMsPerEvent)
	}
	if c.GeneratorMsPerEvent != 0.0625 {
		t.Fatalf("generator per event %v", c.GeneratorMsPerEvent)
	}
	if c.TxLogKBPerEvent != 4 {
		t.Fatalf("tx log per event %v KB", c.TxLogKBPerEvent)
	}
	p := c.ReceiveToVisible
	if p.Count != 100 || p.P50 != 100 || math.Abs(p.P95-300) > 1e-9 || math.Abs(p.P99-380) > 1e-9 {
		t.Fatalf("receive-to-visible %+v", p)
	}
	if c.LoadAvg.Start != 2 || c.LoadAvg.Sent != 3 || c.LoadAvg.End != 4 {
		t.Fatalf("load %+v", c.LoadAvg)
	}
}

func TestLagTrendIsTheSlopeWhileSending(t *testing.T) {
	var tl []Second
	for s := range 60 {
		tl = append(tl, Second{T: s, Lag: int64(100 + 50*s)})
	}
	tl = append(tl, Second{T: 61, Lag: -1}, Second{T: 70, Lag: 0}) // the drain is left out
	slope, top := lagTrend(tl, 60)
	if math.Abs(slope-50) > 1e-9 || top != 100+50*59 {
		t.Fatalf("slope %v, max %d", slope, top)
	}
}

func TestCorpusRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.corpus")
	in := &Corpus{Main: [][]byte{[]byte(`{"a":1}`), []byte("{\n}")}, Pending: [][]byte{[]byte(`{}`)},
		Gen: gen.Stats{Events: 3}}
	if err := WriteCorpus(path, in); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCorpus(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev, ok := c.Next(); ok; ev, ok = c.Next() {
		got = append(got, string(ev.Body))
	}
	for ev, ok := c.NextPending(); ok; ev, ok = c.NextPending() {
		got = append(got, "pending "+string(ev.Body))
	}
	if want := []string{`{"a":1}`, "{\n}", "pending {}"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("read back %q", got)
	}
	if c.Stats().Events != 3 {
		t.Fatalf("stats %+v", c.Stats())
	}
	if err := os.WriteFile(path, []byte("not a corpus"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCorpus(path); err == nil {
		t.Fatal("a file that is not a corpus was read")
	}
}

func TestTxLogPositionFindsTheEndOfPreallocatedData(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1<<20) // preallocated: zeros after the data
	for i := range 300_001 {
		data[i] = byte(i%251 + 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "neostore.transaction.db.3"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "neostore.transaction.db.2"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := TxLogPosition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(3*txLogRotation + 300_001); got != want {
		t.Fatalf("position %d, want %d", got, want)
	}
}

func TestLabelledMetricLine(t *testing.T) {
	name, labels, v, ok := labelledMetric(`headwater_consumer_lag_messages{partition="3",topic="bench.events"} 42`)
	if !ok || name != "headwater_consumer_lag_messages" || labels["topic"] != "bench.events" || labels["partition"] != "3" || v != 42 {
		t.Fatalf("%q %v %v %v", name, labels, v, ok)
	}
	if _, _, _, ok := labelledMetric("# HELP x"); ok {
		t.Fatal("a comment parsed as a metric")
	}
}

func TestProcCPUSecondsOfThisProcess(t *testing.T) {
	s, err := ProcCPUSeconds(os.Getpid())
	if err != nil || s < 0 {
		t.Fatalf("cpu %v, %v", s, err)
	}
}
