package resolvers

import (
	"encoding/json"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

const withheldQ = `query($ns: String!, $job: String!) { job(namespace: $ns, name: $job) {
  version { sql sourceCodeLocation sqlWithheld }
  runs { nodes { runId errorMessage errorMessageWithheld } } } }`

type withheldAnswer struct {
	Data struct {
		Job struct {
			Version struct {
				SQL         *string `json:"sql"`
				SQLWithheld bool    `json:"sqlWithheld"`
			}
			Runs struct {
				Nodes []struct {
					RunID                string  `json:"runId"`
					ErrorMessage         *string `json:"errorMessage"`
					ErrorMessageWithheld bool    `json:"errorMessageWithheld"`
				}
			}
		}
	}
}

// TestFreeTextWithheld (issue 13 item 14): a job's SQL, and its runs' error messages, are free text that names
// its datasets. They are shown only to a caller with VIEW_SQL on the job who may describe every dataset the job
// ever read or wrote, and otherwise withheld with sqlWithheld / errorMessageWithheld saying so. pub.j2 wrote the
// hidden H1; one of its runs failed before it reported any output, naming H1 in its error message.
func TestFreeTextWithheld(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	fx := w.fx
	h1 := w.secrets[0]
	j1, j2 := graph.JobKey(fx.NS, "pub.j1"), graph.JobKey(fx.NS, "pub.j2")
	version := func(job, sql string) {
		fx.Exec(`MATCH (j:Job {key: $j}) CREATE (j)-[:HAS_VERSION]->(:JobVersion {key: $k, jobKey: $j,
  definitionHash: $k, sql: $sql, validFrom: 0, validTo: $open})`,
			map[string]any{"j": job, "k": job + "-v1", "sql": sql, "open": graph.OpenEnd})
	}
	version(j1, "INSERT INTO pub.mid SELECT * FROM pub.src")
	version(j2, "INSERT INTO "+h1+" SELECT * FROM pub.mid")
	early := "00000000-0000-4000-8000-" + testenv.Token(6)
	fx.Run(early, j2, []string{w.mid}, nil, graph.PubPublished, "START", "FAIL")
	fx.Exec(`MATCH (r:Run {key: $id}) SET r.errorMessage = $msg`, map[string]any{"id": early, "msg": "cannot write " + h1})
	clean := "00000000-0000-4000-8000-" + testenv.Token(6)
	fx.Run(clean, j1, []string{w.src}, []string{w.mid}, graph.PubPublished, "START", "FAIL")
	fx.Exec(`MATCH (r:Run {key: $id}) SET r.errorMessage = 'disk full'`, map[string]any{"id": clean})

	ask := func(p, job string) withheldAnswer {
		t.Helper()
		body := w.post(p, withheldQ, map[string]any{"ns": fx.NS, "job": job})
		if p != w.admin {
			w.noLeak("free text as "+p, body)
		}
		var a withheldAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return a
	}
	messages := func(a withheldAnswer) (shown, withheld int) {
		for _, r := range a.Data.Job.Runs.Nodes {
			if r.ErrorMessage != nil {
				shown++
			}
			if r.ErrorMessageWithheld {
				withheld++
				if r.ErrorMessage != nil {
					t.Errorf("run %s: withheld yet shown", r.RunID)
				}
			}
		}
		return shown, withheld
	}
	if a := ask(w.narrow, "pub.j2"); a.Data.Job.Version.SQL != nil || !a.Data.Job.Version.SQLWithheld {
		t.Errorf("narrow, pub.j2 (wrote a hidden dataset): sql %v withheld %v, want null and true", a.Data.Job.Version.SQL, a.Data.Job.Version.SQLWithheld)
	} else if shown, withheld := messages(a); shown != 0 || withheld != 2 {
		t.Errorf("narrow, pub.j2 runs: %d messages shown, %d withheld; want 0 and 2: %+v", shown, withheld, a.Data.Job.Runs)
	}
	if a := ask(w.narrow, "pub.j1"); a.Data.Job.Version.SQL == nil || a.Data.Job.Version.SQLWithheld {
		t.Errorf("narrow, pub.j1 (all visible): sql %v withheld %v, want the SQL", a.Data.Job.Version.SQL, a.Data.Job.Version.SQLWithheld)
	} else if shown, withheld := messages(a); shown != 1 || withheld != 0 {
		t.Errorf("narrow, pub.j1 runs: %d shown, %d withheld; want 1 and 0", shown, withheld)
	}
	if a := ask(w.narrow2, "pub.j1"); a.Data.Job.Version.SQL != nil || !a.Data.Job.Version.SQLWithheld {
		t.Errorf("narrow2 (no VIEW_SQL), pub.j1: sql %v withheld %v, want null and true", a.Data.Job.Version.SQL, a.Data.Job.Version.SQLWithheld)
	}
	if a := ask(w.admin, "pub.j2"); a.Data.Job.Version.SQL == nil || a.Data.Job.Version.SQLWithheld {
		t.Errorf("admin, pub.j2: sql %v withheld %v, want the SQL", a.Data.Job.Version.SQL, a.Data.Job.Version.SQLWithheld)
	}
}
