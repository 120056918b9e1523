package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/governance/flowexport"
)

const historyQ = `query($ns: String!) {
  customers: dataset(namespace: $ns, name: "customers") {
    tagHistory { permissionsFiltered entries { name field class value source validFrom validTo eventId by sensitive } }
    fields { path tagHistory { permissionsFiltered entries { name field validFrom validTo by } } } }
  copy: dataset(namespace: $ns, name: "copy") {
    blockHistory { permissionsFiltered entries { field by reason validFrom validTo eventId
      edge { job { namespace name } from { namespace name field } } } } } }`

// historyLines renders a tag history's entries as "name field class value source from..to event? by sensitive", the
// times as offsets from t0.
func (w *piiWorld) historyLines(t *testing.T, h map[string]any) []string {
	t.Helper()
	var out []string
	for _, x := range h["entries"].([]any) {
		e := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v field=%v class=%v value=%v source=%v %s..%s event=%v by=%v sensitive=%v", e["name"], e["field"],
			e["class"], e["value"], e["source"], w.offset(t, e["validFrom"]), w.offset(t, e["validTo"]), e["eventId"] != nil, e["by"], e["sensitive"]))
	}
	return out
}

// offset renders a Time as the minutes since t0 (open: nil).
func (w *piiWorld) offset(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return "open"
	}
	at, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return fmt.Sprintf("+%v", at.Sub(w.t0))
}

// getExport gets the flow export at path as tok.
func (w *piiWorld) getExport(t *testing.T, tok, path string, q url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+w.api+path+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTagAndBlockHistoryThroughTheGateway (ADR 0082): tags and blocks added and removed over time by DatasetEvents
// through the gateway, Kafka and the consumer, read back as Dataset.tagHistory, Field.tagHistory and
// Dataset.blockHistory with their intervals. customers: email:pii and confidential at +2m, phone:pii.phone and
// confidential at +30m (email's tag removed), an empty tags facet at +40m (every tag removed). copy.email (copied
// from customers.email from +3m): a field block at +10m, replaced at +20m by an edge block (job copy, from
// customers.email), removed at +50m. Then the flow export (CSV and JSON) asOf +15m and +25m carries the BLOCKED
// stop at copy.email with who and why.
func TestTagAndBlockHistoryThroughTheGateway(t *testing.T) {
	w := startPii(t)
	m := time.Minute
	paths := []string{"id", "email", "phone"}
	w.taggedAt(t, 1*m, "customers", paths)
	w.taggedAt(t, 2*m, "customers", paths, "email:pii", "confidential")
	w.run(t, "copy", 3*m, []string{"customers"}, "copy", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	w.taggedAt(t, 30*m, "customers", paths, "phone:pii.phone", "confidential")
	w.taggedAt(t, 40*m, "customers", paths)
	fieldBlock := map[string]any{"field": "email", "reason": "masked in the view", "by": "someone-else"}
	edgeBlock := map[string]any{"field": "email", "reason": "copy re-derives it from a masked view",
		"edge": map[string]any{"job": map[string]any{"namespace": w.sc.jobNS, "name": "copy"},
			"from": map[string]any{"namespace": w.sc.dsNS, "name": "customers", "field": "email"}}}
	w.blockAt(t, 10*m, "copy", fieldBlock)
	w.blockAt(t, 20*m, "copy", edgeBlock)
	w.blockAt(t, 50*m, "copy")

	var d map[string]any
	var raw []byte
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var errs []map[string]any
		d, errs = gqlErrs(t, w.api, token, historyQ, map[string]any{"ns": w.sc.dsNS})
		raw, _ = json.Marshal(d)
		if len(errs) == 0 && d["copy"] != nil && strings.Count(string(raw), `"validTo":null`) == 0 &&
			strings.Contains(string(raw), `"reason":"copy re-derives`) && strings.Contains(string(raw), "phone:pii.phone") {
			break // every interval closed: the last facets are projected
		}
		if time.Now().After(deadline) {
			t.Fatalf("the events were not projected within 90 s: %s %v", raw, errs)
		}
	}
	cust := d["customers"].(map[string]any)
	wantLines(t, "customers' tag history", w.historyLines(t, cust["tagHistory"].(map[string]any)), []string{
		"confidential=true field=<nil> class=confidential value=true source=e2e +2m0s..+40m0s event=true by=" + subject + " sensitive=false",
		"email:pii=true field=email class=pii value=true source=e2e +2m0s..+30m0s event=true by=" + subject + " sensitive=true",
		"phone:pii.phone=true field=phone class=pii.phone value=true source=e2e +30m0s..+40m0s event=true by=" + subject + " sensitive=true",
	})
	if cust["tagHistory"].(map[string]any)["permissionsFiltered"] != false {
		t.Errorf("the admin holds VIEW_SENSITIVE: permissionsFiltered should be false: %s", raw)
	}
	fields := map[string][]string{}
	for _, x := range cust["fields"].([]any) {
		f := x.(map[string]any)
		for _, e := range f["tagHistory"].(map[string]any)["entries"].([]any) {
			fields[f["path"].(string)] = append(fields[f["path"].(string)], fmt.Sprint(e.(map[string]any)["name"]))
			if by := e.(map[string]any)["by"]; by != subject { // ADR 0086: the principal of the setting event
				t.Errorf("field %v's tag %v was set by %v, want %s", f["path"], e.(map[string]any)["name"], by, subject)
			}
		}
	}
	if got := fmt.Sprint(fields); got != "map[email:[confidential=true email:pii=true] id:[confidential=true] phone:[confidential=true phone:pii.phone=true]]" {
		t.Errorf("the fields' tag histories: %s\n%s", got, raw)
	}

	bh := d["copy"].(map[string]any)["blockHistory"].(map[string]any)
	var blocks []string
	for _, x := range bh["entries"].([]any) {
		e := x.(map[string]any)
		edge, _ := json.Marshal(e["edge"])
		blocks = append(blocks, fmt.Sprintf("%v by=%v reason=%q %s..%s event=%v edge=%s", e["field"], e["by"], e["reason"],
			w.offset(t, e["validFrom"]), w.offset(t, e["validTo"]), e["eventId"] != nil, edge))
	}
	wantLines(t, "copy's block history", blocks, []string{
		fmt.Sprintf(`email by=%s reason="masked in the view" +10m0s..+20m0s event=true edge=null`, subject),
		fmt.Sprintf(`email by=%s reason="copy re-derives it from a masked view" +20m0s..+50m0s event=true edge={"from":{"field":"email","name":"customers","namespace":"%s"},"job":{"name":"copy","namespace":"%s"}}`,
			subject, w.sc.dsNS, w.sc.jobNS),
	})

	// the flow export carries the BLOCKED stop, with who and why, in CSV and JSON
	for at, why := range map[time.Duration]string{15 * m: "masked in the view", 25 * m: "copy re-derives it from a masked view"} {
		q := url.Values{"tag": {"pii"}, "namespace": {w.sc.dsNS}, "name": {"customers"}, "field": {"email"},
			"asOf": {w.t0.Add(at).UTC().Format(time.RFC3339Nano)}}
		msg := "BLOCKED by " + subject + ": " + why
		code, body := w.getExport(t, token, flowexport.PathCSV, q)
		rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if code != http.StatusOK || err != nil {
			t.Fatalf("flow.csv at +%v: %d %v\n%s", at, code, err, body)
		}
		col := func(name string) int { return slices.Index(flowexport.Header, name) }
		var stops []string
		for _, r := range rows[1:] {
			if r[0] == "REACHED" && r[col("dataset")] == "copy" {
				t.Errorf("flow.csv at +%v reaches copy through the block:\n%s", at, body)
			}
			if r[0] == "STOP" && r[col("reason")] == "BLOCKED" {
				stops = append(stops, strings.Join([]string{r[col("dataset")], r[col("field")], r[col("next_dataset")],
					r[col("next_field")], r[col("message")], fmt.Sprint(r[col("path_edges")] != "")}, " "))
			}
		}
		wantLines(t, fmt.Sprintf("flow.csv's BLOCKED stops at +%v", at), stops, []string{"customers email copy email " + msg + " true"})

		code, body = w.getExport(t, token, flowexport.PathJSON, q)
		var x struct {
			Reached []struct{ Dataset, Field string }
			Stops   []struct {
				Dataset, Field, Reason, Edge, Message string
				Next                                  *struct{ Dataset, Field string }
			}
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &x) != nil {
			t.Fatalf("flow.json at +%v: %d\n%s", at, code, body)
		}
		stops = nil
		for _, s := range x.Stops {
			if s.Reason == "BLOCKED" && s.Next != nil {
				stops = append(stops, fmt.Sprintf("%s %s %s %s %s %v", s.Dataset, s.Field, s.Next.Dataset, s.Next.Field, s.Message, s.Edge != ""))
			}
		}
		wantLines(t, fmt.Sprintf("flow.json's BLOCKED stops at +%v", at), stops, []string{"customers email copy email " + msg + " true"})
		if len(x.Reached) != 0 {
			t.Errorf("flow.json at +%v reaches %v through the block", at, x.Reached)
		}
	}
}
