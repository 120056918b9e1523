package airflowdags

import (
	"strings"
	"testing"
	"time"
)

func TestReadCLIListing(t *testing.T) {
	// `airflow dags list -o json` (Airflow 3.3) has no schedule; `airflow tasks list` prints one id a line.
	doc := `{"dags": [{"dag_id": "hw_producers_dag", "fileloc": "/d/hw.py", "owners": "airflow", "is_paused": "True",
	  "bundle_name": "dags-folder"}],
	 "tasks": {"hw_producers_dag": "clean\nsummarise\n"}}`
	jobs, err := Read(strings.NewReader(doc), "airflow-prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Name != "hw_producers_dag.clean" || jobs[1].Name != "hw_producers_dag.summarise" {
		t.Fatalf("jobs: %+v", jobs)
	}
	if !jobs[0].Paused || jobs[0].Interval != 0 || jobs[0].Owner != "airflow" || jobs[0].Namespace != "airflow-prod" {
		t.Fatalf("clean: %+v", jobs[0])
	}
}

func TestReadRESTListing(t *testing.T) {
	doc := `{"dags": {"dags": [
	    {"dag_id": "orders", "is_paused": false, "timetable_summary": "0 * * * *", "owners": ["data-eng"],
	     "tags": [{"name": "criticality:high"}, {"name": "finance"}]},
	    {"dag_id": "legacy", "is_paused": false, "schedule_interval": {"__type": "TimeDelta", "days": 1, "seconds": 0}},
	    {"dag_id": "adhoc", "is_paused": false, "timetable_summary": null}],
	  "total_entries": 3},
	 "tasks": {"orders": {"tasks": [{"task_id": "load", "outlets": [{"uri": "s3://bucket/orders/day"}, "file:///tmp/o.csv"]}]},
	           "legacy": ["extract"]}}`
	jobs, err := Read(strings.NewReader(doc), "af")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("jobs: %+v", jobs)
	}
	load, legacy, adhoc := jobs[0], jobs[1], jobs[2]
	if load.Name != "orders.load" || load.Interval != time.Hour || load.Criticality != "high" || load.Owner != "data-eng" ||
		len(load.Outputs) != 2 || load.Outputs[0].Namespace != "s3://bucket" || load.Outputs[0].Name != "orders/day" ||
		load.Outputs[1].Namespace != "file" || load.Outputs[1].Name != "/tmp/o.csv" {
		t.Fatalf("orders.load: %+v", load)
	}
	if legacy.Name != "legacy.extract" || legacy.Interval != 24*time.Hour {
		t.Fatalf("legacy: %+v", legacy)
	}
	if adhoc.Name != "adhoc" || adhoc.Interval != 0 || adhoc.Type != "airflow dag" {
		t.Fatalf("a DAG without a task listing is one job named by its dag_id: %+v", adhoc)
	}
}

func TestReadRefuses(t *testing.T) {
	for _, doc := range []string{`{"dags": 3}`, `{"dags": [{"fileloc": "x"}]}`, `{"dags": [{"dag_id": "d", "timetable_summary": "often"}]}`,
		`{"dags": [{"dag_id": "d"}], "tasks": {"d": [{"x": 1}]}}`} {
		if _, err := Read(strings.NewReader(doc), "ns"); err == nil {
			t.Errorf("Read(%s) accepted it", doc)
		}
	}
	if _, err := Read(strings.NewReader(`{"dags": []}`), ""); err == nil {
		t.Error("no job namespace accepted")
	}
}
