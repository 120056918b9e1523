package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Issue 20 with the governance issue: a real dbt project's tags and meta (the model's config tags and meta, a
// column's tags) imported with the manifest become the dataset's tags governance reads (docs/governance.md "How
// tags get in", ADR 0071): Dataset.tags shows them, rendered key=value and field:key=value.
func TestDeclareDbtTagsReachGovernance(t *testing.T) {
	d := newDeclareRun(t)
	d.edit(t, "models/schema.yml", func(s string) string {
		return strings.Replace(s, "  - name: customer_totals\n    description: Total spent per customer.\n    columns:\n",
			"  - name: customer_totals\n    description: Total spent per customer.\n    config:\n      tags: [finance]\n      meta:\n        contains_pii: true\n    columns:\n      - name: full_name\n        config:\n          tags: [pii]\n", 1)
	})
	d.dbt(t, "parse", "-q")
	d.declareOK(t, d.manifest(t))
	data := gql(t, d.api, token, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { tags { name } } }`,
		map[string]any{"ns": d.dsNS, "n": "warehouse.main.customer_totals"})
	var got []string
	for _, x := range data["dataset"].(map[string]any)["tags"].([]any) {
		got = append(got, fmt.Sprint(x.(map[string]any)["name"]))
	}
	slices.Sort(got)
	wantLines(t, "the declared dataset's tags", got, []string{"contains_pii=true", "finance=true", "full_name:pii=true"})
}

const dbtFlowQ = `query($ns: String!) {
  piiFlow(tag: "pii", from: {field: {namespace: $ns, name: "warehouse.main.stg_customers", field: "full_name"}}) {
    origins { field { path dataset { name } } tags { name } }
    reached { field { path dataset { namespace name } } effect distance origin { path }
      path { rule explanation edge { from to job { name } transformations { type subtype masking } } } }
    stops { field { path dataset { name } } reason message next { path dataset { name } } }
    gaps { kind message } } }`

// Issue 19 with ADR 0071: a column tag declared in a real dbt project (stg_customers.full_name, config tags
// [pii], dbt 1.11 parse, imported with the manifest) is an origin of piiFlow, and the flow follows the column
// lineage dbt-ol's real `build` reports: it reaches customer_totals.full_name (the column the model selects from
// it) carried, customer_totals' other columns at most influenced, and says "unknown: no column lineage" where
// customer_totals goes on with dataset-level lineage only (the exposure); the tag history shows the source DBT.
// Then (ADR 0082) the owner blocks the edge into customer_totals.full_name naming the model's job by its dbt-ol
// run name (the job is keyed by the node's unique_id, ADR 0027): the flow stops there, BLOCKED with who and why.
func TestPiiFlowFromADbtTaggedColumn(t *testing.T) {
	d := newDeclareRun(t)
	d.edit(t, "models/schema.yml", func(s string) string {
		return strings.Replace(s, "  - name: stg_customers\n    columns:\n",
			"  - name: stg_customers\n    columns:\n      - name: full_name\n        config:\n          tags: [pii]\n", 1)
	})
	d.dbt(t, "parse", "-q")
	d.declareOK(t, d.manifest(t))
	d.dbt(t, "seed", "-q")
	d.run(t, d.proj, d.env, 0, filepath.Join(d.bin, "dbt-ol"), "build")
	waitEvents(t, d.store, eventIDs(t, d.events), projectTimeout)

	data := gql(t, d.api, token, dbtFlowQ, map[string]any{"ns": d.dsNS})
	raw, _ := json.Marshal(data["piiFlow"])
	var f piiFlowResult
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, o := range f.Origins {
		for _, tg := range o.Tags {
			origins = append(origins, o.Field.Path+" "+tg.Name)
		}
	}
	wantLines(t, "the flow's origins", origins, []string{"full_name full_name:pii=true"})
	hist := gql(t, d.api, token, `query($ns: String!) { dataset(namespace: $ns, name: "warehouse.main.stg_customers") {
		fields { path tagHistory { entries { name source validTo } } } } }`, map[string]any{"ns": d.dsNS})
	if b, _ := json.Marshal(hist); !strings.Contains(string(b), `"path":"full_name","tagHistory":{"entries":[{"name":"full_name:pii=true","source":"DBT","validTo":null}]}`) {
		t.Errorf("stg_customers.full_name's tag history should hold the dbt tag in force, source DBT: %s", b)
	}
	if !f.stops()["warehouse.main.customer_totals.full_name NO_COLUMN_LINEAGE"] {
		t.Errorf("the flow should say unknown (NO_COLUMN_LINEAGE) at customer_totals.full_name: %s", raw)
	}
	reached := f.reached()
	if got := reached["warehouse.main.customer_totals.full_name"]; !strings.HasPrefix(got, "CARRIED ") {
		t.Fatalf("customer_totals.full_name should be reached carried from stg_customers.full_name: %q\n%s", got, raw)
	}
	for field, how := range reached {
		if field != "warehouse.main.customer_totals.full_name" && !strings.HasPrefix(how, "INFLUENCED ") {
			t.Errorf("%s is reached %s: only full_name derives from the tagged column\n%s", field, how, raw)
		}
	}

	block := map[string]any{"eventId": uuid.NewString(), "eventTime": time.Now().UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
		"dataset": map[string]any{"namespace": d.dsNS, "name": "warehouse.main.customer_totals", "facets": map[string]any{
			"headwater_governance_block": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://headwater.dev/facets/GovernanceBlock.json",
				"blocks": []any{map[string]any{"field": "full_name", "reason": "the mart masks names",
					"edge": map[string]any{"job": map[string]any{"namespace": d.jobNS, "name": "warehouse.main.hw_producers.customer_totals"},
						"from": map[string]any{"namespace": d.dsNS, "name": "warehouse.main.stg_customers", "field": "full_name"}}}}}}}}
	b, _ := json.Marshal(block)
	if c := send(t, d.api, token, b); c != http.StatusAccepted {
		t.Fatalf("send the block: %d", c)
	}
	want := "BLOCKED by " + subject + ": the mart masks names"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		data = gql(t, d.api, token, dbtFlowQ, map[string]any{"ns": d.dsNS})
		raw, _ = json.Marshal(data["piiFlow"])
		if strings.Contains(string(raw), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no BLOCKED stop %q within 60 s of the block (the edge through the dbt node's job):\n%s", want, raw)
		}
	}
	f = piiFlowResult{}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.reached()["warehouse.main.customer_totals.full_name"]; ok || !f.stops()["warehouse.main.stg_customers.full_name BLOCKED -> warehouse.main.customer_totals.full_name"] {
		t.Errorf("blocked: customer_totals.full_name should not be reached, the stop BLOCKED at its edge: %s", raw)
	}
}
