package project

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// BenchmarkApplyBatch applies batches of 50 events (25 runs of 5 jobs, START+COMPLETE, all reading one hub
// dataset and writing their own output with a schema). Runs accumulate across iterations, so the per-batch
// cost includes the job recompute over a growing run history.
func BenchmarkApplyBatch(b *testing.B) {
	t := &testing.T{}
	s := newScen(t)
	s.t = t
	const jobs, runsPerJob = 5, 5
	s.p.stepTimes = map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var batch []olevent.Event
		for j := range jobs {
			job := fmt.Sprintf("job%d", j)
			for r := range runsPerJob {
				run := fmt.Sprintf("%s-%d-%d", job, i, r)
				t0 := (i*runsPerJob+r)*100 + j
				out := withSchema(s.ds("out-"+job), "id", "v")
				batch = append(batch,
					s.runEv(run+"-s", olevent.TypeStart, t0, job, run, []olevent.Dataset{s.ds("hub")}, []olevent.Dataset{out}),
					s.runEv(run+"-c", olevent.TypeComplete, t0+50, job, run, nil, nil))
			}
		}
		if _, err := s.applyErr(batch...); err != nil {
			b.Fatal(err)
		}
	}
	for name, d := range s.p.stepTimes {
		if strings.HasPrefix(name, "jobs ") {
			b.ReportMetric(float64(d), strings.ReplaceAll(name, " ", "_"))
			continue
		}
		b.ReportMetric(float64(d.Milliseconds())/float64(b.N), "ms/"+strings.ReplaceAll(name, " ", "_"))
	}
	b.ReportMetric(float64(b.N*jobs*runsPerJob*2)/b.Elapsed().Seconds(), "events/s")
}
