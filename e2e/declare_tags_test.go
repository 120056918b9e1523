package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
