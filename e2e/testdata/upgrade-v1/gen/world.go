package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// world is the fixture's events: the demo's seven (namespaces moved under the fixture's prefix), a rename with
// schema history, a publication gate on a DatasetEvent, a child run sent before its parent, and the two squats
// version 1 got wrong: producer B uses the event id producer A sends next, and B's job sends a FAIL under A's runId.
type world struct {
	fx, demoDir string
	identities  bool // the upgrade-v2 world: also the identities version 3 stores in another form (identities.go)
	t0          time.Time
	run         map[string]string // template name -> runId
	ids         map[string]string // role -> eventId
}

func newWorld(fx, demoDir string) *world {
	w := &world{fx: fx, demoDir: demoDir, t0: time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour),
		run: map[string]string{}, ids: map[string]string{}}
	for _, r := range []string{"A", "B", "C", "D", "rename1", "rename2", "mart", "nightly", "child", "orphan", "ghost", "victim", "evil",
		"pg1", "pg2", "spark", "sf", "stream", "steal", "own", "scan"} {
		w.run[r] = newUUID()
	}
	if maskChangeWorld {
		for _, r := range maskChangeRuns {
			w.run[r] = newUUID()
		}
	}
	w.ids["squatted"] = "squat-" + newUUID() // B sends it first; A's COMPLETE under it is what version 1 dropped
	w.ids["victimStart"] = "victim-start-" + newUUID()
	w.ids["evilFail"] = "evil-fail-" + newUUID()
	return w
}

func (w *world) runIDs() []string {
	var out []string
	for _, r := range w.run {
		out = append(out, r)
	}
	return out
}

func (w *world) meta() map[string]any {
	return map[string]any{"runs": w.run, "eventIds": w.ids, "t0": w.t0.Format(time.RFC3339Nano)}
}

func (w *world) at(min int) string {
	return w.t0.Add(time.Duration(min) * time.Minute).Format("2006-01-02T15:04:05.000Z")
}

// demo fills one template of demo/events.
func (w *world) demo(name string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(w.demoDir, name))
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer(
		"__RUN_A__", w.run["A"], "__RUN_B__", w.run["B"], "__RUN_C__", w.run["C"], "__RUN_D__", w.run["D"],
		"__T0__", w.at(0), "__T1__", w.at(5), "__T2__", w.at(10), "__T3__", w.at(20), "__T4__", w.at(30), "__T5__", w.at(40),
		`"s3://demo-lake"`, `"s3://`+w.fx+`-lake"`,
		`"demo-airflow"`, `"`+w.fx+`-airflow"`, `"demo-spark"`, `"`+w.fx+`-spark"`, `"demo-dbt"`, `"`+w.fx+`-dbt"`,
		`"postgres://Orders-DB:5432"`, `"postgres://`+w.fx+`-Orders-DB:5432"`,
		`"postgres://orders-db"`, `"postgres://`+w.fx+`-orders-db"`,
		`"postgres://warehouse:5432"`, `"postgres://`+w.fx+`-warehouse:5432"`)
	return []byte(r.Replace(string(b))), nil
}

const (
	schemaURL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/"
	producer  = "https://example.com/headwater-upgrade-fixture"
)

func facet(name, body string) string {
	return fmt.Sprintf(`%q:{"_producer":%q,"_schemaURL":"https://openlineage.io/spec/facets/1-0-0/%s.json",%s}`, name, producer, name, body)
}

// runEvent renders a RunEvent; id "" lets Headwater derive it.
func (w *world) runEvent(id, typ string, min int, jobNS, job, run, runFacets, inputs, outputs string) []byte {
	idPart := ""
	if id != "" {
		idPart = fmt.Sprintf(`"eventId":%q,`, id)
	}
	return []byte(fmt.Sprintf(`{%s"eventType":%q,"eventTime":%q,"producer":%q,"schemaURL":"%sRunEvent","run":{"runId":%q,"facets":{%s}},"job":{"namespace":%q,"name":%q},"inputs":[%s],"outputs":[%s]}`,
		idPart, typ, w.at(min), producer, schemaURL, run, runFacets, jobNS, job, inputs, outputs))
}

func ds(ns, name, facets string) string {
	return fmt.Sprintf(`{"namespace":%q,"name":%q,"facets":{%s}}`, ns, name, facets)
}

func schema(fields ...string) string {
	var fs []string
	for _, f := range fields {
		p := strings.SplitN(f, ":", 2)
		fs = append(fs, fmt.Sprintf(`{"name":%q,"type":%q}`, p[0], p[1]))
	}
	return facet("schema", `"fields":[`+strings.Join(fs, ",")+`]`)
}

type post struct {
	tok  string // admin, producer-a, producer-b
	body []byte
	what string
	code int // expected status
}

func (w *world) posts() ([]post, error) {
	var out []post
	for _, name := range []string{"02-extract-complete.json", "01-extract-start.json", "02-extract-complete.json",
		"04-clean-complete.json", "03-clean-start.json", "06-revenue-complete.json", "05-revenue-start.json", "07-experiment-fail.json"} {
		b, err := w.demo(name)
		if err != nil {
			return nil, err
		}
		out = append(out, post{"admin", b, "demo " + name, http.StatusAccepted})
	}
	lake, jobs := "s3://"+w.fx+"-lake", w.fx+"-jobs"
	// A rename with history: curated/orders written with a schema, then renamed to curated/orders_v2 with one more column.
	out = append(out,
		post{"admin", w.runEvent("", "COMPLETE", 50, jobs, "curate", w.run["rename1"], "",
			ds(lake, "raw/orders", ""), ds(lake, "curated/orders", schema("id:bigint", "amount:numeric"))), "curate", http.StatusAccepted},
		post{"admin", w.runEvent("", "COMPLETE", 60, jobs, "curate", w.run["rename2"], "",
			ds(lake, "raw/orders", ""), ds(lake, "curated/orders_v2", schema("id:bigint", "amount:numeric", "currency:text")+","+
				facet("lifecycleStateChange", fmt.Sprintf(`"lifecycleStateChange":"RENAME","previousIdentifier":{"namespace":%q,"name":"curated/orders"}`, lake)))),
			"rename", http.StatusAccepted})
	// A publication gate: the run writes the mart, a DatasetEvent withholds it for that run.
	out = append(out,
		post{"admin", w.runEvent("", "COMPLETE", 70, jobs, "publish_mart", w.run["mart"], "",
			ds(lake, "curated/orders_v2", ""), ds(lake, "mart/daily", schema("day:date", "total:numeric"))), "mart", http.StatusAccepted},
		post{"admin", []byte(fmt.Sprintf(`{"eventTime":%q,"producer":%q,"schemaURL":"%sDatasetEvent","dataset":{"namespace":%q,"name":"mart/daily","facets":{%s}}}`,
			w.at(71), producer, schemaURL, lake, facet("headwater_publication", fmt.Sprintf(`"state":"WITHHELD","reason":"row count check failed","runId":%q`, w.run["mart"])))),
			"gate", http.StatusAccepted})
	// A child run sent before its parent's events (version 1 wrote a placeholder parent), then the parent.
	parent := facet("parent", fmt.Sprintf(`"run":{"runId":%q},"job":{"namespace":%q,"name":"nightly"}`, w.run["nightly"], jobs))
	out = append(out,
		post{"admin", w.runEvent("", "START", 80, jobs, "nightly.load", w.run["child"], parent, ds(lake, "mart/daily", ""), ""), "child start", http.StatusAccepted},
		post{"admin", w.runEvent("", "START", 79, jobs, "nightly", w.run["nightly"], "", "", ""), "parent start", http.StatusAccepted},
		post{"admin", w.runEvent("", "COMPLETE", 85, jobs, "nightly.load", w.run["child"], parent, ds(lake, "mart/daily", ""),
			ds(lake, "export/daily", schema("day:date", "total:numeric"))), "child complete", http.StatusAccepted},
		post{"admin", w.runEvent("", "COMPLETE", 90, jobs, "nightly", w.run["nightly"], "", "", ""), "parent complete", http.StatusAccepted})
	// A child whose parent's job never sends an event: version 1 keeps a placeholder parent run.
	ghost := facet("parent", fmt.Sprintf(`"run":{"runId":%q},"job":{"namespace":%q,"name":"scheduler"}`, w.run["ghost"], jobs))
	out = append(out, post{"admin", w.runEvent("", "COMPLETE", 95, jobs, "nightly.audit", w.run["orphan"], ghost, ds(lake, "export/daily", ""), ""),
		"orphan child", http.StatusAccepted})
	// The squats: B sends first under the id A uses next, then a FAIL of B's job under A's runId.
	nsA, nsB := w.fx+"-a", w.fx+"-b"
	out = append(out,
		post{"producer-b", w.runEvent(w.ids["squatted"], "START", 100, nsB, "evil", w.run["evil"], "", "", ""), "B squats A's next id", http.StatusAccepted},
		post{"producer-a", w.runEvent(w.ids["victimStart"], "START", 101, nsA, "victim", w.run["victim"], "", "", ""), "A start", http.StatusAccepted},
		post{"producer-a", w.runEvent(w.ids["squatted"], "COMPLETE", 110, nsA, "victim", w.run["victim"], "", "",
			ds("s3://"+nsA, "out", schema("id:bigint"))), "A complete under the squatted id", http.StatusAccepted},
		post{"producer-b", w.runEvent(w.ids["evilFail"], "FAIL", 120, nsB, "evil", w.run["victim"], "", "",
			ds("s3://"+nsB, "loot", "")), "B's FAIL under A's runId", http.StatusAccepted})
	if w.identities {
		out = append(out, w.identityPosts()...)
	}
	if tagsWorld {
		out = append(out, w.tagPosts()...)
	}
	if blocksWorld {
		out = append(out, w.blockPosts()...)
	}
	if scansWorld {
		ps, err := w.scanPosts()
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	if jobTagsWorld {
		out = append(out, w.jobTagPosts()...)
	}
	if maskChangeWorld {
		out = append(out, w.maskChangePosts()...)
	}
	return out, nil
}

// send posts every event and returns how many the gateway accepted.
func (w *world) send(api string, tokens map[string]string) (int, error) {
	ps, err := w.posts()
	if err != nil {
		return 0, err
	}
	for _, p := range ps {
		req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage", bytes.NewReader(p.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokens[p.tok])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != p.code {
			return 0, fmt.Errorf("%s: %d %s", p.what, resp.StatusCode, b)
		}
		time.Sleep(150 * time.Millisecond) // one event per consumer batch, in this order
	}
	return len(ps), nil
}
