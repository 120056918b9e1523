package resolvers

import (
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
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
