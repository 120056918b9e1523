package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Spark 3.5 with the OpenLineage listener and Iceberg (Hadoop catalog) runs testdata/producers/spark/job.py:
// CSV read, filter, aggregate, parquet write, saveAsTable, Iceberg CTAS/INSERT/ALTER RENAME COLUMN/INSERT and a
// read of the table's .snapshots metadata table, sent over the HTTP transport with an API key. The whole answer is
// compared with testdata/producers/spark.golden.
func TestProducerSpark(t *testing.T) {
	home, jars := sparkHome(t)
	p := newProducerRun(t, "spark")
	src, _ := filepath.Abs("testdata/producers/spark")
	copyTree(t, src, p.work)
	events := filepath.Join(p.work, "events.jsonl")
	env := []string{"SPARK_LOCAL_IP=127.0.0.1", "PYSPARK_PYTHON=" + filepath.Join(home, "venv", "bin", "python")}
	p.run(t, p.work, env, 0, filepath.Join(home, "venv", "bin", "python"), filepath.Join(p.work, "job.py"),
		p.work, p.url(), token, p.jobNS, events, strings.Join(jars, ","))

	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	a := p.answer(t)
	a.ignore = append(a.ignore,
		// Not an issue 14 item (reported with it): a run that reports lifecycleStateChange OVERWRITE on each of its
		// events (START, RUNNING..., COMPLETE) gets one Headwater-made version overwrite@<eventTime> per event,
		// five for one overwrite. The right number is one per run; left out until that is decided.
		regexp.MustCompile(`version \$OVERWRITE\d+ lifecycle=OVERWRITE$`),
	)
	// The CTAS runs an inner append (job append_data.ice_db_orders, its first run). Whether that run's COMPLETE
	// carries the new snapshot id depends on whether Iceberg's commit landed before the listener built the event:
	// both happen here from run to run, and both are right, so that one version is masked.
	a.mask = append(a.mask, masking{regexp.MustCompile(`^(run hw_producers_spark\.append_data\.ice_db_orders#1 output \S+ \S+ version=)\S+`),
		"${1}(the CTAS snapshot, or none)"})
	// A quick command (the ALTER TABLE ... RENAME COLUMN, job alter_table.db_orders) sometimes gets no START from the
	// listener: its QueryExecution is gone when the listener handles SQLExecutionStart (OpenLineage issues #1646,
	// #2322; seen in a CI rehearsal at load 25, and not in two reruns at load 25 right after). Headwater's answer
	// is then started=unknown, which is the honest one; the run's state, end, outputs and version are still compared.
	a.mask = append(a.mask, masking{regexp.MustCompile(`^(run hw_producers_spark\.alter_table\.db_orders#1 state=COMPLETE .*started=)(known|unknown)( .*)$`),
		"${1}(known, or unknown without a START)${3}"})
	compareGolden(t, "spark", a.build())
}

// sparkHome is the Spark producer's home (scripts/producers/spark.sh) and its listener and Iceberg runtime jars.
func sparkHome(t *testing.T) (string, []string) {
	t.Helper()
	home := producerHome(t, "HEADWATER_TEST_SPARK", "scripts/producers/spark.sh")
	var jars []string
	for _, j := range []string{"openlineage-spark_2.12.jar", "iceberg-spark-runtime-3.5_2.12.jar"} {
		path := filepath.Join(home, "jars", j)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("Spark jar missing (%v): run scripts/producers/spark.sh", err)
		}
		jars = append(jars, path)
	}
	return home, jars
}
