package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// dbt-ol (openlineage-dbt) runs the project in testdata/producers/dbt on DuckDB with an absolute database path
// and sends to Headwater over the HTTP transport with an API key: a `build` after `docs generate` (typed schemas),
// then a `run` whose customer_totals model fails. The whole answer is compared with testdata/producers/dbt.golden.
func TestProducerDbt(t *testing.T) {
	home := producerHome(t, "HEADWATER_TEST_DBT", "scripts/producers/dbt.sh")
	p := newProducerRun(t, "dbt")
	proj := filepath.Join(p.work, "project")
	src, _ := filepath.Abs("testdata/producers/dbt")
	copyTree(t, src, proj)
	events := filepath.Join(p.work, "events.jsonl")
	olConfig := filepath.Join(p.work, "openlineage.yml")
	// The exact configuration docs/producers/dbt.md documents: HTTP with an API key (plus a file copy the test
	// reads back to know which events to wait for).
	cfg := fmt.Sprintf(`transport:
  type: composite
  continue_on_failure: false
  transports:
    headwater:
      type: http
      url: %s
      endpoint: api/v1/lineage
      auth:
        type: api_key
        apiKey: %s
    copy:
      type: file
      log_file_path: %s
      append: true
`, p.url(), token, events)
	if err := os.WriteFile(olConfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "venv", "bin")
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "DBT_PROFILES_DIR=" + proj,
		"HW_DBT_PATH=" + filepath.Join(p.work, "warehouse.duckdb"), "HW_DBT_TARGET=" + filepath.Join(p.work, "target"),
		"OPENLINEAGE_CONFIG=" + olConfig, "OPENLINEAGE_NAMESPACE=" + p.jobNS, "DBT_SEND_ANONYMOUS_USAGE_STATS=false"}
	dbt, dbtOL := filepath.Join(bin, "dbt"), filepath.Join(bin, "dbt-ol")
	p.run(t, proj, env, 0, dbt, "seed", "-q")
	p.run(t, proj, env, 0, dbt, "run", "-q")
	p.run(t, proj, env, 0, dbt, "docs", "generate", "-q")
	p.run(t, proj, env, 0, dbtOL, "build")
	p.run(t, proj, env, 1, dbtOL, "run", "--select", "customer_totals", "--vars", "{hw_fail: true}")

	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	a := p.answer(t)
	// Issue 14 item 3: dbt-ol leaves the seed raw_customers out of stg_customers' inputs while its column lineage
	// names it; the dataset edge raw_customers -> stg_customers is derived from the column lineage, and its evidence
	// says so (source columnLineage).
	compareGolden(t, "dbt", a.build())
}
