package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/gateway"
)

// Issue 13 item 5: event ids are scoped by producer principal. The same principal reusing a recent id for other
// content gets 409 (rule id-conflict); a plain retry is accepted again (idempotent); another principal may use
// the same id; inside one batch the second use with other content is rejected alone.
func TestEventIDReusedForOtherContentIs409PerPrincipal(t *testing.T) {
	cfg := defaults()
	cfg.RecentIDs = gateway.DefaultRecentIDs
	f := newFixture(t, cfg)
	url := f.srv.URL + "/api/v1/lineage"
	id := "evt-" + uuid.NewString()
	first, other := runEvent(uuid.NewString(), "START"), runEvent(uuid.NewString(), "COMPLETE")
	as := func(p string) map[string]string {
		return map[string]string{"X-Test-Principal": p, "Idempotency-Key": id}
	}
	if code, _, body := post(t, url, first, as("a")); code != http.StatusAccepted || body["eventId"] != id {
		t.Fatalf("first: %d %v", code, body)
	}
	code, _, body := post(t, url, other, as("a"))
	if code != http.StatusConflict {
		t.Fatalf("same principal, same id, other content: want 409, got %d %v", code, body)
	}
	if e, _ := body["error"].(map[string]any); e["rule"] != "id-conflict" || e["field"] != "eventId" ||
		!strings.Contains(e["message"].(string), id) {
		t.Fatalf("409 must name the field, the rule and the id: %v", body)
	}
	if code, _, body := post(t, url, first, as("a")); code != http.StatusAccepted {
		t.Fatalf("a retry of the same event: want 202, got %d %v", code, body)
	}
	if code, _, body := post(t, url, other, as("b")); code != http.StatusAccepted || body["eventId"] != id {
		t.Fatalf("another principal's event under the same id: want 202, got %d %v", code, body)
	}
	batchID := "batch-" + uuid.NewString()
	withID := func(ev string) string {
		return strings.Replace(ev, `{"eventType"`, `{"eventId":"`+batchID+`","eventType"`, 1)
	}
	code, _, body = post(t, f.srv.URL+"/api/v1/lineage/batch", "["+withID(first)+","+withID(other)+","+withID(first)+"]",
		map[string]string{"X-Test-Principal": "c"})
	if code != http.StatusOK || body["accepted"] != float64(2) || body["rejected"] != float64(1) {
		t.Fatalf("batch: %d %v", code, body)
	}
	res := body["results"].([]any)
	if r := res[1].(map[string]any); r["status"] != "rejected" || r["error"].(map[string]any)["rule"] != "id-conflict" {
		t.Fatalf("batch item 1: %v", r)
	}
}
