package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// blockAt sends a DatasetEvent at t0+at with dataset name's full block list (headwater_governance_block, ADR 0067).
func (w *piiWorld) blockAt(t *testing.T, at time.Duration, name string, blocks ...map[string]any) {
	t.Helper()
	d := w.ds(name)
	d["facets"] = map[string]any{"headwater_governance_block": map[string]any{"_producer": "https://example.com/e2e",
		"_schemaURL": "https://headwater.dev/facets/GovernanceBlock.json", "blocks": append([]map[string]any{}, blocks...)}}
	w.send(t, map[string]any{"eventTime": w.t0.Add(at).UTC().Format(time.RFC3339Nano), "producer": "https://example.com/e2e",
		"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent", "dataset": d})
}

// TestExplicitBlocksStopAFlowThroughTheGateway: explicit blocks (projection version 7, ADR 0067) through the
// gateway, Kafka and the consumer. customers.email (tagged pii) is copied into copy.email and copy2.email. At +10m
// the owner blocks the field copy.email and, on copy2, only the edge into copy2.email from customers.email through
// the copy2 job; at +20m it sends copy's list empty (unblocked) and keeps copy2's. piiFlow asOf +5m reaches both
// copies; at +15m stops BLOCKED at both edges with "BLOCKED by <the sender>: <why>" and reaches neither; at +25m
// reaches copy.email again while copy2's edge stays blocked.
func TestExplicitBlocksStopAFlowThroughTheGateway(t *testing.T) {
	w := startPii(t)
	m := time.Minute
	paths := []string{"id", "email"}
	w.taggedAt(t, 1*m, "customers", paths, "email:pii")
	w.run(t, "copy", 3*m, []string{"customers"}, "copy", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	w.run(t, "copy2", 3*m, []string{"customers"}, "copy2", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	edge := map[string]any{"field": "email", "reason": "copy2 re-derives it from a masked view",
		"edge": map[string]any{"job": map[string]any{"namespace": w.sc.jobNS, "name": "copy2"},
			"from": map[string]any{"namespace": w.sc.dsNS, "name": "customers", "field": "email"}}}
	w.blockAt(t, 10*m, "copy", map[string]any{"field": "email", "reason": "masked in the view", "by": "someone-else"})
	w.blockAt(t, 10*m, "copy2", edge)
	w.blockAt(t, 20*m, "copy")
	w.blockAt(t, 20*m, "copy2", edge)

	blockedBy := func(why string) string { return "BLOCKED by " + subject + ": " + why }
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		d, errs := gqlErrs(t, w.api, token, piiFlowQ, map[string]any{"ns": w.sc.dsNS, "tag": "pii",
			"asOf": w.t0.Add(25 * m).UTC().Format(time.RFC3339Nano)})
		if b, _ := json.Marshal(d); len(errs) == 0 && strings.Contains(string(b), "copy2 re-derives") &&
			strings.Contains(string(b), `"name":"copy"`) {
			break // the last facets are projected: copy reached again, copy2 still blocked
		}
		if time.Now().After(deadline) {
			t.Fatal("the events were not projected within 90 s")
		}
	}
	f, raw := w.flow(t, token, "pii", 5*m)
	if got := fmt.Sprint(f.reached()); got != "map[copy.email:CARRIED IDENTITY copy2.email:CARRIED IDENTITY]" {
		t.Fatalf("before the blocks (+5m): reached %s\n%s", got, raw)
	}
	f, raw = w.flow(t, token, "pii", 15*m)
	if len(f.reached()) != 0 {
		t.Fatalf("during the blocks (+15m): reached %v\n%s", f.reached(), raw)
	}
	msgs := map[string]string{}
	for _, s := range f.Stops {
		if s.Reason == "BLOCKED" && s.Next != nil {
			msgs[s.Next.Dataset.Name+"."+s.Next.Path] = s.Message
		}
	}
	if msgs["copy.email"] != blockedBy("masked in the view") || msgs["copy2.email"] != blockedBy("copy2 re-derives it from a masked view") {
		t.Fatalf("during the blocks (+15m): BLOCKED stops %v\n%s", msgs, raw)
	}
	f, raw = w.flow(t, token, "pii", 25*m)
	if got := fmt.Sprint(f.reached()); got != "map[copy.email:CARRIED IDENTITY]" || !strings.Contains(raw, blockedBy("copy2 re-derives")) {
		t.Fatalf("after copy's unblock (+25m): reached %s\n%s", got, raw)
	}
}
