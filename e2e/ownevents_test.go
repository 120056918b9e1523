package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// gql posts a GraphQL query with tok and returns data (errors fail the test).
func gql(t *testing.T, api, tok, query string, vars map[string]any) map[string]any {
	t.Helper()
	data, errs := gqlErrs(t, api, tok, query, vars)
	if len(errs) > 0 {
		t.Fatalf("graphql %.60s: %v", query, errs)
	}
	return data
}

// postEvent sends one event to the gateway with tok and returns the status and the answer.
func postEvent(t *testing.T, api, tok string, ev []byte) (int, map[string]any) {
	t.Helper()
	return postTo(t, api, "/api/v1/lineage", tok, ev)
}

// postTo posts a JSON body to path on api with tok as the bearer and returns the status and the decoded answer.
func postTo(t *testing.T, api, path, tok string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	return answerOf(t, resp, err)
}

// answerOf is a response's status and its JSON body decoded (an empty map when it has none).
func answerOf(t *testing.T, resp *http.Response, err error) (int, map[string]any) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

const eventStatusQuery = `query($id: ID!) { event(id: $id) { state rule field reason } }`

func eventState(t *testing.T, api, tok, id string) map[string]any {
	t.Helper()
	return gql(t, api, tok, eventStatusQuery, map[string]any{"id": id})["event"].(map[string]any)
}

// quarantinedIDs pages through quarantinedEvents (first: 2) and returns id -> principal.
func quarantinedIDs(t *testing.T, api, tok string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var after any
	for range 500 {
		d := gql(t, api, tok, `query($after: String) { quarantinedEvents(first: 2, after: $after) { nodes { id principal rule field stage reason } endCursor hasNextPage } }`,
			map[string]any{"after": after})["quarantinedEvents"].(map[string]any)
		for _, n := range d["nodes"].([]any) {
			n := n.(map[string]any)
			out[n["id"].(string)] = n["principal"].(string)
		}
		if d["hasNextPage"] != true {
			return out
		}
		after = d["endCursor"]
	}
	t.Fatal("quarantinedEvents did not end")
	return nil
}

// quarantinedFind pages through quarantinedEvents (first: 200) until it finds id, and returns its principal. An
// administrator sees every principal's refusals in the shared database, which grows with every run of the suite.
func quarantinedFind(t *testing.T, api, tok, id string) (string, bool) {
	t.Helper()
	var after any
	for {
		d := gql(t, api, tok, `query($after: String) { quarantinedEvents(first: 200, after: $after) { nodes { id principal } endCursor hasNextPage } }`,
			map[string]any{"after": after})["quarantinedEvents"].(map[string]any)
		for _, n := range d["nodes"].([]any) {
			if n := n.(map[string]any); n["id"] == id {
				return n["principal"].(string), true
			}
		}
		if d["hasNextPage"] != true {
			return "", false
		}
		after = d["endCursor"]
	}
}

func narrowEvent(outName string) []byte {
	name, _ := json.Marshal(outName)
	return []byte(fmt.Sprintf(`{"eventType":"COMPLETE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":"%s-allowed","name":"job"},"inputs":[],"outputs":[{"namespace":"s3://%s-allowed","name":%s}]}`,
		time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), uuid.NewString(), runID, runID, name))
}

// A producer can always learn what became of its own events (issue 13 item 7): a name the projector cannot bind
// is refused at the gateway (never 202 and then gone), and the producer, which holds only PRODUCE, sees the
// refusal in event(id) and in quarantinedEvents, and its projected event as PROJECTED; a principal without grants
// sees neither; an administrator sees every principal's quarantined events. Events on an external topic get the
// same identity checks in the consumer.
func TestProducerSeesWhatBecameOfItsOwnEvents(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	ext := "t." + testenv.Token(5) + ".ol-direct"
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_KAFKA_EXTERNAL_TOPICS=" + ext + "=" + topicPrincipal},
		"serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	nobody := newToken(t, runID+"-nobody-"+testenv.Token(3))

	code, body := postEvent(t, api, narrowToken, narrowEvent("out\x00nul"))
	if code != http.StatusBadRequest {
		t.Fatalf("a name with NUL: want 400, got %d %v", code, body)
	}
	if e := body["error"].(map[string]any); e["field"] != "outputs[0].name" || e["rule"] != "control-character" {
		t.Fatalf("the refusal must name the field and the rule: %v", e)
	}
	refused := body["eventId"].(string)
	code, body = postEvent(t, api, narrowToken, narrowEvent("out-"+testenv.Token(3)))
	if code != http.StatusAccepted {
		t.Fatalf("good event: %d %v", code, body)
	}
	accepted := body["eventId"].(string)
	waitQuarantined(t, store, refused)
	waitEvents(t, store, []string{accepted}, projectTimeout)

	if st := eventState(t, api, narrowToken, refused); st["state"] != "QUARANTINED" || st["rule"] != "control-character" || st["field"] != "outputs[0].name" {
		t.Fatalf("the producer's own refused event: %v", st)
	}
	if st := eventState(t, api, narrowToken, accepted); st["state"] != "PROJECTED" {
		t.Fatalf("the producer's own projected event (it holds PRODUCE only): %v", st)
	}
	for _, id := range []string{refused, accepted} {
		if st := eventState(t, api, nobody, id); st["state"] != "PENDING" || st["reason"] != nil {
			t.Fatalf("someone else's event %s: %v, want PENDING", id, st)
		}
	}
	mine := quarantinedIDs(t, api, narrowToken)
	if _, ok := mine[refused]; !ok {
		t.Fatalf("quarantinedEvents of the producer lacks %s: %v", refused, mine)
	}
	for id, p := range mine {
		if p != runID+"-narrow-producer" {
			t.Fatalf("quarantinedEvents shows %s of principal %s to the producer", id, p)
		}
	}
	if others := quarantinedIDs(t, api, nobody); len(others) != 0 {
		t.Fatalf("a principal without grants sees quarantined events: %v", others)
	}
	if p, ok := quarantinedFind(t, api, token, refused); !ok || p != runID+"-narrow-producer" {
		t.Fatalf("an administrator sees every principal's quarantined events; %s missing (%q)", refused, p)
	}

	// The same name straight on an external topic: quarantined by the consumer with the field and the rule.
	raw := narrowEvent("ext\u0007bel")
	p, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Send(context.Background(), []kafkaio.Message{{Topic: ext, Key: "run:e2e", Value: raw}}); err != nil {
		t.Fatal(err)
	}
	extID := kafkaio.RejectedEventID(raw)
	if reason := waitQuarantined(t, store, extID); !strings.Contains(reason, "control character") {
		t.Fatalf("external event quarantined with reason %q", reason)
	}
	// Event ids are scoped by principal (item 5): the principal the topic is bound to asks, with a token of its own.
	topicToken, _, err := apitoken.NewStore(store, time.Now).Create(context.Background(),
		apitoken.NewToken{Owner: topicPrincipal, Kind: "producer", CreatedBy: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if st := eventState(t, api, topicToken, extID); st["rule"] != "control-character" || st["field"] != "outputs[0].name" {
		t.Fatalf("external event's quarantine: %v", st)
	}
	if st := eventState(t, api, token, extID); st["state"] != "PENDING" {
		t.Fatalf("another principal learns of the topic principal's event: %v", st)
	}
}

// A gateway refusal whose cause an administrator fixes (here a tightened limit) is re-driven by `headwater
// redrive` and projected under the id the 4xx answer named; a refusal whose cause is not fixed (produce
// permission) stays quarantined when re-driven: the consumer re-checks the original principal's grants.
func TestGatewayRefusalRedrivenAfterFixIsProjected(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	tight := start(t, kc, []string{"HEADWATER_EVENT_MAX_DATASETS=1"},
		"serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	two := bytes.Replace(narrowEvent("out-"+testenv.Token(3)), []byte(`"inputs":[]`),
		[]byte(`"inputs":[{"namespace":"postgres://db","name":"src.t"}]`), 1)
	code, body := postEvent(t, api, narrowToken, two)
	if code != http.StatusBadRequest || body["error"].(map[string]any)["rule"] != "max-datasets" {
		t.Fatalf("over the tightened limit: %d %v", code, body)
	}
	fixable := body["eventId"].(string)
	forbidden := bytes.Replace(narrowEvent("out"), []byte(`"s3://`+runID+`-allowed"`), []byte(`"s3://`+runID+`-forbidden"`), 1)
	code, body = postEvent(t, api, narrowToken, forbidden)
	if code != http.StatusForbidden {
		t.Fatalf("outside its namespaces: %d %v", code, body)
	}
	denied := body["eventId"].(string)
	waitQuarantined(t, store, fixable)
	waitQuarantined(t, store, denied)
	tight.signal(syscall.SIGTERM)
	_ = tight.wait(t, 30*time.Second)

	api = freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	rd := start(t, kc, nil, "redrive", "--event-id="+fixable, "--event-id="+denied)
	if err := rd.wait(t, 60*time.Second); err != nil {
		t.Fatalf("redrive: %v", err)
	}
	waitEvents(t, store, []string{fixable}, projectTimeout)
	waitCommitted(t, kc, projectTimeout)
	if st := eventState(t, api, narrowToken, fixable); st["state"] != "PROJECTED" {
		t.Fatalf("re-driven after the fix: %v", st)
	}
	if n := countProjected(t, []string{denied}); n != 0 {
		t.Fatal("a re-driven event outside the producer's grants was projected")
	}
	if st := eventState(t, api, narrowToken, denied); st["state"] != "QUARANTINED" || st["rule"] != "produce-permission" {
		t.Fatalf("re-driven without a fix: %v", st)
	}
}

// newToken creates an API token for a subject with no grants.
func newToken(t *testing.T, owner string) string {
	t.Helper()
	tok, _, err := apitoken.NewStore(testenv.Store(t), time.Now).Create(t.Context(), apitoken.NewToken{Owner: owner, Kind: "user", CreatedBy: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
