package resolvers

import (
	"slices"
	"sort"
)

const lineageQuery = `query($start: NodeRef!, $dir: Direction!, $depth: Int!, $gran: Granularity, $asOf: Time,
  $ev: [EvidenceKind!], $att: Boolean, $max: Int, $after: String) {
  lineage(start: $start, direction: $dir, depth: $depth, granularity: $gran, asOf: $asOf, evidence: $ev,
          includeAttempted: $att, maxNodes: $max, after: $after) {
    nodes { id __typename ... on Dataset { namespace name currentName } ... on Field { path dataset { name } } ... on Job { name } }
    edges { id from to job { name } validFrom validTo stale lastObservedAt
            intervals { validFrom validTo publication }
            evidence { kind runState publication observedAt }
            transformations { type subtype masking description } }
    truncated cursor permissionsFiltered asOf
    fanOutMarkers { node direction shown }
    gaps { kind message nodes edges stopReasons }
  }
}`

type lgNode struct {
	ID          string `json:"id"`
	Typename    string `json:"__typename"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	CurrentName string `json:"currentName"`
	Path        string `json:"path"`
	Dataset     *struct {
		Name string `json:"name"`
	} `json:"dataset"`
}

type lgEdge struct {
	ID   string `json:"id"`
	From string `json:"from"`
	To   string `json:"to"`
	Job  *struct {
		Name string `json:"name"`
	} `json:"job"`
	ValidFrom string  `json:"validFrom"`
	ValidTo   *string `json:"validTo"`
	Stale     bool    `json:"stale"`
	Intervals []struct {
		ValidFrom   string  `json:"validFrom"`
		ValidTo     *string `json:"validTo"`
		Publication string  `json:"publication"`
	} `json:"intervals"`
	Evidence []struct {
		Kind        string `json:"kind"`
		RunState    string `json:"runState"`
		Publication string `json:"publication"`
	} `json:"evidence"`
	Transformations []struct {
		Type        string `json:"type"`
		Subtype     string `json:"subtype"`
		Masking     bool   `json:"masking"`
		Description string `json:"description"`
	} `json:"transformations"`
}

type lgGap struct {
	Kind        string   `json:"kind"`
	Message     string   `json:"message"`
	Nodes       []string `json:"nodes"`
	Edges       []string `json:"edges"`
	StopReasons []string `json:"stopReasons"` // null (nil) on every gap but TRUNCATED
}

type lineageGraph struct {
	Nodes               []lgNode `json:"nodes"`
	Edges               []lgEdge `json:"edges"`
	Truncated           bool     `json:"truncated"`
	Cursor              *string  `json:"cursor"`
	PermissionsFiltered bool     `json:"permissionsFiltered"`
	FanOutMarkers       []struct {
		Node      string `json:"node"`
		Direction string `json:"direction"`
		Shown     int    `json:"shown"`
	} `json:"fanOutMarkers"`
	Gaps []lgGap `json:"gaps"`
}

// names returns the sorted names (datasets, jobs) or paths (fields) of the nodes.
func (g lineageGraph) names() []string {
	var out []string
	for _, n := range g.Nodes {
		if n.Typename == "Field" {
			out = append(out, n.Dataset.Name+"."+n.Path)
		} else {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// edgeNames returns "from->to" by node name, sorted; nodes are looked up in all pages seen so far.
func edgeNames(edges []lgEdge, byID map[string]string) []string {
	var out []string
	for _, e := range edges {
		out = append(out, byID[e.From]+"->"+byID[e.To])
	}
	sort.Strings(out)
	return out
}

func (g lineageGraph) nameByID() map[string]string {
	m := map[string]string{}
	for _, n := range g.Nodes {
		if n.Typename == "Field" {
			m[n.ID] = n.Dataset.Name + "." + n.Path
		} else {
			m[n.ID] = n.Name
		}
	}
	return m
}

func (g lineageGraph) gapsOf(kind string) []lgGap {
	var out []lgGap
	for _, x := range g.Gaps {
		if x.Kind == kind {
			out = append(out, x)
		}
	}
	return out
}

func (g lineageGraph) hasGap(kind string) bool { return len(g.gapsOf(kind)) > 0 }

func eq(a, b []string) bool { return slices.Equal(a, b) }

type lineageData struct {
	Lineage lineageGraph `json:"lineage"`
}

func dsStart(ns, name string) map[string]any {
	return map[string]any{"dataset": map[string]any{"namespace": ns, "name": name}}
}

func fieldStart(ns, name, field string) map[string]any {
	return map[string]any{"field": map[string]any{"namespace": ns, "name": name, "field": field}}
}

// lineage runs the lineage query with the given variables (direction, depth defaulted) and returns the graph.
func (h *harness) lineage(vars map[string]any) lineageGraph {
	h.t.Helper()
	if _, ok := vars["dir"]; !ok {
		vars["dir"] = "BOTH"
	}
	if _, ok := vars["depth"]; !ok {
		vars["depth"] = 3
	}
	var d lineageData
	h.mustQuery(lineageQuery, vars, &d)
	return d.Lineage
}
