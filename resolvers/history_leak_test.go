package resolvers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// The leak suite's cases for the governance histories (ADR 0082): Dataset.tagHistory, Field.tagHistory and
// Dataset.blockHistory of pub.mid.

const leakHistoryQ = `query($ns: String!) { dataset(namespace: $ns, name: "pub.mid") {
  tagHistory { permissionsFiltered entries { name field class value source validFrom validTo eventId sensitive } }
  blockHistory { permissionsFiltered entries { field by reason validFrom validTo eventId
    edge { job { namespace name } from { namespace name field } } } }
  fields { path tagHistory { permissionsFiltered entries { name field } } } } }`

// buildHistories writes pub.mid's tag and block histories as projection versions 6 and 7 store them, every
// interval but the current `pii` in the past (before the fixture's fields exist, so no flow changes): a sensitive
// field tag c:pii.email=true and a plain c:owner=crm; a field block on c, an edge block into c from pub.src.c
// through pub.j1, and edge blocks naming the hidden job (from pub.src.c) and the hidden dataset H2 (through
// pub.j1). extraHidden adds one more edge block naming only hidden nodes.
func (w *world) buildHistories(extraHidden bool) {
	fx := w.fx
	t0, t1 := graph.Millis(fx.T0.Add(-2*time.Hour)), graph.Millis(fx.T0.Add(-time.Hour))
	tags := []graph.TagInterval{
		{Name: "c:owner=crm", Source: "gov", ValidFrom: t0, ValidTo: t1, EventID: "ev-owner"},
		{Name: "c:pii.email=true", Source: "gov", ValidFrom: t0, ValidTo: t1, EventID: "ev-pii-email"},
		{Name: "pii", Source: "gov", ValidFrom: 1, ValidTo: graph.OpenEnd, EventID: "ev-pii"},
	}
	edge := func(jobKey, jobName, dsName string) *graph.BlockEdge {
		return &graph.BlockEdge{JobNamespace: fx.NS, JobName: jobName, JobKey: jobKey, Namespace: fx.NS, Name: dsName, Field: "c"}
	}
	h2Name := w.datasetName(w.h2)
	hiddenJob := w.jobName(w.jHidden)
	blocks := []graph.BlockInterval{
		{Field: "c", By: "gov-admin", Reason: "masked upstream", ValidFrom: t0, ValidTo: t1, EventID: "ev-b1"},
		{Field: "c", Edge: edge(graph.JobKey(fx.NS, "pub.j1"), "pub.j1", "pub.src"), By: "gov-admin", Reason: "j1 hashes it",
			ValidFrom: t0, ValidTo: t1, EventID: "ev-b2"},
		{Field: "c", Edge: edge(w.jHidden, hiddenJob, "pub.src"), By: "gov-admin", Reason: "hidden job hashes it", ValidFrom: t0, ValidTo: t1},
		{Field: "c", Edge: edge(graph.JobKey(fx.NS, "pub.j1"), "pub.j1", h2Name), By: "gov-admin", Reason: "from a hidden source", ValidFrom: t0, ValidTo: t1},
	}
	if extraHidden {
		blocks = append(blocks, graph.BlockInterval{Field: "c", Edge: edge(w.jHidden, hiddenJob, h2Name), By: "gov-admin",
			Reason: "both hidden", ValidFrom: t0, ValidTo: t1})
	}
	tj, _ := json.Marshal(tags)
	bj, _ := json.Marshal(blocks)
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tagHistory = $th, d.blockHistory = $bh`,
		map[string]any{"k": w.mid, "th": string(tj), "bh": string(bj)})
}

// datasetName and jobName are the stored names of the world's nodes.
func (w *world) datasetName(key string) string {
	rows, err := w.fx.Store.ReadRecords(w.t.Context(), `MATCH (d:Dataset {key: $k}) RETURN d.name AS n`, map[string]any{"k": key})
	if err != nil || len(rows) != 1 {
		w.t.Fatalf("dataset %s: %v", key, err)
	}
	return rows[0]["n"].(string)
}

func (w *world) jobName(key string) string {
	rows, err := w.fx.Store.ReadRecords(w.t.Context(), `MATCH (j:Job {key: $k}) RETURN j.name AS n`, map[string]any{"k": key})
	if err != nil || len(rows) != 1 {
		w.t.Fatalf("job %s: %v", key, err)
	}
	return rows[0]["n"].(string)
}

type historyAnswer struct {
	Data struct {
		Dataset struct {
			TagHistory struct {
				PermissionsFiltered bool
				Entries             []struct {
					Name      string
					Field     *string
					Sensitive bool
				}
			}
			BlockHistory struct {
				PermissionsFiltered bool
				Entries             []struct {
					Field, By, Reason string
					Edge              *struct {
						Job  struct{ Namespace, Name string }
						From struct{ Namespace, Name, Field string }
					}
				}
			}
			Fields []struct {
				Path       string
				TagHistory struct {
					PermissionsFiltered bool
					Entries             []struct{ Name string }
				}
			}
		}
	}
}

// checkHistories: the admin gets every entry (the hidden edge blocks included, so the suite is not vacuous);
// narrow (no VIEW_SENSITIVE) no sensitive tag, neither on the dataset nor on its field, and permissionsFiltered;
// narrow2 (VIEW_SENSITIVE on pub) the sensitive tags; both narrow principals the two blocks naming only visible
// nodes, permissionsFiltered, never the edge blocks through the hidden job or from the hidden dataset.
func (w *world) checkHistories() {
	w.t.Helper()
	get := func(p string) (historyAnswer, string) {
		body := w.post(p, leakHistoryQ, map[string]any{"ns": w.fx.NS})
		var a historyAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			w.t.Fatalf("%s: %v %s", p, err, body)
		}
		return a, string(body)
	}
	tagNames := func(a historyAnswer) string {
		var out []string
		for _, e := range a.Data.Dataset.TagHistory.Entries {
			out = append(out, fmt.Sprintf("%s/%v", e.Name, e.Sensitive))
		}
		for _, f := range a.Data.Dataset.Fields {
			for _, e := range f.TagHistory.Entries {
				out = append(out, f.Path+":"+e.Name)
			}
		}
		return fmt.Sprint(out)
	}
	blockNames := func(a historyAnswer) []string {
		var out []string
		for _, e := range a.Data.Dataset.BlockHistory.Entries {
			s := e.Field + " " + e.By + " " + e.Reason
			if e.Edge != nil {
				s += " via " + e.Edge.Job.Name + " from " + e.Edge.From.Name + "." + e.Edge.From.Field
			}
			out = append(out, s)
		}
		return out
	}
	admin, raw := get(w.admin)
	if got := tagNames(admin); got != "[c:owner=crm/false c:pii.email=true/true pii/true c:c:owner=crm c:c:pii.email=true c:pii]" {
		w.t.Errorf("admin's tag histories: %s\n%s", got, raw)
	}
	if len(blockNames(admin)) != 4 || len(w.leaks(raw)) == 0 || admin.Data.Dataset.TagHistory.PermissionsFiltered {
		w.t.Errorf("admin's block history should hold the 4 blocks, hidden names included: %v\n%s", blockNames(admin), raw)
	}
	wantBlocks := []string{"c gov-admin masked upstream", "c gov-admin j1 hashes it via pub.j1 from pub.src.c"}
	for _, p := range []string{w.narrow, w.narrow2} {
		a, raw := get(p)
		want := "[c:owner=crm/false c:c:owner=crm]"
		if p == w.narrow2 {
			want = "[c:owner=crm/false c:pii.email=true/true pii/true c:c:owner=crm c:c:pii.email=true c:pii]"
		}
		if got := tagNames(a); got != want {
			w.t.Errorf("%s's tag histories: %s, want %s\n%s", p, got, want, raw)
		}
		filtered := p == w.narrow
		if a.Data.Dataset.TagHistory.PermissionsFiltered != filtered || a.Data.Dataset.Fields[0].TagHistory.PermissionsFiltered != filtered {
			w.t.Errorf("%s: tag histories' permissionsFiltered should be %v\n%s", p, filtered, raw)
		}
		if got := blockNames(a); !slices.Equal(got, wantBlocks) || !a.Data.Dataset.BlockHistory.PermissionsFiltered {
			w.t.Errorf("%s's block history: %v, want %v (permissionsFiltered)\n%s", p, got, wantBlocks, raw)
		}
	}
}

// The leak suite's case for Job.tagHistory (ADR 0090): pub.j1's history (a sensitive pii.email entry and a plain
// team=crm), the hidden job's (a tag naming a secret), asked of pub.j1 by name and of every job on pub.mid's
// lineage edges (the hidden job's edge among them).
const leakJobTagHistoryQ = `query($ns: String!) {
  job(namespace: $ns, name: "pub.j1") { tagHistory { permissionsFiltered entries { name class value validFrom validTo eventId by sensitive } } }
  lineage(start: {dataset: {namespace: $ns, name: "pub.mid"}}, direction: BOTH, depth: 3) {
    edges { job { name tags { name } tagHistory { permissionsFiltered entries { name by sensitive } } } } } }`

// buildJobTagHistories writes pub.j1's and the hidden job's tag histories as projection version 9 stores them.
func (w *world) buildJobTagHistories() {
	t0, t1 := graph.Millis(w.fx.T0.Add(-2*time.Hour)), graph.Millis(w.fx.T0.Add(-time.Hour))
	w.setJobTagHistory(graph.JobKey(w.fx.NS, "pub.j1"), []graph.TagInterval{
		{Name: "pii.email", ValidFrom: t0, ValidTo: graph.OpenEnd, EventID: "ev-job-pii", By: "job-pii-sender"},
		{Name: "team=crm", ValidFrom: t0, ValidTo: t1, EventID: "ev-job-team", By: "dbt"},
	}, `["pii.email"]`)
	secret := w.hidden("jobtag")
	w.setJobTagHistory(w.jHidden, []graph.TagInterval{{Name: secret, ValidFrom: t0, ValidTo: graph.OpenEnd, EventID: "ev-h", By: "dbt"}},
		`["`+secret+`"]`)
}

// checkJobTagHistories: narrow (no VIEW_SENSITIVE) gets pub.j1's team=crm entry only, permissionsFiltered, never
// the pii entry's sender, nor pii.email in the job's tags; narrow2 both entries.
func (w *world) checkJobTagHistories() {
	w.t.Helper()
	for _, p := range []string{w.narrow, w.narrow2} {
		body := string(w.post(p, leakJobTagHistoryQ, map[string]any{"ns": w.fx.NS}))
		hasPii := strings.Contains(body, "pii.email") || strings.Contains(body, "job-pii-sender")
		if p == w.narrow && (hasPii || !strings.Contains(body, `"job":{"tagHistory":{"permissionsFiltered":true,"entries":[{"name":"team=crm"`)) {
			w.t.Errorf("narrow's job tag history should hold team=crm only, permissionsFiltered:\n%s", body)
		}
		if p == w.narrow2 && (!strings.Contains(body, `"job":{"tagHistory":{"permissionsFiltered":false,"entries":[{"name":"pii.email"`) ||
			!strings.Contains(body, "job-pii-sender")) {
			w.t.Errorf("narrow2's job tag history should hold the pii.email entry and its sender:\n%s", body)
		}
	}
}
