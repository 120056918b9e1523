package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 14 items 4 and 5 through the gateway, with events the real Spark integration sent (ingest/olevent/decode/
// testdata/producers): the application event's processingType NONE is accepted without a warning and served; an
// Iceberg write's version is the exact datasetVersion string, and the same write with the version as the lossy
// double icebergCommitReport carries is answered with a warning naming the field and stores no version.
func TestRealSparkEventsThroughTheGateway(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api}
	jobNS := runID + "-spark-" + testenv.Token(4)
	dir := "/tmp/" + jobNS // the fixtures' dataset paths move under a directory of this test
	load := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "ingest", "olevent", "decode", "testdata", "producers", name))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(`"hw-spark"`), []byte(`"`+jobNS+`"`))
		b = bytes.ReplaceAll(b, []byte("/tmp/hw-spark"), []byte(dir))
		b = regexp.MustCompile(`"eventTime":"[^"]*"`).ReplaceAll(b,
			[]byte(`"eventTime":"`+time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano)+`"`))
		for _, id := range regexp.MustCompile(`"runId":"([^"]*)"`).FindAllSubmatch(b, -1) {
			b = bytes.ReplaceAll(b, id[1], []byte(uuid.NewString())) // fresh runs (the parent keeps pointing at the same new id)
		}
		return b
	}
	post := func(raw []byte) (string, []any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(authed(req))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST: %d %v", resp.StatusCode, body)
		}
		w, _ := body["warnings"].([]any)
		return body["eventId"].(string), w
	}

	app := load("spark-application-start.json")
	appID, warnings := post(app)
	if len(warnings) != 0 {
		t.Errorf("Spark application event answered with warnings %v, want none", warnings)
	}
	exact := load("spark-iceberg-insert-complete.json")
	exactID, warnings := post(exact)
	if len(warnings) != 0 {
		t.Errorf("Iceberg write answered with warnings %v, want none", warnings)
	}
	lossy := bytes.Replace(load("spark-iceberg-insert-complete.json"), []byte(`"datasetVersion":"2833508311136907611"`),
		[]byte(`"datasetVersion":2.8335083111369078E18`), 1)
	lossyID, warnings := post(lossy)
	if len(warnings) != 1 || !strings.Contains(jsonOf(warnings), "outputs[0].facets.version.datasetVersion") {
		t.Errorf("lossy version answered with warnings %v, want one naming outputs[0].facets.version.datasetVersion", warnings)
	}
	waitEvents(t, store, []string{appID, exactID, lossyID}, projectTimeout)

	job := o.gql(t, `query($ns: String!) { job(namespace: $ns, name: "hw_producers_spark") { processingType jobType integration } }`,
		map[string]any{"ns": jobNS})["job"].(map[string]any)
	if job["processingType"] != "NONE" || job["jobType"] != "APPLICATION" || job["integration"] != "SPARK" {
		t.Errorf("application job = %v, want NONE/APPLICATION/SPARK", job)
	}
	for raw, want := range map[string]any{string(exact): "2833508311136907611", string(lossy): nil} {
		run := regexp.MustCompile(`"run":\{"runId":"([^"]*)"`).FindStringSubmatch(raw)[1]
		r := o.gql(t, `query($id: ID!) { run(id: $id) { outputs { version } } }`, map[string]any{"id": run})["run"].(map[string]any)
		outs := r["outputs"].([]any)
		if len(outs) != 1 || outs[0].(map[string]any)["version"] != want {
			t.Errorf("run %s outputs %v, want one with version %v", run, outs, want)
		}
	}
}

// Issue 14 item 2 through the gateway (ADR 0025), with the events the real Spark integration sent: an Iceberg
// INSERT (the owner's schema of ice.db.orders), then `SELECT snapshot_id, operation FROM ice.db.orders.snapshots`,
// which Spark reports as an input named by the base table's location with the snapshots table's schema and a
// symlink db.orders.snapshots. The base table keeps exactly its own fields, all open, none observed on read, and
// no alias db.orders.snapshots; the read is an input of its own dataset db.orders.snapshots, whose fields are the
// snapshots table's, observed on read.
func TestRealSparkIcebergMetadataTableReadThroughTheGateway(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	o := &ownTest{t: t, api: api}
	jobNS := runID + "-spark-" + testenv.Token(4)
	dir := "/tmp/" + jobNS
	at := time.Now().UTC().Add(-2 * time.Minute)
	load := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "ingest", "olevent", "decode", "testdata", "producers", name))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(`"hw-spark"`), []byte(`"`+jobNS+`"`))
		b = bytes.ReplaceAll(b, []byte("/tmp/hw-spark"), []byte(dir))
		at = at.Add(time.Second) // the write first, then the read, as Spark ran them
		b = regexp.MustCompile(`"eventTime":"[^"]*"`).ReplaceAll(b, []byte(`"eventTime":"`+at.Format(time.RFC3339Nano)+`"`))
		for _, id := range regexp.MustCompile(`"runId":"([^"]*)"`).FindAllSubmatch(b, -1) {
			b = bytes.ReplaceAll(b, id[1], []byte(uuid.NewString()))
		}
		return b
	}
	var ids []string
	var readRun string
	for _, name := range []string{"spark-iceberg-insert-complete.json", "spark-iceberg-snapshots-read-complete.json"} {
		raw := load(name)
		ids = append(ids, postOK(t, api, raw))
		readRun = regexp.MustCompile(`"run":\{"runId":"([^"]*)"`).FindStringSubmatch(string(raw))[1]
	}
	waitEvents(t, store, ids, projectTimeout)

	const q = `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) {
		fields { path observedOnRead validTo } aliases { namespace name } } }`
	table := o.gql(t, q, map[string]any{"ns": "file", "n": dir + "/iceberg_wh/db/orders"})["dataset"].(map[string]any)
	var fields []string
	for _, x := range table["fields"].([]any) {
		f := x.(map[string]any)
		fields = append(fields, fmt.Sprintf("%v observedOnRead=%v open=%v", f["path"], f["observedOnRead"], f["validTo"] == nil))
	}
	slices.Sort(fields)
	want := []string{"amount observedOnRead=false open=true", "customer_id observedOnRead=false open=true",
		"order_id observedOnRead=false open=true", "status observedOnRead=false open=true"}
	if !slices.Equal(fields, want) {
		t.Errorf("base table fields %v, want exactly its own %v", fields, want)
	}
	for _, x := range table["aliases"].([]any) {
		if a := x.(map[string]any); strings.HasSuffix(a["name"].(string), ".snapshots") {
			t.Errorf("base table has the metadata table's name %v as an alias", a)
		}
	}

	meta := o.gql(t, q, map[string]any{"ns": "file:" + dir + "/iceberg_wh", "n": "db.orders.snapshots"})["dataset"]
	if meta == nil {
		t.Fatalf("no dataset file:%s/iceberg_wh db.orders.snapshots", dir)
	}
	var metaFields []string
	for _, x := range meta.(map[string]any)["fields"].([]any) {
		f := x.(map[string]any)
		if f["observedOnRead"] != true {
			t.Errorf("metadata table field %v not labelled observed on read", f)
		}
		metaFields = append(metaFields, f["path"].(string))
	}
	if !slices.Contains(metaFields, "snapshot_id") || !slices.Contains(metaFields, "committed_at") {
		t.Errorf("metadata table fields %v, want the snapshots table's (snapshot_id, committed_at, ...)", metaFields)
	}

	r := o.gql(t, `query($id: ID!) { run(id: $id) { inputs { dataset { namespace name } version } } }`,
		map[string]any{"id": readRun})["run"].(map[string]any)
	ins := r["inputs"].([]any)
	if len(ins) != 1 {
		t.Fatalf("read run inputs %v, want one", ins)
	}
	in := ins[0].(map[string]any)
	if ds := in["dataset"].(map[string]any); ds["name"] != "db.orders.snapshots" || ds["namespace"] != "file:"+dir+"/iceberg_wh" {
		t.Errorf("read run input %v, want the metadata table db.orders.snapshots, not the base table", in)
	}
}

// postOK posts one event with the test's API key and returns its event id; anything but 202 fails the test.
func postOK(t *testing.T, api string, raw []byte) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %d %v", resp.StatusCode, body)
	}
	return body["eventId"].(string)
}
