package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// eventWith returns a run event whose first output has the given (JSON-encoded) namespace and name.
func eventWith(jobName, outNS, outName, outFacets string) string {
	return fmt.Sprintf(`{"eventType":"START","eventTime":%q,"producer":"https://example.com/producer","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":"gw-test","name":%s},"inputs":[],"outputs":[{"namespace":%s,"name":%s,"facets":{%s}}]}`,
		time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), uuid.NewString(), jobName, outNS, outName, outFacets)
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const facetHead = `"_producer":"https://example.com/producer","_schemaURL":"https://openlineage.io/spec/facets/1-0-0/X.json"`

// Names the projector cannot bind are refused at the gateway, naming the field and the rule, never 202 and then
// lost (issue 13 item 7).
func TestIdentityTheProjectorCannotBindIs400NamingFieldAndRule(t *testing.T) {
	f := newFixture(t, defaults())
	good := jsonStr("s.t")
	ns := jsonStr("postgres://db")
	long := jsonStr(strings.Repeat("n", 9000))
	cases := []struct {
		name, body, field, rule string
	}{
		{"NUL in name", eventWith(`"j"`, ns, jsonStr("a\x00b"), ""), "outputs[0].name", "control-character"},
		{"BEL", eventWith(`"j"`, ns, jsonStr("a\ab"), ""), "outputs[0].name", "control-character"},
		{"ESC", eventWith(`"j"`, ns, jsonStr("a\x1bb"), ""), "outputs[0].name", "control-character"},
		{"CR", eventWith(`"j"`, ns, jsonStr("a\rb"), ""), "outputs[0].name", "control-character"},
		{"LF", eventWith(`"j"`, ns, jsonStr("a\nb"), ""), "outputs[0].name", "control-character"},
		{"TAB", eventWith(`"j"`, ns, jsonStr("a\tb"), ""), "outputs[0].name", "control-character"},
		{"DEL", eventWith(`"j"`, ns, jsonStr("a\x7fb"), ""), "outputs[0].name", "control-character"},
		{"NEL U+0085", eventWith(`"j"`, ns, jsonStr("a\u0085b"), ""), "outputs[0].name", "control-character"},
		{"invalid UTF-8", eventWith(`"j"`, ns, "\"a\xffb\"", ""), "outputs[0].name", "utf8"},
		{"leading space", eventWith(`"j"`, ns, jsonStr(" s.t"), ""), "outputs[0].name", "surrounding-whitespace"},
		{"trailing space in namespace", eventWith(`"j"`, jsonStr("postgres://db "), good, ""), "outputs[0].namespace", "surrounding-whitespace"},
		{"name over the cap", eventWith(`"j"`, ns, long, ""), "outputs[0].name", "max-length"},
		{"job name with NUL", eventWith(jsonStr("j\x00"), ns, good, ""), "job.name", "control-character"},
		{"job name over the cap", eventWith(long, ns, good, ""), "job.name", "max-length"},
		{"symlink", eventWith(`"j"`, ns, good, `"symlinks":{`+facetHead+`,"identifiers":[{"namespace":"hive://m","name":"ok","type":"TABLE"},{"namespace":"hive://m","name":"x\u0007","type":"TABLE"}]}`),
			"outputs[0].facets.symlinks.identifiers[1].name", "control-character"},
		{"rename previous identifier", eventWith(`"j"`, ns, good, `"lifecycleStateChange":{`+facetHead+`,"lifecycleStateChange":"RENAME","previousIdentifier":{"namespace":"postgres://db\n","name":"old"}}`),
			"outputs[0].facets.lifecycleStateChange.previousIdentifier.namespace", "control-character"},
		{"column lineage input", eventWith(`"j"`, ns, good, `"columnLineage":{`+facetHead+`,"fields":{"c":{"inputFields":[{"namespace":"postgres://db","name":"src\u001b","field":"a"}]}}}`),
			"outputs[0].facets.columnLineage.fields.c.inputFields[0].name", "control-character"},
		{"column lineage input field", eventWith(`"j"`, ns, good, `"columnLineage":{`+facetHead+`,"fields":{"c":{"inputFields":[{"namespace":"postgres://db","name":"src","field":"a\u0000"}]}}}`),
			"outputs[0].facets.columnLineage.fields.c.inputFields[0].field", "control-character"},
		{"column lineage output field over the cap", eventWith(`"j"`, ns, good, `"columnLineage":{`+facetHead+`,"fields":{"`+strings.Repeat("c", 3000)+`":{"inputFields":[]}}}`),
			"outputs[0].facets.columnLineage.fields", "max-length"},
		{"schema field", eventWith(`"j"`, ns, good, `"schema":{`+facetHead+`,"fields":[{"name":"ok"},{"name":"b\u0085ad"}]}`),
			"outputs[0].facets.schema.fields", "control-character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := post(t, f.srv.URL+"/api/v1/lineage", c.body, map[string]string{"X-Test-Principal": "ident"})
			if code != http.StatusBadRequest {
				t.Fatalf("got %d %v, want 400", code, body)
			}
			e := body["error"].(map[string]any)
			if e["field"] != c.field || e["rule"] != c.rule {
				t.Fatalf("error %v, want field %s rule %s", e, c.field, c.rule)
			}
		})
	}
	q := testenv.ReadTopic(t, f.kc, f.kc.QuarantineTopic, len(cases), 20*time.Second)
	if len(q) != len(cases) {
		t.Fatalf("want every refusal quarantined, got %d of %d", len(q), len(cases))
	}
	var rec kafkaio.QuarantineRecord
	if err := json.Unmarshal(q[0].Value, &rec); err != nil || rec.Rule == "" || rec.Field == "" || rec.Principal != "producer-ident" {
		t.Fatalf("quarantine record %+v (%v)", rec, err)
	}
}

// The batch endpoint answers per event: a bad name sinks only its own event.
func TestBatchRefusesBadIdentityPerEvent(t *testing.T) {
	f := newFixture(t, defaults())
	good := eventWith(`"j"`, jsonStr("postgres://db"), jsonStr("s.t"), "")
	bad := eventWith(`"j"`, jsonStr("postgres://db"), jsonStr("s\x00t"), "")
	code, _, body := post(t, f.srv.URL+"/api/v1/lineage/batch", "["+good+","+bad+"]", nil)
	if code != http.StatusOK || body["accepted"] != 1.0 || body["rejected"] != 1.0 {
		t.Fatalf("got %d %v", code, body)
	}
	e := body["results"].([]any)[1].(map[string]any)["error"].(map[string]any)
	if e["field"] != "outputs[0].name" || e["rule"] != "control-character" {
		t.Fatalf("bad item's error: %v", e)
	}
}
