package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/drive"
)

// DbtCmd benchmarks declared lineage at scale (docs/declared-lineage.md "At scale"): it generates a dbt manifest
// of --models models (layers of models reading the layer before, documented columns, two tests each, exposures on
// the last layer) and a candidate that changes it, then, against a running `headwater serve --consumer`, times
// the import until every event is projected, a re-import of the same manifest, the pre-release impact of the
// candidate, and the candidate's import (which supersedes the first), each with the Neo4j transaction-log bytes
// it wrote (drive.TxLogPosition, as bench-ingest.sh measures them). It prints one JSON document.
type DbtCmd struct {
	URL       string        `help:"The headwater API (its HTTP address)." default:"http://127.0.0.1:8186"`
	Token     string        `help:"Bearer token (empty: none, for a serve with --auth-dev-no-auth)." env:"HEADWATER_TOKEN"`
	Neo4jURI  string        `help:"Neo4j the serve projects into (to wait for projection)." default:"bolt://127.0.0.1:7687"`
	Neo4jUser string        `help:"Neo4j user." default:"neo4j"`
	Neo4jPass string        `help:"Neo4j password." default:""`
	TxDir     string        `help:"Neo4j's transaction-log directory (data/transactions/neo4j)." required:""`
	Models    int           `help:"Models in the generated manifest." default:"5000"`
	Layers    int           `help:"Layers the models are in (each reads 1-3 models of the layer before)." default:"10"`
	Project   string        `help:"The dbt project name." default:"hw_bench"`
	JobNS     string        `help:"The job namespace (dbt-ol's OPENLINEAGE_NAMESPACE); a unique default per run."`
	DatasetNS string        `help:"The dataset namespace." default:"duckdb:///bench/warehouse.duckdb"`
	Timeout   time.Duration `help:"How long to wait for projection." default:"30m"`
	KeepDir   string        `help:"Write the generated manifests here (empty: a temporary directory, removed)."`
}

// step is one measured step.
type step struct {
	Name         string  `json:"name"`
	Events       int     `json:"events"`
	AnswerMs     int64   `json:"answerMs"`
	ProjectedMs  int64   `json:"projectedMs,omitempty"`
	TxLogBytes   int64   `json:"txLogBytes"`
	BytesPerNode float64 `json:"txLogBytesPerNode,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// Run generates, uploads and measures.
func (c *DbtCmd) Run(e *env) error {
	if c.JobNS == "" {
		c.JobNS = fmt.Sprintf("bench-dbt-%d", time.Now().Unix())
	}
	base, cand := genManifests(c.Project, c.Models, c.Layers, time.Now().UTC().Add(-time.Hour))
	dir := c.KeepDir
	if dir == "" {
		d, err := os.MkdirTemp("", "hwload-dbt")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(d) }()
		dir = d
	}
	baseRaw, _ := json.Marshal(base)
	candRaw, _ := json.Marshal(cand)
	for name, b := range map[string][]byte{"manifest.json": baseRaw, "candidate.json": candRaw} {
		if err := os.WriteFile(dir+"/"+name, b, 0o600); err != nil {
			return err
		}
	}
	drv, err := neo4j.NewDriverWithContext(c.Neo4jURI, neo4j.BasicAuth(c.Neo4jUser, c.Neo4jPass, ""))
	if err != nil {
		return err
	}
	defer func() { _ = drv.Close(e.ctx) }()
	out := map[string]any{"models": c.Models, "layers": c.Layers, "manifestBytes": len(baseRaw), "candidateBytes": len(candRaw),
		"jobNamespace": c.JobNS, "startedAt": time.Now().UTC()}
	var steps []step
	imp := func(name string, raw []byte, wait bool) error {
		p0, err := drive.TxLogPosition(c.TxDir)
		if err != nil {
			return err
		}
		t0 := time.Now()
		var ans struct {
			Accepted bool     `json:"accepted"`
			EventIDs []string `json:"eventIds"`
			Error    string   `json:"error"`
		}
		if err := c.post(e.ctx, "/api/v1/declare/dbt/"+c.Project, nil, raw, &ans); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !ans.Accepted {
			return fmt.Errorf("%s: not accepted: %s", name, ans.Error)
		}
		s := step{Name: name, Events: len(ans.EventIDs), AnswerMs: time.Since(t0).Milliseconds()}
		if wait {
			if err := waitProjected(e.ctx, drv, ans.EventIDs, c.Timeout); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			s.ProjectedMs = time.Since(t0).Milliseconds()
		} else {
			time.Sleep(5 * time.Second) // duplicates project nothing; give a mistaken projection time to show
			s.Note = "duplicates: nothing to project (5 s allowed for any write)"
		}
		p1, err := drive.TxLogPosition(c.TxDir)
		if err != nil {
			return err
		}
		s.TxLogBytes = p1 - p0
		s.BytesPerNode = float64(s.TxLogBytes) / float64(max(1, s.Events))
		steps = append(steps, s)
		return nil
	}
	if err := imp("import", baseRaw, true); err != nil {
		return err
	}
	if err := imp("re-import (same manifest)", baseRaw, false); err != nil {
		return err
	}
	// the pre-release impact of the candidate (not imported)
	p0, err := drive.TxLogPosition(c.TxDir)
	if err != nil {
		return err
	}
	t0 := time.Now()
	var rep struct {
		Diff struct {
			Added, Removed, Renamed, Columns, Dependencies []json.RawMessage
		} `json:"diff"`
		Changes []json.RawMessage `json:"changes"`
		Partial bool              `json:"partial"`
		DvO     struct {
			EdgesChecked int  `json:"edgesChecked"`
			TestsChecked int  `json:"testsChecked"`
			Partial      bool `json:"partial"`
		} `json:"declaredVersusObserved"`
	}
	if err := c.post(e.ctx, "/api/v1/declare/dbt/"+c.Project+"/impact", nil, candRaw, &rep); err != nil {
		return fmt.Errorf("impact: %w", err)
	}
	p1, err := drive.TxLogPosition(c.TxDir)
	if err != nil {
		return err
	}
	steps = append(steps, step{Name: "pre-release impact of the candidate", AnswerMs: time.Since(t0).Milliseconds(), TxLogBytes: p1 - p0,
		Note: fmt.Sprintf("diff: %d added, %d removed, %d renamed, %d column and %d dependency changes; %d changes assessed (partial %v); declared versus observed: %d edges, %d tests checked",
			len(rep.Diff.Added), len(rep.Diff.Removed), len(rep.Diff.Renamed), len(rep.Diff.Columns), len(rep.Diff.Dependencies),
			len(rep.Changes), rep.Partial, rep.DvO.EdgesChecked, rep.DvO.TestsChecked)})
	if err := imp("import of the candidate (supersedes)", candRaw, true); err != nil {
		return err
	}
	out["steps"] = steps
	out["finishedAt"] = time.Now().UTC()
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (c *DbtCmd) post(ctx context.Context, path string, q url.Values, body []byte, into any) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set("jobNamespace", c.JobNS)
	q.Set("datasetNamespace", c.DatasetNS)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body)
	_ = zw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path+"?"+q.Encode(), &gz)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Encoding", "gzip")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, into)
}

// waitProjected waits until every event id is an Event node (the projector's record of a projected event).
func waitProjected(ctx context.Context, drv neo4j.DriverWithContext, ids []string, timeout time.Duration) error {
	keys := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, graph.EventKey(authz.AnonymousSubject, id), graph.EventKey("", id))
	}
	deadline := time.Now().Add(timeout)
	var n int64
	for time.Now().Before(deadline) {
		res, err := neo4j.ExecuteQuery(ctx, drv, "MATCH (e:Event) WHERE e.key IN $keys RETURN count(DISTINCT coalesce(e.eventId, e.key)) AS n",
			map[string]any{"keys": keys}, neo4j.EagerResultTransformer)
		if err == nil {
			v, _ := res.Records[0].Get("n")
			if n = v.(int64); n >= int64(len(ids)) {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("%d of %d events projected within %s", n, len(ids), timeout)
}

// genManifests returns a manifest of models models in layers (layer 0 reads the sources, each later model 1-3
// models of the layer before), five documented columns and two tests per model, an exposure per 250 models on the
// last layer, and a candidate changing it (generated an hour later): the last 10 models removed, 10 added, 5
// renamed by meta, a column dropped from 50 models and retyped in 20, dependencies changed in 30. Deterministic.
func genManifests(project string, models, layers int, at time.Time) (map[string]any, map[string]any) {
	per := max(1, models/max(1, layers))
	r := rand.New(rand.NewPCG(20, 5000))
	type model struct {
		id, name string
		layer    int
		deps     []string
		cols     [][2]string
	}
	var ms []*model
	for i := range models {
		m := &model{name: fmt.Sprintf("m_%05d", i), layer: min(i/per, layers-1)}
		m.id = "model." + project + "." + m.name
		if m.layer == 0 {
			m.deps = []string{fmt.Sprintf("source.%s.raw.src_%02d", project, i%50)}
		} else {
			lo := (m.layer - 1) * per
			for range 1 + r.IntN(3) {
				m.deps = append(m.deps, ms[lo+r.IntN(per)].id)
			}
		}
		for c := range 5 {
			m.cols = append(m.cols, [2]string{fmt.Sprintf("col_%d", c), []string{"integer", "varchar", "double"}[c%3]})
		}
		ms = append(ms, m)
	}
	build := func(ms []*model, gen time.Time, renamedFrom map[string]string) map[string]any {
		nodes, sources, exposures := map[string]any{}, map[string]any{}, map[string]any{}
		for s := range 50 {
			id := fmt.Sprintf("source.%s.raw.src_%02d", project, s)
			sources[id] = map[string]any{"unique_id": id, "resource_type": "source", "name": fmt.Sprintf("src_%02d", s), "package_name": project,
				"database": "warehouse", "schema": "raw", "identifier": fmt.Sprintf("src_%02d", s),
				"relation_name": fmt.Sprintf(`"warehouse"."raw"."src_%02d"`, s)}
		}
		last := 0
		for _, m := range ms {
			cols := map[string]any{}
			for _, c := range m.cols {
				cols[c[0]] = map[string]any{"name": c[0], "data_type": c[1], "description": "generated"}
			}
			meta := map[string]any{"owner": fmt.Sprintf("team-%d@example.com", m.layer)}
			if f := renamedFrom[m.id]; f != "" {
				meta["headwater_renamed_from"] = f
			}
			nodes[m.id] = map[string]any{"unique_id": m.id, "resource_type": "model", "name": m.name, "package_name": project,
				"database": "warehouse", "schema": "main", "alias": m.name, "relation_name": fmt.Sprintf(`"warehouse"."main"."%s"`, m.name),
				"config": map[string]any{"enabled": true, "materialized": "table"}, "meta": meta, "columns": cols,
				"depends_on":    map[string]any{"nodes": m.deps},
				"compiled_code": fmt.Sprintf("select col_0, col_1, col_2, col_3, col_4 from %d upstream relations", len(m.deps))}
			for _, t := range []string{"not_null", "unique"} {
				tid := fmt.Sprintf("test.%s.%s_%s_col_0.%08x", project, t, m.name, r.Uint32())
				nodes[tid] = map[string]any{"unique_id": tid, "resource_type": "test", "name": t + "_" + m.name + "_col_0", "package_name": project,
					"attached_node": m.id, "column_name": "col_0", "test_metadata": map[string]any{"name": t},
					"config": map[string]any{"enabled": true}, "depends_on": map[string]any{"nodes": []string{m.id}}}
			}
			last = max(last, m.layer)
		}
		n := 0
		for _, m := range ms {
			if m.layer == last && n < max(1, len(ms)/250) {
				id := fmt.Sprintf("exposure.%s.dash_%03d", project, n)
				exposures[id] = map[string]any{"unique_id": id, "name": fmt.Sprintf("dash_%03d", n), "type": "dashboard",
					"url": fmt.Sprintf("https://bi.example.com/d/%d", n), "owner": map[string]any{"name": "BI", "email": "bi@example.com"},
					"depends_on": map[string]any{"nodes": []string{m.id}}}
				n++
			}
		}
		return map[string]any{"metadata": map[string]any{"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
			"project_name": project, "adapter_type": "duckdb", "generated_at": gen.Format(time.RFC3339Nano)},
			"nodes": nodes, "sources": sources, "exposures": exposures}
	}
	base := build(ms, at, nil)
	// the candidate
	var cand []*model
	renamed := map[string]string{}
	for i, m := range ms {
		if i >= len(ms)-10 {
			continue // removed
		}
		c := *m
		c.cols = append([][2]string(nil), m.cols...)
		c.deps = append([]string(nil), m.deps...)
		switch {
		case i >= per && i < per+5: // renamed (meta)
			renamed["model."+project+"."+m.name+"_v2"] = m.id
			c.name += "_v2"
			c.id = "model." + project + "." + c.name
		case i >= 2*per && i < 2*per+50:
			c.cols = c.cols[:4] // col_4 dropped
		case i >= 3*per && i < 3*per+20:
			c.cols[1][1] = "text" // retyped
		case i >= 4*per && i < 4*per+30 && len(c.deps) > 1:
			c.deps = c.deps[1:] // a dependency dropped
		}
		cand = append(cand, &c)
	}
	for i := range 10 {
		cand = append(cand, &model{id: fmt.Sprintf("model.%s.new_%02d", project, i), name: fmt.Sprintf("new_%02d", i), layer: layers - 1,
			deps: []string{ms[len(ms)-11].id}, cols: [][2]string{{"col_0", "integer"}}})
	}
	// models reading a renamed one read it by its new name
	for _, c := range cand {
		for j, d := range c.deps {
			for to, from := range renamed {
				if d == from {
					c.deps[j] = to
				}
			}
		}
	}
	return base, build(cand, at.Add(time.Hour), renamed)
}
