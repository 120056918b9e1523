package gen_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

var (
	start    = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	uuidRe   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	runTypes = map[string]bool{"START": true, "RUNNING": true, "COMPLETE": true, "ABORT": true, "FAIL": true, "OTHER": true}
)

func smallConfig(seed uint64) gen.Config {
	c := gen.DefaultConfig(seed, start)
	c.Datasets, c.HubConsumers = 2000, 100
	return c
}

func stream(t *testing.T, c gen.Config) *gen.Stream {
	t.Helper()
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	return w.NewStream()
}

func take(s *gen.Stream, n int) []gen.Event {
	out := make([]gen.Event, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

func TestSameSeedSameBytes(t *testing.T) {
	a, b := take(stream(t, smallConfig(11)), 3000), take(stream(t, smallConfig(11)), 3000)
	for i := range a {
		if !bytes.Equal(a[i].Body, b[i].Body) || a[i].Key != b[i].Key {
			t.Fatalf("event %d differs between two streams of the same seed", i)
		}
	}
	c := take(stream(t, smallConfig(12)), 10)
	if bytes.Equal(a[0].Body, c[0].Body) {
		t.Error("a different seed produced the same first event")
	}
}

func TestPrefixChangesNamespacesAndRunIDs(t *testing.T) {
	c1, c2 := smallConfig(5), smallConfig(5)
	c2.Prefix = "other"
	a, b := take(stream(t, c1), 1)[0], take(stream(t, c2), 1)[0]
	if a.RunID == b.RunID {
		t.Error("run ids must differ between prefixes so loads under two prefixes cannot collide")
	}
	if !bytes.Contains(b.Body, []byte(`"namespace":"other-`)) && !bytes.Contains(b.Body, []byte(`://other-`)) {
		t.Errorf("prefix not in namespaces: %s", b.Body)
	}
}

// envelope is the part of an event every consumer relies on.
type envelope struct {
	EventType string `json:"eventType"`
	EventTime string `json:"eventTime"`
	Producer  string `json:"producer"`
	SchemaURL string `json:"schemaURL"`
	Run       *struct {
		RunID  string                     `json:"runId"`
		Facets map[string]json.RawMessage `json:"facets"`
	} `json:"run"`
	Job *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"job"`
	Dataset *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"dataset"`
}

func TestEnvelopeSanity(t *testing.T) {
	for i, ev := range take(stream(t, smallConfig(3)), 20000) {
		var e envelope
		if err := json.Unmarshal(ev.Body, &e); err != nil {
			t.Fatalf("event %d: not JSON: %v", i, err)
		}
		if err := checkEnvelope(e, ev); err != "" {
			t.Fatalf("event %d: %s: %s", i, err, ev.Body)
		}
	}
}

func checkEnvelope(e envelope, ev gen.Event) string {
	if _, err := time.Parse(time.RFC3339Nano, e.EventTime); err != nil {
		return "eventTime not RFC 3339"
	}
	if !strings.HasPrefix(e.Producer, "https://github.com/OpenLineage/OpenLineage/tree/") {
		return "producer"
	}
	switch ev.Kind {
	case gen.KindRun:
		switch {
		case e.SchemaURL != gen.RunEventSchemaURL:
			return "schemaURL"
		case e.Run == nil || !uuidRe.MatchString(e.Run.RunID):
			return "run.runId not a UUID"
		case e.Job == nil || e.Job.Namespace == "" || e.Job.Name == "":
			return "job"
		case !runTypes[e.EventType]:
			return "eventType"
		case !strings.HasPrefix(ev.Key, "run:"):
			return "kafka key"
		}
	case gen.KindJob:
		if e.SchemaURL != gen.JobEventSchemaURL || e.Job == nil || e.Run != nil || e.EventType != "" {
			return "job event shape"
		}
	case gen.KindDataset:
		if e.SchemaURL != gen.DatasetEventSchemaURL || e.Dataset == nil || e.Job != nil {
			return "dataset event shape"
		}
	default:
		return "kind " + ev.Kind
	}
	return ""
}

func TestShapeAtDefaultScale(t *testing.T) {
	w, err := gen.NewWorld(gen.DefaultConfig(1, start))
	if err != nil {
		t.Fatal(err)
	}
	cons := w.Consumers()
	if len(w.Hubs) != w.Config.HubCount() || len(w.Hubs) < 1 {
		t.Fatalf("hubs: got %d, want %d", len(w.Hubs), w.Config.HubCount())
	}
	for _, h := range w.Hubs {
		if cons[h] < gen.DefaultHubConsumers {
			t.Errorf("hub %s has %d consumers, want >= %d", w.Datasets[h].Name, cons[h], gen.DefaultHubConsumers)
		}
	}
	if len(w.Datasets) != gen.DefaultDatasets {
		t.Errorf("datasets: %d", len(w.Datasets))
	}
	s := w.NewStream()
	take(s, 30000)
	st := s.Stats()
	if share := st.ColumnLineageShare(); share < 0.21 || share > 0.29 {
		t.Errorf("column-lineage share %.3f, want 0.25 +- 0.04", share)
	}
	if epr := st.EventsPerRun(); epr < 2 || epr > 4 {
		t.Errorf("events per run %.2f, want within [2,4]", epr)
	}
	for _, k := range []string{"START", "RUNNING", "COMPLETE", "FAIL", "ABORT"} {
		if st.ByType[k] == 0 {
			t.Errorf("no %s events in 30k", k)
		}
	}
	if st.Late == 0 || st.Duplicates == 0 || st.Retries == 0 || st.Streaming == 0 || st.ByKind[gen.KindJob] == 0 || st.ByKind[gen.KindDataset] == 0 {
		t.Errorf("missing traffic features: %+v", st)
	}
}

// TestRunsHaveTwoToFourEvents groups batch runs by runId (duplicate deliveries excluded).
func TestRunsHaveTwoToFourEvents(t *testing.T) {
	c := smallConfig(9)
	c.StreamingShare, c.LateShare = 0, 0 // a late START could fall outside the window
	s := stream(t, c)
	perRun, terminal := map[string]int{}, map[string]bool{}
	for _, ev := range take(s, 20000) {
		if ev.Kind != gen.KindRun || ev.Duplicate {
			continue
		}
		perRun[ev.RunID]++
		if ev.EventType == "COMPLETE" || ev.EventType == "FAIL" || ev.EventType == "ABORT" {
			terminal[ev.RunID] = true
		}
	}
	checked := 0
	for id, n := range perRun {
		if !terminal[id] { // the window cut the run (or its terminal event is late)
			continue
		}
		checked++
		if n < 2 || n > 4 {
			t.Errorf("run %s has %d events", id, n)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d complete runs checked", checked)
	}
}

func TestRenameCarriesPreviousIdentifier(t *testing.T) {
	c := smallConfig(4)
	c.RenameShare = 0.2
	found := 0
	for _, ev := range take(stream(t, c), 5000) {
		if !bytes.Contains(ev.Body, []byte(`"lifecycleStateChange":"RENAME"`)) {
			continue
		}
		found++
		if !bytes.Contains(ev.Body, []byte(`"previousIdentifier"`)) || ev.EventType != "COMPLETE" {
			t.Fatalf("rename without previousIdentifier or not on COMPLETE: %s", ev.Body)
		}
	}
	if found == 0 {
		t.Fatal("no renames at rename-share 0.2")
	}
}

func TestStreamingJobsReportStreaming(t *testing.T) {
	c := smallConfig(8)
	c.StreamingShare = 0.5
	seen := false
	for _, ev := range take(stream(t, c), 3000) {
		if bytes.Contains(ev.Body, []byte(`"processingType":"STREAMING"`)) {
			seen = true
			if ev.EventType == "COMPLETE" || ev.EventType == "FAIL" || ev.EventType == "ABORT" {
				t.Fatalf("streaming job sent a terminal event: %s", ev.Body)
			}
		}
	}
	if !seen {
		t.Fatal("no streaming events")
	}
}

func TestValidateRejectsBadConfig(t *testing.T) {
	bad := []func(*gen.Config){
		func(c *gen.Config) { c.Prefix = "Upper" },
		func(c *gen.Config) { c.Datasets = 5 },
		func(c *gen.Config) { c.ColumnShare = 1.5 },
		func(c *gen.Config) { c.FailShare, c.AbortShare, c.RetryShare = 0.5, 0.4, 0.3 },
		func(c *gen.Config) { c.Start = time.Time{} },
	}
	for i, mutate := range bad {
		c := smallConfig(1)
		mutate(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: want an error", i)
		}
	}
}

// NextPending finishes the runs already started: after it, every planned run has emitted all its events, and it
// starts no new run.
func TestNextPendingFinishesStartedRuns(t *testing.T) {
	s := stream(t, smallConfig(7))
	take(s, 3000)
	before := s.Stats()
	if before.RunsDone >= before.Runs {
		t.Fatalf("want runs in flight after 3000 events, stats %+v", before)
	}
	n := 0
	for {
		if _, ok := s.NextPending(); !ok {
			break
		}
		n++
	}
	after := s.Stats()
	if n == 0 || after.Runs != before.Runs || after.RunsDone != after.Runs {
		t.Fatalf("drained %d events; runs planned %d -> %d, done %d", n, before.Runs, after.Runs, after.RunsDone)
	}
}
