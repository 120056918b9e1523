package flowexport

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
)

// Header is the CSV export's header, fixed (docs/governance.md, "Exporting a flow"). One row per origin (kind
// ORIGIN), reached field (REACHED), stop (STOP) and gap (GAP); a column that does not apply to the row's kind is
// empty. Paths are the steps from the origin joined by " > ": rules, jobs (namespace/name, empty for a job you may
// not describe) and edge ids, one per step in the same order.
var Header = []string{"kind", "namespace", "dataset", "field", "tags", "effect", "distance",
	"origin_namespace", "origin_dataset", "origin_field", "path_rules", "path_jobs", "path_edges",
	"reason", "next_namespace", "next_dataset", "next_field", "message", "tag", "as_of", "depth", "truncated"}

// export is a flow with names spelled out (the JSON export; the CSV is its rows).
type export struct {
	Tag                 string    `json:"tag"`
	AsOf                time.Time `json:"asOf"`
	Depth               int       `json:"depth"`
	Truncated           bool      `json:"truncated"`
	PermissionsFiltered bool      `json:"permissionsFiltered"`
	Origins             []origin  `json:"origins"`
	Reached             []reached `json:"reached"`
	Stops               []stop    `json:"stops"`
	Gaps                []gap     `json:"gaps"`
}

type fieldName struct {
	Namespace string `json:"namespace"`
	Dataset   string `json:"dataset"`
	Field     string `json:"field"`
}

type origin struct {
	fieldName
	Tags []string `json:"tags"`
}

type step struct {
	Rule            string               `json:"rule"`
	Explanation     string               `json:"explanation"`
	Edge            string               `json:"edge"`
	Job             *jobName             `json:"job"`
	Transformations []api.Transformation `json:"transformations"`
}

type jobName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type reached struct {
	fieldName
	Effect   string    `json:"effect"`
	Distance int       `json:"distance"`
	Origin   fieldName `json:"origin"`
	Path     []step    `json:"path"`
}

type stop struct {
	fieldName
	Reason  string     `json:"reason"`
	Edge    string     `json:"edge,omitempty"`
	Next    *fieldName `json:"next,omitempty"`
	Message string     `json:"message"`
}

type gap struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func exportOf(f *api.PiiFlow, ds map[string]*api.Dataset, js map[string]*api.Job) export {
	name := func(x *api.Field) fieldName {
		n := fieldName{Field: x.Path}
		if d := ds[x.DatasetKey]; d != nil {
			n.Namespace, n.Dataset = d.Namespace, d.Name
		}
		return n
	}
	x := export{Tag: f.Tag, AsOf: f.AsOf, Depth: f.Depth, Truncated: f.Truncated, PermissionsFiltered: f.PermissionsFiltered,
		Origins: []origin{}, Reached: []reached{}, Stops: []stop{}, Gaps: []gap{}}
	for _, o := range f.Origins {
		tags := make([]string, len(o.Tags))
		for i, t := range o.Tags {
			tags[i] = t.Name
		}
		x.Origins = append(x.Origins, origin{fieldName: name(o.Field), Tags: tags})
	}
	for _, r := range f.Reached {
		rr := reached{fieldName: name(r.Field), Effect: string(r.Effect), Distance: r.Distance, Origin: name(r.Origin), Path: []step{}}
		for _, s := range r.Path {
			st := step{Rule: string(s.Rule), Explanation: s.Explanation, Edge: s.Edge.ID, Transformations: s.Edge.Transformations}
			if j := js[s.Edge.JobKey]; j != nil {
				st.Job = &jobName{Namespace: j.Namespace, Name: j.Name}
			}
			if st.Transformations == nil {
				st.Transformations = []api.Transformation{}
			}
			rr.Path = append(rr.Path, st)
		}
		x.Reached = append(x.Reached, rr)
	}
	for _, s := range f.Stops {
		st := stop{fieldName: name(s.Field), Reason: string(s.Reason), Message: s.Message}
		if s.Edge != nil {
			st.Edge = s.Edge.ID
		}
		if s.Next != nil {
			n := name(s.Next)
			st.Next = &n
		}
		x.Stops = append(x.Stops, st)
	}
	for _, g := range f.Gaps {
		x.Gaps = append(x.Gaps, gap{Kind: string(g.Kind), Message: g.Message})
	}
	return x
}

// rows are the CSV rows of an export, in Header's columns.
func (x export) rows() [][]string {
	common := func(row []string) []string {
		return append(row, x.Tag, x.AsOf.UTC().Format(time.RFC3339Nano), strconv.Itoa(x.Depth), strconv.FormatBool(x.Truncated))
	}
	var out [][]string
	for _, o := range x.Origins {
		out = append(out, common([]string{"ORIGIN", o.Namespace, o.Dataset, o.Field, strings.Join(o.Tags, " "),
			"", "", "", "", "", "", "", "", "", "", "", "", ""}))
	}
	for _, r := range x.Reached {
		rules, jobs, edges := make([]string, len(r.Path)), make([]string, len(r.Path)), make([]string, len(r.Path))
		for i, s := range r.Path {
			rules[i], edges[i] = s.Rule, s.Edge
			if s.Job != nil {
				jobs[i] = s.Job.Namespace + "/" + s.Job.Name
			}
		}
		out = append(out, common([]string{"REACHED", r.Namespace, r.Dataset, r.Field, "", r.Effect, strconv.Itoa(r.Distance),
			r.Origin.Namespace, r.Origin.Dataset, r.Origin.Field, strings.Join(rules, " > "), strings.Join(jobs, " > "),
			strings.Join(edges, " > "), "", "", "", "", ""}))
	}
	for _, s := range x.Stops {
		var next fieldName
		if s.Next != nil {
			next = *s.Next
		}
		out = append(out, common([]string{"STOP", s.Namespace, s.Dataset, s.Field, "", "", "", "", "", "", "", "", s.Edge,
			s.Reason, next.Namespace, next.Dataset, next.Field, s.Message}))
	}
	for _, g := range x.Gaps {
		out = append(out, common([]string{"GAP", "", "", "", "", "", "", "", "", "", "", "", "", g.Kind, "", "", "", g.Message}))
	}
	return out
}

func writeCSV(w io.Writer, x export) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	for _, row := range x.rows() {
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
