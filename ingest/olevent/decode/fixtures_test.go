package decode

import (
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestDecodeProducerFixtures(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	tests := []struct {
		file  string
		kind  olevent.Kind
		etype string
		check func(t *testing.T, ev olevent.Event)
	}{
		{"airflow_task_complete.json", olevent.KindRun, olevent.TypeComplete, checkAirflow},
		{"spark_complete.json", olevent.KindRun, olevent.TypeComplete, checkSpark},
		{"dbt_model_complete.json", olevent.KindRun, olevent.TypeComplete, checkDBT},
		{"flink_running.json", olevent.KindRun, olevent.TypeRunning, checkFlink},
		{"dataset_event_rename.json", olevent.KindDataset, "", checkDatasetEvent},
		{"job_event_declared.json", olevent.KindJob, "", checkJobEvent},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ev := decodeOK(t, d, fixture(t, tt.file))
			if ev.Kind != tt.kind || ev.EventType != tt.etype {
				t.Fatalf("kind/type = %s/%q, want %s/%q", ev.Kind, ev.EventType, tt.kind, tt.etype)
			}
			if len(ev.FacetIssues) != 0 {
				t.Fatalf("unexpected facet issues: %+v", ev.FacetIssues)
			}
			if string(ev.Raw) != string(fixture(t, tt.file)) {
				t.Fatal("Raw is not the bytes decoded")
			}
			tt.check(t, ev)
		})
	}
}

func checkAirflow(t *testing.T, ev olevent.Event) {
	if ev.Run.ID != "01958f2b-9c1e-7a44-b2d0-6e3c1f0a9d27" {
		t.Errorf("run id not lower-cased: %s", ev.Run.ID)
	}
	want := &olevent.ParentRef{RunID: "01958f2b-8a00-7d11-9e0f-0c1d2e3f4a5b", JobNamespace: "airflow-prod", JobName: "finance_daily"}
	if *ev.Run.Parent != *want || *ev.Run.Root != *want {
		t.Errorf("parent/root = %+v / %+v", ev.Run.Parent, ev.Run.Root)
	}
	if ev.Run.NominalStart == nil || !ev.Run.NominalStart.Equal(time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)) || ev.Run.NominalEnd == nil {
		t.Errorf("nominal time = %v / %v", ev.Run.NominalStart, ev.Run.NominalEnd)
	}
	if _, ok := ev.Run.Facets["airflow"]; !ok {
		t.Error("unknown facet airflow dropped")
	}
	j := ev.Job
	if j.ProcessingType != olevent.ProcessingBatch || j.Integration != "AIRFLOW" || j.JobType != "TASK" || j.SQLDialect != "postgres" {
		t.Errorf("job facets: %+v", j)
	}
	if j.SourceLocation != `{"type":"git","url":"https://git.example.com/data/dags/blob/4f1c2e9/dags/finance_daily.py","repoUrl":"https://git.example.com/data/dags.git","path":"dags/finance_daily.py","version":"4f1c2e9","branch":"main"}` {
		t.Errorf("source location = %s", j.SourceLocation)
	}
	if len(j.Owners) != 1 || j.Owners[0] != (olevent.Owner{Name: "team:finance-eng", Type: "MAINTAINER"}) || j.Description == "" {
		t.Errorf("owners/doc = %+v %q", j.Owners, j.Description)
	}
	out := ev.Outputs[0]
	if got := out.ColumnLineage.Fields["amount"]; len(got) != 2 || got[0].Transformations[0].Subtype != "TRANSFORMATION" {
		t.Errorf("amount lineage = %+v", got)
	}
	if len(out.ColumnLineage.Dataset) != 2 || out.ColumnLineage.Dataset[0].Transformations[0] != (olevent.Transformation{Type: "INDIRECT", Subtype: "JOIN"}) {
		t.Errorf("dataset-level lineage = %+v", out.ColumnLineage.Dataset)
	}
	if _, ok := out.OutputFacets["outputStatistics"]; !ok || out.Facets["outputStatistics"] != nil {
		t.Error("output facets not kept apart from dataset facets")
	}
	if ev.Inputs[1].Schema != nil {
		t.Error("dataset without schema facet has a schema")
	}
	if olevent.PartitionKey(&ev) != "run:airflow-prod/finance_daily" {
		t.Errorf("partition key = %s", olevent.PartitionKey(&ev))
	}
}

func checkSpark(t *testing.T, ev olevent.Event) {
	paths := []string{}
	for _, f := range ev.Inputs[0].Schema {
		paths = append(paths, f.Path)
	}
	want := []string{"user_id", "ts", "page", "page.url", "page.referrer", "page.referrer.host"}
	if !slices.Equal(paths, want) {
		t.Errorf("flattened schema = %v, want %v", paths, want)
	}
	if s := ev.Inputs[0].Symlinks; len(s) != 1 || s[0] != (olevent.Identifier{Namespace: "hive://metastore.internal:9083", Name: "raw.clickstream", Type: "TABLE"}) {
		t.Errorf("symlinks = %+v", s)
	}
	if _, ok := ev.Inputs[0].InputFacets["inputStatistics"]; !ok {
		t.Error("input facets lost")
	}
	out := ev.Outputs[0]
	if out.Version != "6183459274017452817" || out.Lifecycle.State != olevent.LifecycleOverwrite {
		t.Errorf("version/lifecycle = %q %+v", out.Version, out.Lifecycle)
	}
	if out.Publication == nil || *out.Publication != (olevent.Publication{State: "WITHHELD", Reason: "row count below 7-day p5"}) {
		t.Errorf("publication = %+v", out.Publication)
	}
	if tr := out.ColumnLineage.Fields["session_id"][0].Transformations[0]; !tr.Masking {
		t.Errorf("masking lost: %+v", tr)
	}
	if len(out.ColumnLineage.Dataset[0].Transformations) != 2 {
		t.Errorf("dataset-level transformations = %+v", out.ColumnLineage.Dataset)
	}
	if ev.Run.Parent == nil || ev.Run.Root != nil || olevent.PartitionKey(&ev) != "run:spark-prod/clickstream_sessionize" {
		t.Errorf("parent %+v root %+v key %s", ev.Run.Parent, ev.Run.Root, olevent.PartitionKey(&ev))
	}
}

func checkDBT(t *testing.T, ev olevent.Event) {
	if len(ev.Job.Deleted) != 0 || ev.Job.SQL == "" || ev.Job.ProcessingType != olevent.ProcessingBatch {
		t.Errorf(`"_deleted": null must not delete: %+v`, ev.Job)
	}
	if len(ev.Job.Tags) != 1 || ev.Job.Tags[0].Key != "nightly" {
		t.Errorf("job tags = %+v", ev.Job.Tags)
	}
	out := ev.Outputs[0]
	if len(out.Schema) != 2 || out.Schema[0] != (olevent.SchemaField{Path: "customer_id", Type: "integer", Description: "primary key"}) {
		t.Errorf("schema = %+v", out.Schema)
	}
	if len(ev.Inputs[0].Schema) != 2 || ev.Inputs[0].Schema[0].Type != "" {
		t.Errorf("schema without types = %+v", ev.Inputs[0].Schema)
	}
	if len(out.Tags) != 2 || out.Tags[1].Field != "customer_id" || len(out.Owners) != 1 || out.Description == "" {
		t.Errorf("tags/owners/doc = %+v %+v %q", out.Tags, out.Owners, out.Description)
	}
	id := out.ColumnLineage.Fields["customer_id"][0].Transformations
	if len(id) != 1 || id[0] != (olevent.Transformation{Type: "DIRECT", Subtype: "IDENTITY"}) {
		t.Errorf("legacy IDENTITY mapped to %+v", id)
	}
	cnt := out.ColumnLineage.Fields["number_of_orders"][0].Transformations
	if len(cnt) != 1 || cnt[0] != (olevent.Transformation{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "count(o.order_id)"}) {
		t.Errorf("legacy description mapped to %+v", cnt)
	}
}

func checkFlink(t *testing.T, ev olevent.Event) {
	if ev.Job.ProcessingType != olevent.ProcessingStreaming || ev.Job.Integration != "FLINK" {
		t.Errorf("job type = %+v", ev.Job)
	}
	if !ev.EventTime.Equal(time.Date(2026, 3, 1, 10, 58, 30, 0, time.UTC)) || ev.EventTime.Location() != time.UTC {
		t.Errorf("eventTime with offset = %v", ev.EventTime)
	}
	if got := ev.Inputs[0].Schema; len(got) != 4 || got[3].Path != "customer.email" {
		t.Errorf("nested schema = %+v", got)
	}
	if olevent.PartitionKey(&ev) != "run:flink-prod/orders_enrichment" {
		t.Errorf("partition key = %s", olevent.PartitionKey(&ev))
	}
}

func checkDatasetEvent(t *testing.T, ev olevent.Event) {
	ds := ev.Dataset
	if ev.Run != nil || ev.Job != nil || ds == nil {
		t.Fatalf("dataset event shape: %+v", ev)
	}
	if ds.Lifecycle.State != olevent.LifecycleRename || *ds.Lifecycle.PreviousIdentifier != (olevent.Identifier{Namespace: "snowflake://acme-prod", Name: "ANALYTICS.MARTS.CUSTOMERS"}) {
		t.Errorf("lifecycle = %+v", ds.Lifecycle)
	}
	if ds.Publication == nil || ds.Publication.State != olevent.PublicationPublished {
		t.Errorf("publication on dataset facets = %+v", ds.Publication)
	}
	if !slices.Equal(ds.Deleted, []string{"documentation"}) || ds.Description != "" || ds.Facets["documentation"] != nil {
		t.Errorf("deleted facet: deleted=%v description=%q", ds.Deleted, ds.Description)
	}
	if olevent.PartitionKey(&ev) != "dataset:snowflake://acme-prod/ANALYTICS.MARTS.CUSTOMERS_V2" {
		t.Errorf("partition key = %s", olevent.PartitionKey(&ev))
	}
}

func checkJobEvent(t *testing.T, ev olevent.Event) {
	if ev.Run != nil || ev.EventType != "" {
		t.Fatalf("job event has a run: %+v", ev.Run)
	}
	if !slices.Equal(ev.Job.Deleted, []string{"sourceCode"}) || ev.Job.SourceCode != "" {
		t.Errorf("deleted job facet: %+v", ev.Job.Deleted)
	}
	l := ev.Job.Lineage
	if len(l) != 2 || l[0].Type != olevent.EntityDataset || l[0].Fields["email"][0].Field != "EMAIL" || l[1].Type != olevent.EntityJob || l[1].Namespace != "" {
		t.Errorf("job lineage = %+v", l)
	}
	dl := ev.Outputs[0].Lineage
	if dl == nil || len(dl.Inputs) != 1 || len(dl.AllInputs) != 2 || dl.Fields["email"][0].Transformations[0].Subtype != "IDENTITY" {
		t.Errorf("dataset lineage = %+v", dl)
	}
	if olevent.PartitionKey(&ev) != "job:reverse-etl/sync_customers_to_crm" {
		t.Errorf("partition key = %s", olevent.PartitionKey(&ev))
	}
}
