package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Airflow 3 with the OpenLineage provider runs testdata/producers/airflow/dags/hw_producers.py with `airflow dags
// test` on a sqlite metadata database, sending over the HTTP transport with an API key. `dags test` sends the
// DAG run's COMPLETE with no START: the run must be projected with its terminal state and an unknown start. The
// whole answer is compared with testdata/producers/airflow.golden.
func TestProducerAirflow(t *testing.T) {
	home := producerHome(t, "HEADWATER_TEST_AIRFLOW", "scripts/producers/airflow.sh")
	p := newProducerRun(t, "airflow")
	env, airflow, events := airflowProject(t, p, home)
	p.run(t, p.work, env, 0, airflow, "db", "migrate")
	p.run(t, p.work, env, 0, airflow, "dags", "test", "hw_producers_dag")

	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	compareGolden(t, "airflow", p.answer(t).build())
}

// airflowProject copies the checked-in DAG into the run's work folder and returns the environment that points
// Airflow (the venv under home) at it and at Headwater (HTTP transport with the API key, plus a file copy of every
// event at events), and the airflow executable.
func airflowProject(t *testing.T, p *producerRun, home string) (env []string, airflow, events string) {
	t.Helper()
	src, _ := filepath.Abs("testdata/producers/airflow")
	copyTree(t, src, p.work)
	events = filepath.Join(p.work, "events.jsonl")
	transport, _ := json.Marshal(map[string]any{"type": "composite", "continue_on_failure": false,
		"transports": map[string]any{
			"headwater": map[string]any{"type": "http", "url": p.url(), "endpoint": "api/v1/lineage",
				"auth": map[string]any{"type": "api_key", "apiKey": token}},
			"copy": map[string]any{"type": "file", "log_file_path": events, "append": true},
		}})
	bin := filepath.Join(home, "venv", "bin")
	env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "AIRFLOW_HOME=" + filepath.Join(p.work, "home"),
		"AIRFLOW__CORE__DAGS_FOLDER=" + filepath.Join(p.work, "dags"), "AIRFLOW__CORE__LOAD_EXAMPLES=False",
		"HW_AIRFLOW_WORK=" + p.work, "AIRFLOW__OPENLINEAGE__NAMESPACE=" + p.jobNS,
		"AIRFLOW__OPENLINEAGE__TRANSPORT=" + string(transport)}
	airflow = filepath.Join(bin, "airflow")
	return env, airflow, events
}
