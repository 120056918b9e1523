package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
)

// agreementLines renders a report's declared-versus-observed lists as "KIND node DIRECTION dataset" and
// "TEST name on dataset", the project's prefixes removed.
func agreementLines(a *api.DeclaredVersusObserved) []string {
	var out []string
	trim := func(s string) string {
		return strings.TrimPrefix(strings.TrimPrefix(s, "warehouse.main."), "model.hw_producers.")
	}
	for _, l := range [][]*api.EdgeDisagreement{a.DeclaredNotObserved, a.ObservedNotDeclared} {
		for _, e := range l {
			out = append(out, fmt.Sprintf("%s %s %s %s", e.Kind, trim(e.UniqueID), e.Direction, trim(e.Dataset)))
		}
	}
	for _, t := range a.TestsNotObserved {
		out = append(out, fmt.Sprintf("TEST %s on %s", t.Name, trim(t.Dataset)))
	}
	return out
}

// Issue 20, declared versus observed, on the real dbt project: its manifest imported, `dbt-ol build` run (which
// reports the models' runs and their tests' assertions); the same manifest as the candidate agrees with the runs
// on every edge and test it declares. Then the project is edited without building: stg_customers declares a
// dependency its SQL does not read (`-- depends_on: {{ ref('stg_orders') }}`), customer_totals reads
// stg_customers by a hard-coded relation instead of ref() (the runs observed the edge, the manifest no longer
// declares it), and customer_totals gets a test that never ran; that manifest imported. The report says all
// three (GraphQL and markdown alike); a narrow principal's report names nothing hidden from it.
func TestDeclareDbtDeclaredVersusObserved(t *testing.T) {
	d := newDeclareRun(t)
	d.dbt(t, "parse", "-q")
	first := d.manifest(t)
	d.declareOK(t, first)
	d.dbt(t, "seed", "-q")
	d.run(t, d.proj, d.env, 0, filepath.Join(d.bin, "dbt-ol"), "build")
	waitEvents(t, d.store, eventIDs(t, d.events), projectTimeout)

	code, raw, r := d.impact(t, token, first)
	if code != http.StatusOK {
		t.Fatalf("impact: %d %s", code, raw)
	}
	a := r.DeclaredVersusObserved
	// 3 models: their outputs and 4 inputs (raw_orders, raw_customers, stg_orders, stg_customers); the 4 generic
	// tests of stg_orders and stg_customers, reported by dbt-ol build as assertions of the models' test jobs
	if got := agreementLines(a); len(got) != 0 || a.EdgesChecked != 7 || a.TestsChecked != 4 || a.PermissionsFiltered {
		t.Fatalf("the imported manifest against its own build: %v (edges %d, tests %d, filtered %v): %s", got, a.EdgesChecked, a.TestsChecked, a.PermissionsFiltered, raw)
	}

	d.edit(t, "models/stg_customers.sql", func(s string) string { return "-- depends_on: {{ ref('stg_orders') }}\n" + s })
	d.edit(t, "models/customer_totals.sql", func(s string) string {
		return strings.Replace(s, "{{ ref('stg_customers') }}", "main.stg_customers", 1)
	})
	d.edit(t, "models/schema.yml", func(s string) string {
		return strings.Replace(s, "      - name: total_amount\n        description: Sum of the customer's orders.\n",
			"      - name: total_amount\n        description: Sum of the customer's orders.\n        data_tests: [not_null]\n", 1)
	})
	time.Sleep(time.Second) // a later generated_at than the first manifest's, whatever the clock's resolution
	d.dbt(t, "parse", "-q")
	second := d.manifest(t)
	d.declareOK(t, second)

	code, raw, r = d.impact(t, token, second)
	if code != http.StatusOK {
		t.Fatalf("impact: %d %s", code, raw)
	}
	a = r.DeclaredVersusObserved
	wantLines(t, "declared versus observed", agreementLines(a), []string{
		"NEVER_OBSERVED stg_customers INPUT stg_orders",
		"NOT_DECLARED customer_totals INPUT stg_customers",
		"TEST not_null_customer_totals_total_amount on customer_totals",
	})
	// (the job's current name is the declared one: the latest event about it is the second declaration, ADR 0044)
	if n := a.DeclaredNotObserved[0]; n.Job != "warehouse.main.hw_producers.stg_customers" || n.Namespace != d.dsNS ||
		!strings.Contains(n.Message, "declared, never observed: no run of warehouse.main.hw_producers.stg_customers read warehouse.main.stg_orders") {
		t.Fatalf("the never-observed edge: %+v", n)
	}
	if o := a.ObservedNotDeclared[0]; o.DaysAgo == nil || *o.DaysAgo != 0 || o.LastObservedAt == nil {
		t.Fatalf("the undeclared edge's evidence: %+v", o)
	}
	if len(r.Changes) != 0 {
		t.Fatalf("the imported manifest as the candidate has changes: %s", raw)
	}

	// the markdown report and GraphQL say the same
	md := fetchMarkdown(t, d, token, second)
	t.Logf("the markdown report:\n%s", md)
	for _, want := range []string{"### Declared versus observed",
		"| declared, never observed | `model.hw_producers.stg_customers` | reads `warehouse.main.stg_orders` |",
		"| observed, not declared | `model.hw_producers.customer_totals` | reads `warehouse.main.stg_customers` | observed 0 days ago, not declared",
		"- `not_null_customer_totals_total_amount` on `warehouse.main.customer_totals` (`model.hw_producers.customer_totals`, column `total_amount`)"} {
		if !strings.Contains(md, want) {
			t.Fatalf("the markdown lacks %q", want)
		}
	}
	const q = `query($c: ID!) { releaseImpact(candidate: $c) { declaredVersusObserved {
		declaredNotObserved { kind uniqueId dataset direction } observedNotDeclared { kind dataset daysAgo }
		testsNotObserved { name model column } edgesChecked testsChecked partial permissionsFiltered } } }`
	g := gql(t, d.api, token, q, map[string]any{"c": r.Candidate})["releaseImpact"].(map[string]any)["declaredVersusObserved"].(map[string]any)
	if fmt.Sprint(g["testsNotObserved"]) != "[map[column:total_amount model:model.hw_producers.customer_totals name:not_null_customer_totals_total_amount]]" ||
		fmt.Sprint(g["observedNotDeclared"]) != "[map[dataset:warehouse.main.stg_customers daysAgo:0 kind:NOT_DECLARED]]" {
		t.Fatalf("releaseImpact.declaredVersusObserved: %v", g)
	}

	// a narrow principal (stg_customers hidden): the never-observed edge of stg_customers' job and the undeclared
	// edge from stg_customers are named and counted nowhere; the test it may see is still said
	narrowTok := d.narrowReader(t, token, "agree")
	deadline := time.Now().Add(30 * time.Second)
	for {
		// (the diff shows stg_customers as added: the candidate, the caller's own upload, has it and the
		// current side hides it, ADR 0056; the declared-versus-observed part is what is checked here)
		code, _, nr := d.impact(t, narrowTok, second)
		part, _ := json.Marshal(nr.DeclaredVersusObserved)
		if code == http.StatusOK && nr.DeclaredVersusObserved != nil && !strings.Contains(string(part), "stg_customers") {
			got := agreementLines(nr.DeclaredVersusObserved)
			wantLines(t, "the narrow declared versus observed", got, []string{"TEST not_null_customer_totals_total_amount on customer_totals"})
			if !nr.DeclaredVersusObserved.PermissionsFiltered || nr.DeclaredVersusObserved.EdgesChecked >= a.EdgesChecked {
				t.Fatalf("the narrow answer: filtered %v, %d edges checked (the full answer %d)", nr.DeclaredVersusObserved.PermissionsFiltered,
					nr.DeclaredVersusObserved.EdgesChecked, a.EdgesChecked)
			}
			md := fetchMarkdown(t, d, narrowTok, second)
			if _, section, _ := strings.Cut(md, "### Declared versus observed"); section == "" || strings.Contains(section, "stg_customers") {
				t.Fatalf("the narrow markdown's declared-versus-observed section names a hidden node (or is missing):\n%s", md)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the narrow principal's declared versus observed names what it may not see (or grants never took effect): %d %s", code, part)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
