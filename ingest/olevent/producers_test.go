package olevent

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression tests built from what the real producers of e2e/producers_*_test.go sent (testdata/producers/, paths
// and namespaces shortened, nothing else changed).

func producerDecoder(t *testing.T) *Decoder {
	t.Helper()
	d, err := NewDecoder(DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Issue 14 item 5: the OpenLineage Spark integration (1.53.0) sends jobType.processingType "NONE" on the
// application job's events. It is a value real producers send: interpreted, no warning.
func TestSparkApplicationProcessingTypeNoneIsAccepted(t *testing.T) {
	ev := decodeOK(t, producerDecoder(t), fixture(t, filepath.Join("producers", "spark-application-start.json")))
	if len(ev.FacetIssues) != 0 {
		t.Fatalf("facet issues %+v, want none", ev.FacetIssues)
	}
	if ev.Job.ProcessingType != "NONE" || ev.Job.JobType != "APPLICATION" || ev.Job.Integration != "SPARK" {
		t.Fatalf("jobType = %q/%q/%q, want NONE/APPLICATION/SPARK", ev.Job.ProcessingType, ev.Job.JobType, ev.Job.Integration)
	}
}

// Issue 14 item 4: the version of an Iceberg write is version.datasetVersion (a string, exact); the
// icebergCommitReport's snapshotId is a JSON double that lost digits and is never used as an id.
func TestIcebergVersionIsTheExactStringNeverTheDouble(t *testing.T) {
	raw := fixture(t, filepath.Join("producers", "spark-iceberg-insert-complete.json"))
	if !bytes.Contains(raw, []byte(`"snapshotId":2.8335083111369078E18`)) {
		t.Fatal("fixture no longer carries the producer's double snapshotId")
	}
	ev := decodeOK(t, producerDecoder(t), raw)
	if len(ev.FacetIssues) != 0 {
		t.Fatalf("facet issues %+v, want none", ev.FacetIssues)
	}
	if got := ev.Outputs[0].Version; got != "2833508311136907611" {
		t.Fatalf("version = %q, want the exact datasetVersion 2833508311136907611", got)
	}

	// The same event with the version sent as the double (as icebergCommitReport has it): refused with a
	// warning naming the field, and no version stored.
	lossy := bytes.Replace(raw, []byte(`"datasetVersion":"2833508311136907611"`), []byte(`"datasetVersion":2.8335083111369078E18`), 1)
	ev = decodeOK(t, producerDecoder(t), lossy)
	if ev.Outputs[0].Version != "" {
		t.Fatalf("a lossy double became version %q", ev.Outputs[0].Version)
	}
	if len(ev.FacetIssues) != 1 || ev.FacetIssues[0].Path != "outputs[0].facets.version.datasetVersion" ||
		ev.FacetIssues[0].Rule != RuleType || !strings.Contains(ev.FacetIssues[0].Message, "send it as a string") {
		t.Fatalf("facet issues %+v, want one type issue on outputs[0].facets.version.datasetVersion", ev.FacetIssues)
	}

	// An exact integer literal stays accepted (it is its own literal, not a float).
	exact := bytes.Replace(raw, []byte(`"datasetVersion":"2833508311136907611"`), []byte(`"datasetVersion":2833508311136907611`), 1)
	if v := decodeOK(t, producerDecoder(t), exact).Outputs[0].Version; v != "2833508311136907611" {
		t.Fatalf("integer literal version = %q", v)
	}
}
