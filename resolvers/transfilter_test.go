package resolvers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
)

const transFilterQ = `query($ns: String!, $tf: TransformationFilter, $gran: Granularity) {
  lineage(start: {field: {namespace: $ns, name: "pub.gsrc", field: "email"}}, direction: DOWNSTREAM, depth: 3,
          granularity: $gran, transformations: $tf) {
    nodes { ... on Field { path } } edges { transformations { type subtype masking } } } }`

// TestLineageTransformationFilter: field-level lineage from pub.gsrc.email (governanceShape) crosses only the
// column edges the filter keeps, while expanding (a field reached only through a left-out edge is not reached):
// only DIRECT leaves out the join key k; stopAtMasking leaves out e_hash and h behind it; excluding INDIRECT/JOIN
// is the same as only DIRECT here; only DIRECT/identity (any case) keeps e_id alone (x is fed from e_id by an edge
// that closed, and from e_t which identity does not reach). With the result cache on, each filter gets its own
// answer. A filter at DATASET granularity and an empty subtype are BAD_REQUEST naming the argument.
func TestLineageTransformationFilter(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit, cache: true})
	governanceShape(w)
	paths := func(tf map[string]any) string {
		t.Helper()
		vars := map[string]any{"ns": w.fx.NS, "gran": "FIELD"}
		if tf != nil {
			vars["tf"] = tf
		}
		body := w.post(w.admin, transFilterQ, vars)
		var a struct {
			Data struct {
				Lineage struct {
					Nodes []struct{ Path string }
				}
			}
			Errors []gqlError
		}
		if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) > 0 {
			t.Fatalf("lineage %v: %v %s", tf, err, body)
		}
		var out []string
		for _, n := range a.Data.Lineage.Nodes {
			out = append(out, n.Path)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	direct := []any{map[string]any{"type": "DIRECT"}}
	for _, c := range []struct {
		name string
		tf   map[string]any
		want string
	}{
		{"none", nil, "e_hash e_id e_t email h k n x"},
		{"only DIRECT", map[string]any{"only": direct}, "e_hash e_id e_t email h n x"},
		{"stopAtMasking", map[string]any{"stopAtMasking": true}, "e_id e_t email k n x"},
		{"only DIRECT, stopAtMasking", map[string]any{"only": direct, "stopAtMasking": true}, "e_id e_t email n x"},
		{"exclude INDIRECT/JOIN", map[string]any{"exclude": []any{map[string]any{"type": "INDIRECT", "subtype": "JOIN"}}}, "e_hash e_id e_t email h n x"},
		{"exclude INDIRECT/FILTER", map[string]any{"exclude": []any{map[string]any{"type": "INDIRECT", "subtype": "FILTER"}}}, "e_hash e_id e_t email h k n x"},
		{"only DIRECT/identity", map[string]any{"only": []any{map[string]any{"type": "DIRECT", "subtype": "identity"}}}, "e_id email"},
		{"none again (cached)", nil, "e_hash e_id e_t email h k n x"},
	} {
		if got := paths(c.tf); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	for arg, vars := range map[string]map[string]any{
		"transformations:":                    {"ns": w.fx.NS, "gran": "DATASET", "tf": map[string]any{"only": direct}},
		"transformations.exclude[0].subtype:": {"ns": w.fx.NS, "gran": "FIELD", "tf": map[string]any{"exclude": []any{map[string]any{"type": "INDIRECT", "subtype": " "}}}},
	} {
		if arg == "transformations:" { // a dataset granularity needs a dataset start
			body := string(w.post(w.admin, strings.Replace(transFilterQ, `{field: {namespace: $ns, name: "pub.gsrc", field: "email"}}`,
				`{dataset: {namespace: $ns, name: "pub.gsrc"}}`, 1), vars))
			if !strings.Contains(body, `"BAD_REQUEST"`) || !strings.Contains(body, arg) {
				t.Errorf("%s: want BAD_REQUEST naming it: %s", arg, body)
			}
			continue
		}
		if body := string(w.post(w.admin, transFilterQ, vars)); !strings.Contains(body, `"BAD_REQUEST"`) || !strings.Contains(body, arg) {
			t.Errorf("%s: want BAD_REQUEST naming it: %s", arg, body)
		}
	}
}
