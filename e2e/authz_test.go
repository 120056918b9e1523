package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/internal/testenv"
)

// A producer writing outside its granted namespaces gets 403 naming the field, the event is quarantined and
// nothing of it is projected; the same producer's event inside its namespaces is accepted and projected; a request
// without a token is 401.
func TestProducerOutsideItsNamespacesIs403QuarantinedNotProjected(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	event := func(outNS string) []byte {
		return []byte(fmt.Sprintf(`{"eventType":"COMPLETE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":"%s-allowed","name":"job"},"inputs":[],"outputs":[{"namespace":%q,"name":"out-%s"}]}`,
			time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), uuid.NewString(), runID, outNS, testenv.Token(3)))
	}
	send := func(body []byte, tok string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage", bytes.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, _ := send(event("s3://"+runID+"-allowed"), ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: want 401, got %d", code)
	}
	code, body := send(event("s3://"+runID+"-forbidden"), narrowToken)
	if code != http.StatusForbidden {
		t.Fatalf("outside its namespaces: want 403, got %d %v", code, body)
	}
	if e := body["error"].(map[string]any); e["field"] != "outputs[0].namespace" || e["rule"] != "produce-permission" {
		t.Fatalf("403 must name the field and rule: %v", e)
	}
	denied := body["eventId"].(string)
	code, body = send(event("s3://"+runID+"-allowed"), narrowToken)
	if code != http.StatusAccepted {
		t.Fatalf("inside its namespaces: want 202, got %d %v", code, body)
	}
	allowed := body["eventId"].(string)
	waitEvents(t, store, []string{allowed}, projectTimeout)
	if reason := waitQuarantined(t, store, denied); reason == "" {
		t.Fatal("denied event quarantined without a reason")
	}
	if n := countProjected(t, []string{denied}); n != 0 {
		t.Fatal("a denied event was projected")
	}
}
