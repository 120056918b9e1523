package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20, "re-importing a manifest replaces that project's declarations (withdrawn ones close)": a model removed
// from the real dbt project altogether (customer_totals, and the exposure reading it) is withdrawn by the next
// import: the answer names it, its declared edges close (lineage now shows none upstream of its relation), and a
// re-import of the same manifest withdraws nothing more (the same events: duplicates).
func TestDeclareDbtRemovedModelCloses(t *testing.T) {
	d := newDeclareRun(t)
	d.dbt(t, "parse", "-q")
	d.declareOK(t, d.manifest(t))
	before, _ := d.edges(t, token, "warehouse.main.customer_totals", "UPSTREAM")
	if len(before) != 4 {
		t.Fatalf("declared upstream of customer_totals before: %v", before)
	}

	for _, f := range []string{"models/customer_totals.sql", "models/exposures.yml"} {
		if err := os.Remove(filepath.Join(d.proj, f)); err != nil {
			t.Fatal(err)
		}
	}
	d.edit(t, "models/schema.yml", func(s string) string {
		kept, _, found := strings.Cut(s, "  - name: customer_totals\n")
		if !found {
			t.Fatalf("schema.yml has no customer_totals: %s", s)
		}
		return kept
	})
	d.dbt(t, "parse", "-q")
	second := d.manifest(t)
	code, ans := d.declare(t, token, second)
	if code != http.StatusOK || ans["accepted"] != true {
		t.Fatalf("declare: %d %v", code, ans)
	}
	if got := fmt.Sprint(ans["summary"].(map[string]any)["withdrawn"]); got != "[model.hw_producers.customer_totals]" {
		t.Fatalf("withdrawn: %s (%v)", got, ans)
	}
	var ids []string
	for _, x := range ans["eventIds"].([]any) {
		ids = append(ids, x.(string))
	}
	if len(ids) != 5 { // 2 models, 2 seeds, 1 withdrawal
		t.Fatalf("%d events: %v", len(ids), ans)
	}
	waitEvents(t, d.store, ids, projectTimeout)
	if after, raw := d.edges(t, token, "warehouse.main.customer_totals", "UPSTREAM"); len(after) != 0 {
		t.Fatalf("the removed model's declared edges are still open: %v %s", after, raw)
	}
	// still declared: what the manifest keeps
	if kept, _ := d.edges(t, token, "warehouse.main.stg_orders", "UPSTREAM"); len(kept) != 1 {
		t.Fatalf("stg_orders' declared input: %v", kept)
	}
	code, again := d.declare(t, token, second)
	if code != http.StatusOK || again["summary"].(map[string]any)["withdrawn"] != nil {
		t.Fatalf("the same manifest again: %d %v", code, again)
	}
	if got, want := fmt.Sprint(again["eventIds"]), fmt.Sprint(ids[:4]); got != want {
		t.Fatalf("re-import's events %s, want the manifest's own %s (duplicates)", got, want)
	}
}
