package resolvers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// TestJobTagsOfASensitiveClassNeedViewSensitive: a job's tags (the job tags facet, ADR 0068, stored as the
// projector stores it) are answered by Job.tags, a tag of a sensitive class only to a principal holding
// VIEW_SENSITIVE on the job: narrow sees `team=crm` only, narrow2 sees `pii.email` too; a job narrow may not
// describe is null, tags and all.
func TestJobTagsOfASensitiveClassNeedViewSensitive(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	w.fx.Exec(`MATCH (j:Job {key: $k}) SET j.jobTags = '["pii.email","team=crm"]'`, map[string]any{"k": graph.JobKey(w.fx.NS, "pub.j1")})
	q := `query($ns: String!) { job(namespace: $ns, name: "pub.j1") { name tags { name } } }`
	if body := string(w.post(w.narrow, q, map[string]any{"ns": w.fx.NS})); strings.Contains(body, "pii") || !strings.Contains(body, "team=crm") {
		t.Errorf("narrow (no VIEW_SENSITIVE) should see team=crm and no pii tag: %s", body)
	}
	if body := string(w.post(w.narrow2, q, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, `{"name":"pii.email"},{"name":"team=crm"}`) {
		t.Errorf("narrow2 (VIEW_SENSITIVE) should see both tags: %s", body)
	}
	if body := string(w.post(w.admin, q, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, "pii.email") {
		t.Errorf("admin should see the job's tags: %s", body)
	}
}

// setJobTagHistory writes a job's tag history as projection version 9 stores it (jobTagHistory, ADR 0090) and
// its current tags.
func (w *world) setJobTagHistory(jobKey string, h []graph.TagInterval, current string) {
	w.t.Helper()
	b, _ := json.Marshal(h)
	w.fx.Exec(`MATCH (j:Job {key: $k}) SET j.jobTagHistory = $h, j.jobTags = $c`,
		map[string]any{"k": jobKey, "h": string(b), "c": current})
}

// TestJobTagHistoryOfASensitiveClassNeedsViewSensitive: Job.tagHistory (ADR 0090) answers every interval with its
// event and sender; an entry of a sensitive class (pii.email, set by a sender named nowhere else) only to narrow2
// (VIEW_SENSITIVE on the job), left out whole for narrow, whose answer says permissionsFiltered; a job narrow
// may not describe is null, its history (a tag naming a secret) never shown; Job.tags at an asOf before the
// sensitive tag ended answers it (to narrow2).
func TestJobTagHistoryOfASensitiveClassNeedsViewSensitive(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	t0, t1 := w.fx.T0.Add(-2*time.Hour), w.fx.T0.Add(-time.Hour)
	sender := "sender-" + testenv.Token(6)
	w.setJobTagHistory(graph.JobKey(w.fx.NS, "pub.j1"), []graph.TagInterval{
		{Name: "pii.email", ValidFrom: graph.Millis(t0), ValidTo: graph.Millis(t1), EventID: "ev-pii", By: sender},
		{Name: "team=crm", ValidFrom: graph.Millis(t0), ValidTo: graph.OpenEnd, EventID: "ev-team", By: "dbt"},
	}, `["team=crm"]`)
	secretTag := w.hidden("jobtag")
	w.setJobTagHistory(w.jHidden, []graph.TagInterval{{Name: secretTag, ValidFrom: graph.Millis(t0), ValidTo: graph.OpenEnd, EventID: "ev-h", By: "dbt"}}, `["`+secretTag+`"]`)
	q := `query($ns: String!, $at: Time) {
  pub: job(namespace: $ns, name: "pub.j1") { tagHistory { permissionsFiltered
    entries { name field class value validFrom validTo eventId by sensitive } } }
  then: job(namespace: $ns, name: "pub.j1", asOf: $at) { tags { name } }
}`
	vars := map[string]any{"ns": w.fx.NS, "at": t0.Add(time.Minute).Format(time.RFC3339Nano)}
	hq := `query($ns: String!, $hidden: String!) { job(namespace: $ns, name: $hidden) { tagHistory { entries { name by } } } }`
	hvars := map[string]any{"ns": w.fx.NS, "hidden": w.jobName(w.jHidden)}
	team := `{"name":"team=crm","field":null,"class":"team","value":"crm","validFrom":"` + t0.UTC().Format(time.RFC3339Nano) +
		`","validTo":null,"eventId":"ev-team","by":"dbt","sensitive":false}`
	pii := `{"name":"pii.email","field":null,"class":"pii.email","value":null,"validFrom":"` + t0.UTC().Format(time.RFC3339Nano) +
		`","validTo":"` + t1.UTC().Format(time.RFC3339Nano) + `","eventId":"ev-pii","by":"` + sender + `","sensitive":true}`
	body := string(w.post(w.narrow, q, vars))
	if !strings.Contains(body, `"pub":{"tagHistory":{"permissionsFiltered":true,"entries":[`+team+`]}}`) ||
		strings.Contains(body, sender) || strings.Contains(body, "pii") {
		t.Errorf("narrow (no VIEW_SENSITIVE) should get team=crm only, permissionsFiltered, never the pii entry or its sender:\n%s", body)
	}
	if !strings.Contains(body, `"then":{"tags":[{"name":"team=crm"}]}`) {
		t.Errorf("narrow: the job's tags then without pii:\n%s", body)
	}
	// a job narrow may not describe is missing (its name in the error is the caller's own argument)
	if h := string(w.post(w.narrow, hq, hvars)); !strings.Contains(h, `"data":{"job":null}`) || strings.Contains(h, secretTag) {
		t.Errorf("narrow: the hidden job should be missing, its history never shown:\n%s", h)
	}
	w.noLeak("job tag history as narrow", []byte(body))
	body = string(w.post(w.narrow2, q, vars))
	if !strings.Contains(body, `"pub":{"tagHistory":{"permissionsFiltered":false,"entries":[`+pii+`,`+team+`]}}`) {
		t.Errorf("narrow2 (VIEW_SENSITIVE) should get both entries, the pii one with its sender:\n%s", body)
	}
	if !strings.Contains(body, `"then":{"tags":[{"name":"pii.email"},{"name":"team=crm"}]}`) {
		t.Errorf("narrow2: Job.tags at asOf %s should answer the tags then (pii.email too):\n%s", vars["at"], body)
	}
	w.noLeak("job tag history as narrow2", []byte(body))
	if body := string(w.post(w.admin, hq, hvars)); !strings.Contains(body, secretTag) {
		t.Errorf("admin should see the hidden job's tag history (the check would be vacuous):\n%s", body)
	}
}
