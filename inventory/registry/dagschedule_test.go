package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
)

// dbtManifest is a manifest of one table model, model.<project>.m1, with meta.schedule when schedule is set.
func dbtManifest(project, schedule string) []byte {
	meta := map[string]any{}
	if schedule != "" {
		meta["schedule"] = schedule
	}
	id := "model." + project + ".m1"
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
		"project_name": project, "adapter_type": "duckdb"}, "sources": map[string]any{}, "nodes": map[string]any{id: map[string]any{
		"unique_id": id, "resource_type": "model", "name": "m1", "package_name": project, "database": "warehouse", "schema": "main",
		"alias": "m1", "relation_name": `"warehouse"."main"."m1"`, "tags": []string{}, "meta": meta,
		"depends_on": map[string]any{"nodes": []string{}, "macros": []string{}}, "config": map[string]any{"materialized": "table", "enabled": true}}}})
	return b
}

// airflowListing is `airflow dags list -o json` and `airflow tasks list` of one DAG with one task.
func airflowListing(dag, schedule string, paused bool) []byte {
	b, _ := json.Marshal(map[string]any{"dags": []any{map[string]any{"dag_id": dag, "is_paused": paused, "owners": "data",
		"tags": []string{}, "timetable_summary": schedule}}, "tasks": map[string]any{dag: []any{map[string]any{"task_id": "dbt_run"}}}})
	return b
}

// A dbt registration that names the Airflow DAG running the project (scheduleDag) takes that DAG's schedule, and
// its paused state, as the DAG's active Airflow registration lists it, for the nodes whose meta names none; a
// node's own meta.schedule and the registration's schedule win; a DAG not registered, or registered in a
// namespace the caller may not manage, gives "no schedule known"; re-registering after the DAG's schedule
// changed applies the new one. Through the endpoint, as `headwater inventory register --schedule-dag` posts.
func TestDbtScheduleFromTheAirflowDag(t *testing.T) {
	store := testenv.Store(t)
	ns, hidden := testenv.Namespace(t), testenv.Namespace(t)+"-hidden"
	svc := NewService(NewStore(store), nil, nsAuth{ns: true}, &memAudit{}, time.Now)
	mux := http.NewServeMux()
	NewHandler(svc, nil).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), authz.Principal{Subject: "op", Kind: "user"})))
	}))
	t.Cleanup(srv.Close)
	post := func(source string, q url.Values, body []byte) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/v1/inventory/"+source+"?"+q.Encode(), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b := new(bytes.Buffer)
			_, _ = b.ReadFrom(resp.Body)
			t.Fatalf("register %s: %d %s", source, resp.StatusCode, b)
		}
	}
	airflow, dbt := ns+"-airflow", ns+"-dbt"
	dag := "dbt_" + testenv.Token(4)
	t.Cleanup(func() {
		for _, s := range []string{airflow, dbt, airflow + "-h"} {
			_, _ = NewStore(store).run(t.Context(), `MATCH (n) WHERE (n:ExpectedJob AND n.source = $s) OR (n:InventorySource AND n.key = $s)
DETACH DELETE n`, map[string]any{"s": s})
		}
	})
	project := "p" + testenv.Token(4)
	registerDbt := func(meta, schedule, scheduleDag string) (interval time.Duration, paused bool, schedText string) {
		t.Helper()
		q := url.Values{"kind": {"dbt"}, "jobNamespace": {ns}, "datasetNamespace": {"duckdb:///w.duckdb"}}
		if schedule != "" {
			q.Set("schedule", schedule)
		}
		if scheduleDag != "" {
			q.Set("scheduleDag", scheduleDag)
		}
		post(dbt, q, dbtManifest(project, meta))
		recs, err := NewStore(store).run(t.Context(), `MATCH (e:ExpectedJob {source: $s}) WHERE e.retiredAt IS NULL
RETURN e.intervalMs AS i, e.paused AS p, e.schedule AS s`, map[string]any{"s": dbt})
		if err != nil || len(recs) != 1 {
			t.Fatalf("dbt expected jobs: %v %v", recs, err)
		}
		i, _ := recs[0].Get("i")
		p, _ := recs[0].Get("p")
		s, _ := recs[0].Get("s")
		return time.Duration(i.(int64)) * time.Millisecond, p == true, fmt.Sprint(s)
	}
	if iv, _, _ := registerDbt("", "", dag); iv != 0 {
		t.Errorf("DAG not registered: interval %v, want no schedule known", iv)
	}
	post(airflow, url.Values{"kind": {"airflow"}, "jobNamespace": {ns}}, airflowListing(dag, "@hourly", false))
	if iv, p, s := registerDbt("", "", dag); iv != time.Hour || p || s != "@hourly" {
		t.Errorf("from the DAG: %v paused %v %q, want 1h from @hourly", iv, p, s)
	}
	if iv, _, _ := registerDbt("@daily", "", dag); iv != 24*time.Hour {
		t.Errorf("the node's meta.schedule wins: %v", iv)
	}
	if iv, _, _ := registerDbt("", "@weekly", dag); iv != 7*24*time.Hour {
		t.Errorf("the registration's schedule wins: %v", iv)
	}
	post(airflow, url.Values{"kind": {"airflow"}, "jobNamespace": {ns}}, airflowListing(dag, "0 */6 * * *", true))
	if iv, p, _ := registerDbt("", "", dag); iv != 6*time.Hour || !p {
		t.Errorf("after the DAG changed (every 6 h, paused): %v paused %v", iv, p)
	}
	// the same dag_id registered where the caller may not manage inventories: it is not seen
	if _, err := NewStore(store).Register(t.Context(), mustRead(t, svc, airflow+"-h", hidden, airflowListing(dag, "@daily", false)), "x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if iv, _, _ := registerDbt("", "", dag); iv != 6*time.Hour {
		t.Errorf("a DAG in a namespace the caller may not manage counted: %v", iv)
	}
	if iv, _, _ := registerDbt("", "", dag+"x"); iv != 0 {
		t.Errorf("another DAG: %v, want no schedule known", iv)
	}
}

// mustRead reads an Airflow listing into an inventory without a permission check (the fixture of another team's
// registration).
func mustRead(t *testing.T, svc *Service, source, ns string, body []byte) inventory.Inventory {
	t.Helper()
	inv, err := svc.Read(Request{Source: source, Kind: "airflow", JobNamespace: ns, Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
