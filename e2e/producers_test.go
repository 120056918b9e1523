package e2e

// Real producers (dbt, Spark with Iceberg, Airflow) run against a headwater started on the real stack and send
// their events over the OpenLineage HTTP transport with an API key. Each test waits until every event the producer
// sent is projected, then renders Headwater's answer about everything the run touched (datasets, fields, versions,
// aliases, dataset and column edges, the run tree, publications, kept assertions, unresolved identities) as sorted
// text, normalised for the test's directory, namespaces, run ids and snapshot ids, and compares it with a golden
// file reviewed by hand (e2e/testdata/producers/*.golden). `go test ./e2e -run Producer -update` rewrites them.
//
// The producers are set up by scripts/producers/*.sh (`make test` does it); a test whose producer is missing fails.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the producers' golden files with today's answers")

// producerTimeout bounds one producer command (a cold Spark start with Iceberg takes tens of seconds here).
const producerTimeout = 5 * time.Minute

// producerHome returns the producer's set-up directory from env (set by `make test` from scripts/producers/all.sh).
func producerHome(t *testing.T, env, script string) string {
	t.Helper()
	home := os.Getenv(env)
	if home == "" {
		t.Fatalf("%s is not set: run the tests with `make test` (it runs %s)", env, script)
	}
	if _, err := os.Stat(filepath.Join(home, "venv", "bin", "python")); err != nil {
		t.Fatalf("%s=%s has no venv (%v): run %s", env, home, err, script)
	}
	return home
}

// producerRun is one producer test: a headwater on the real stack, a work directory, and the job namespace.
type producerRun struct {
	api, work, jobNS string
	store            *graph.Store
}

func newProducerRun(t *testing.T, name string) *producerRun {
	t.Helper()
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	return &producerRun{api: api, work: t.TempDir(), jobNS: "e2e-" + testenv.Token(5) + "-" + name, store: store}
}

// url is the headwater base URL the producers are pointed at.
func (p *producerRun) url() string { return "http://" + p.api }

// run executes a producer command in dir with env and fails the test unless its exit code is wantExit.
func (p *producerRun) run(t *testing.T, dir string, env []string, wantExit int, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), producerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v\n%s", name, args, err, tail(string(out), 6000))
		}
		code = ee.ExitCode()
	}
	shown := strings.ReplaceAll(strings.Join(args, " "), token, "$TOKEN")
	t.Logf("%s %s: exit %d in %s", filepath.Base(name), shown, code, time.Since(began).Round(100*time.Millisecond))
	if code != wantExit {
		t.Fatalf("%s %v: exit %d, want %d\n%s", name, args, code, wantExit, tail(string(out), 6000))
	}
}

// events reads the producer's own copy of what it sent (its file transport) and returns Headwater's event ids.
func eventIDs(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("the producer wrote no events file: %v", err)
	}
	defer f.Close()
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	var ids []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		ev, err := dec.Decode([]byte(line))
		if err != nil {
			t.Fatalf("an event the producer sent does not decode: %v\n%s", err, tail(line, 2000))
		}
		olevent.ResolveID("", &ev)
		if !seen[ev.ID] {
			seen[ev.ID] = true
			ids = append(ids, ev.ID)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatalf("the producer sent no events (%s is empty)", file)
	}
	if keep := os.Getenv("HEADWATER_KEEP_PRODUCER_EVENTS"); keep != "" { // a copy for writing fixtures by hand
		b, _ := os.ReadFile(file)
		_ = os.WriteFile(filepath.Join(keep, t.Name()+".jsonl"), b, 0o644)
	}
	return ids
}

// answer renders what Headwater answers about the datasets whose identity mentions the work directory and the
// jobs of the job namespace. Every line is normalised and the lines are sorted.
type answer struct {
	p      *producerRun
	t      *testing.T
	lines  []string
	runs   map[string]string // runId -> label
	snaps  map[string]string // dataset version -> label
	nodeID map[string]string // node id -> rendered name
	// ignore drops lines matching it from the comparison; each use names the issue item it waits for.
	ignore []*regexp.Regexp
	// mask rewrites what a producer reports nondeterministically (each use says why); applied after normalising.
	mask []masking
}

// masking replaces the matches of re in a line by with.
type masking struct {
	re   *regexp.Regexp
	with string
}

func (p *producerRun) answer(t *testing.T) *answer {
	return &answer{p: p, t: t, runs: map[string]string{}, snaps: map[string]string{}, nodeID: map[string]string{}}
}

func (a *answer) add(format string, args ...any) {
	a.lines = append(a.lines, fmt.Sprintf(format, args...))
}

func (a *answer) gql(q string, vars map[string]any) map[string]any {
	o := &ownTest{api: a.p.api}
	return o.gql(a.t, q, vars)
}

func (a *answer) cypher(q string, params map[string]any) []*neo4j.Record {
	res, err := neo4j.ExecuteQuery(context.Background(), a.p.store.Driver, q, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(a.p.store.Database))
	if err != nil {
		a.t.Fatalf("cypher: %v", err)
	}
	return res.Records
}

// datasets lists (namespace, name) of every dataset one of whose names mentions the work directory.
func (a *answer) datasets() [][2]string {
	recs := a.cypher(`MATCH (n:DatasetName)-[:NAMES]->(d:Dataset)
		WHERE n.namespace CONTAINS $w OR n.name CONTAINS $w
		RETURN DISTINCT d.namespace AS ns, d.name AS name ORDER BY ns, name`, map[string]any{"w": a.p.work})
	var out [][2]string
	for _, r := range recs {
		ns, _ := r.Get("ns")
		nm, _ := r.Get("name")
		out = append(out, [2]string{ns.(string), nm.(string)})
	}
	return out
}

func (a *answer) jobs() []string {
	recs := a.cypher(`MATCH (j:Job {namespace: $ns}) RETURN j.name AS name ORDER BY name`, map[string]any{"ns": a.p.jobNS})
	var out []string
	for _, r := range recs {
		nm, _ := r.Get("name")
		out = append(out, nm.(string))
	}
	return out
}

// build renders the whole answer.
func (a *answer) build() string {
	dss := a.datasets()
	jobs := a.jobs()
	fetched := make([]map[string]any, len(jobs))
	for i, j := range jobs { // runs first: their labels are used by everything after, a parent's by its children
		fetched[i] = a.fetchJob(j)
	}
	for i, j := range jobs {
		a.job(j, fetched[i])
	}
	for _, d := range dss {
		a.dataset(d[0], d[1])
	}
	for _, d := range dss {
		a.edges(d[0], d[1])
	}
	a.assertions()
	a.indirect()
	a.unresolved()
	var kept []string
	for _, l := range a.lines {
		l = a.normalise(l)
		for _, m := range a.mask {
			l = m.re.ReplaceAllString(l, m.with)
		}
		drop := false
		for _, re := range a.ignore {
			if re.MatchString(l) {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, l)
		}
	}
	sort.Strings(kept)
	return strings.Join(dedupe(kept), "\n") + "\n"
}

func dedupe(s []string) []string {
	var out []string
	for i, l := range s {
		if i == 0 || l != s[i-1] {
			out = append(out, l)
		}
	}
	return out
}

func (a *answer) normalise(l string) string {
	l = strings.ReplaceAll(l, a.p.work, "$WORK")
	l = strings.ReplaceAll(l, a.p.jobNS, "$JOBNS")
	for v, label := range a.snaps {
		l = strings.ReplaceAll(l, v, label)
	}
	return l
}

const jobQuery = `query($ns: String!, $n: String!) { job(namespace: $ns, name: $n) {
	name jobType processingType integration dbtUniqueId dbtRole names
	runs(first: 100) { nodes { runId state conflictingStates startedAt endedAt errorMessage
		parent { runId } root { runId }
		inputs { dataset { namespace name } version publication }
		outputs { dataset { namespace name } version publication } } } } }`

// fetchJob reads a job and its runs and labels the runs job#1, job#2, ... oldest first.
func (a *answer) fetchJob(name string) map[string]any {
	d := a.gql(jobQuery, map[string]any{"ns": a.p.jobNS, "n": name})
	j, _ := d["job"].(map[string]any)
	if j == nil {
		a.t.Fatalf("job %s: not found", name)
	}
	runs := j["runs"].(map[string]any)["nodes"].([]any)
	for i := range runs { // newest first in the answer
		r := runs[len(runs)-1-i].(map[string]any)
		a.runs[r["runId"].(string)] = fmt.Sprintf("%s#%d", name, i+1)
	}
	return j
}

// job renders a job fetched by fetchJob and its runs.
func (a *answer) job(name string, j map[string]any) {
	a.add("job %s jobType=%v processingType=%v integration=%v", name, j["jobType"], j["processingType"], j["integration"])
	if j["dbtUniqueId"] != nil { // a dbt node's job (ADR 0027)
		a.add("job %s dbtUniqueId=%v dbtRole=%v names=%v", name, j["dbtUniqueId"], j["dbtRole"], j["names"])
	}
	runs := j["runs"].(map[string]any)["nodes"].([]any)
	for _, x := range runs {
		r := x.(map[string]any)
		label := a.runs[r["runId"].(string)]
		a.add("run %s state=%v conflicting=%v started=%s ended=%s error=%v parent=%s root=%s", label, r["state"],
			r["conflictingStates"], known(r["startedAt"]), known(r["endedAt"]), r["errorMessage"], a.runRef(r["parent"]),
			a.runRef(r["root"]))
		for _, role := range []string{"inputs", "outputs"} {
			for _, y := range r[role].([]any) {
				io := y.(map[string]any)
				ds := io["dataset"].(map[string]any)
				a.version(io["version"])
				a.add("run %s %s %s %s version=%v publication=%v", label, strings.TrimSuffix(role, "s"), ds["namespace"],
					ds["name"], io["version"], io["publication"])
			}
		}
	}
}

func known(v any) string {
	if v == nil {
		return "unknown"
	}
	return "known"
}

// runRef is a parent or root run as its label; a run of a job outside the test's namespace keeps its id.
func (a *answer) runRef(v any) string {
	r, _ := v.(map[string]any)
	if r == nil {
		return "none"
	}
	id := r["runId"].(string)
	if l, ok := a.runs[id]; ok {
		return l
	}
	return "run:" + id
}

// version labels a dataset version (an Iceberg snapshot id, random per run) in order of appearance.
func (a *answer) version(v any) {
	s, _ := v.(string)
	if s == "" {
		return
	}
	if _, ok := a.snaps[s]; !ok {
		if strings.HasPrefix(s, "overwrite@") || strings.HasPrefix(s, "truncate@") { // Headwater's own, by event time
			a.snaps[s] = fmt.Sprintf("$%s%d", strings.ToUpper(s[:strings.IndexByte(s, '@')]), len(a.snaps)+1)
			return
		}
		a.snaps[s] = fmt.Sprintf("$SNAP%d", len(a.snaps)+1)
	}
}

const datasetQuery = `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) {
	description
	fields { path type description observedOnRead validTo }
	aliases { namespace name kind validTo }
	versions(first: 100) { nodes { version lifecycle } } } }`

func (a *answer) dataset(ns, name string) {
	d := a.gql(datasetQuery, map[string]any{"ns": ns, "n": name})["dataset"].(map[string]any)
	id := ns + " " + name
	a.add("dataset %s description=%v", id, d["description"])
	for _, x := range d["fields"].([]any) {
		f := x.(map[string]any)
		a.add("dataset %s field %v type=%v observedOnRead=%v open=%v description=%v", id, f["path"], f["type"],
			f["observedOnRead"], f["validTo"] == nil, f["description"])
	}
	for _, x := range d["aliases"].([]any) {
		al := x.(map[string]any)
		a.add("dataset %s alias %v %v kind=%v open=%v", id, al["namespace"], al["name"], al["kind"], al["validTo"] == nil)
	}
	vs := d["versions"].(map[string]any)["nodes"].([]any)
	for i := range vs { // oldest first, so labels follow the order the snapshots were made
		v := vs[len(vs)-1-i].(map[string]any)
		a.version(v["version"])
		a.add("dataset %s version %v lifecycle=%v", id, v["version"], v["lifecycle"])
	}
}

const lineageQuery = `query($start: NodeRef!, $g: Granularity) {
	lineage(start: $start, direction: DOWNSTREAM, depth: 1, granularity: $g, includeAttempted: true) {
		nodes { id ... on Dataset { namespace name } ... on Field { path dataset { namespace name } } }
		edges { from to job { name } evidence { kind source publication } transformations { type subtype masking } }
		gaps { kind nodes } truncated } }`

// edges renders the dataset edges out of a dataset and the column edges out of each of its fields.
func (a *answer) edges(ns, name string) {
	a.lineage(map[string]any{"dataset": map[string]any{"namespace": ns, "name": name}}, "DATASET")
	d := a.gql(`query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { fields { path } } }`,
		map[string]any{"ns": ns, "n": name})["dataset"].(map[string]any)
	for _, x := range d["fields"].([]any) {
		a.lineage(map[string]any{"field": map[string]any{"namespace": ns, "name": name,
			"field": x.(map[string]any)["path"]}}, "FIELD")
	}
}

func (a *answer) lineage(start map[string]any, granularity string) {
	l := a.gql(lineageQuery, map[string]any{"start": start, "g": granularity})["lineage"].(map[string]any)
	if l["truncated"] == true {
		a.t.Fatalf("lineage from %v truncated", start)
	}
	for _, x := range l["nodes"].([]any) {
		n := x.(map[string]any)
		if ds, ok := n["dataset"].(map[string]any); ok {
			a.nodeID[n["id"].(string)] = fmt.Sprintf("%v %v .%v", ds["namespace"], ds["name"], n["path"])
		} else {
			a.nodeID[n["id"].(string)] = fmt.Sprintf("%v %v", n["namespace"], n["name"])
		}
	}
	kind := map[string]string{"DATASET": "edge", "FIELD": "column"}[granularity]
	for _, x := range l["edges"].([]any) {
		e := x.(map[string]any)
		job := "none"
		if j, ok := e["job"].(map[string]any); ok {
			job = j["name"].(string)
		}
		var ev, tt []string
		for _, y := range e["evidence"].([]any) {
			v := y.(map[string]any)
			ev = append(ev, fmt.Sprintf("%v/%v/%v", v["kind"], v["source"], v["publication"]))
		}
		for _, y := range e["transformations"].([]any) {
			v := y.(map[string]any)
			tt = append(tt, fmt.Sprintf("%v/%v/masking=%v", v["type"], v["subtype"], v["masking"]))
		}
		sort.Strings(ev)
		sort.Strings(tt)
		a.add("%s %s -> %s job=%s evidence=%s transformations=%s", kind, a.nodeID[e["from"].(string)],
			a.nodeID[e["to"].(string)], job, strings.Join(ev, ","), strings.Join(tt, ","))
	}
	for _, x := range l["gaps"].([]any) {
		g := x.(map[string]any)
		var ns []string
		for _, n := range g["nodes"].([]any) {
			ns = append(ns, a.nodeID[n.(string)])
		}
		sort.Strings(ns)
		a.add("gap %v at %s", g["kind"], strings.Join(ns, ","))
	}
}

// assertions renders the data-quality assertions kept on what runs read (GraphQL does not serve run I/O facets,
// so they are read from the READ relationship's facets as stored).
func (a *answer) assertions() {
	recs := a.cypher(`MATCH (r:Run)-[x:READ]->(d:Dataset) WHERE d.namespace CONTAINS $w AND x.facets CONTAINS 'dataQualityAssertions'
		RETURN r.key AS run, d.name AS ds, x.facets AS f`, map[string]any{"w": a.p.work})
	for _, rec := range recs {
		key, _ := rec.Get("run")
		run := a.gql(`query($id: ID!) { run(id: $id) { runId } }`, map[string]any{"id": key})["run"].(map[string]any)["runId"]
		ds, _ := rec.Get("ds")
		f, _ := rec.Get("f")
		var facets struct {
			DQ struct {
				Assertions []struct {
					Assertion string `json:"assertion"`
					Column    string `json:"column"`
					Success   bool   `json:"success"`
				} `json:"assertions"`
			} `json:"dataQualityAssertions"`
		}
		if err := json.Unmarshal([]byte(f.(string)), &facets); err != nil {
			a.t.Fatalf("READ facets: %v", err)
		}
		for _, as := range facets.DQ.Assertions {
			a.add("assertion run=%s on %s %s column=%s success=%v", a.runRef(map[string]any{"runId": run}), ds,
				as.Assertion, as.Column, as.Success)
		}
	}
}

// indirect renders the dataset-level INDIRECT dependencies of column lineage (columnLineage.dataset). GraphQL does
// not serve them today (no resolver reads INDIRECT_FEEDS), so they are read from the store as projected.
func (a *answer) indirect() {
	recs := a.cypher(`MATCH (i:Dataset)-[x:INDIRECT_FEEDS]->(o:Dataset) WHERE i.name CONTAINS $w OR i.namespace CONTAINS $w
		OPTIONAL MATCH (j:Job {key: x.jobKey})
		RETURN i.namespace AS ins, i.name AS inn, o.namespace AS ons, o.name AS onn, j.name AS job,
			x.subtypes AS st, x.validTo AS vt`, map[string]any{"w": a.p.work})
	for _, rec := range recs {
		g := func(k string) any { v, _ := rec.Get(k); return v }
		a.add("indirect %v %v -> %v %v job=%v subtypes=%v open=%v", g("ins"), g("inn"), g("ons"), g("onn"), g("job"),
			g("st"), g("vt") == nil || g("vt") == graph.OpenEnd)
	}
}

// unresolved renders UnresolvedIdentity records mentioning the work directory: nothing may vanish silently.
func (a *answer) unresolved() {
	recs := a.cypher(`MATCH (u:UnresolvedIdentity) WHERE u.namespace CONTAINS $w OR u.name CONTAINS $w
		RETURN u.namespace AS ns, u.name AS name, u.reason AS reason`, map[string]any{"w": a.p.work})
	for _, rec := range recs {
		ns, _ := rec.Get("ns")
		nm, _ := rec.Get("name")
		re, _ := rec.Get("reason")
		a.add("unresolved %v %v reason=%v", ns, nm, re)
	}
}

// compareGolden compares the answer with testdata/producers/<name>.golden (rewritten with -update).
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "producers", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	if got != string(want) {
		t.Errorf("answer differs from %s (-want +got):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+); both are sorted, unique lines.
func lineDiff(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for l := range strings.SplitSeq(want, "\n") {
		w[l] = true
	}
	for l := range strings.SplitSeq(got, "\n") {
		g[l] = true
	}
	var out []string
	for l := range w {
		if !g[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range g {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return strings.Join(out, "\n")
}

// copyTree copies a checked-in producer project into the work directory (producers write next to their project).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
