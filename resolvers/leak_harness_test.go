package resolvers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/search"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/truststore"
)

const testRedactKey = "leak-suite-redact-key-0123456789abcdef"

// memAudit keeps audit records in memory.
type memAudit struct {
	mu   sync.Mutex
	recs []audit.AuditRecord
}

func (m *memAudit) Audit(_ context.Context, r audit.AuditRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}

func (m *memAudit) all() []audit.AuditRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]audit.AuditRecord(nil), m.recs...)
}

// world is one leak-suite graph with grants: visible names under the prefix "pub", hidden ones under "sec" with
// random tokens in every hidden name, so a plain search of a response finds any leak.
type world struct {
	t       *testing.T
	fx      *lineagetest.Fixture
	grants  *grantstore.GrantStore
	gaps    *gapsource.Source
	trust   *trust.Service
	policy  *grantpolicy.GrantPolicy
	audit   *memAudit
	srv     *httptest.Server
	sent    *sentEvents // what the governance mutations handed to the gateway
	deps    testDeps    // what srv serves (a test asking the services directly builds them from it)
	rdb     *redis.Client
	prefix  string
	secrets []string // hidden names, keys and public ids
	alias   string   // a symlink of pub.mid in the hidden part of the namespace
	roles   []string
	// principals
	admin, narrow, narrow2 string
	// keys
	src, mid, out, behind, h1, h2, jHidden, midCol, outCol, behindCol, h1Col string
}

type worldOpt struct {
	mode   authz.HiddenMode
	cache  bool
	fanOut int // 0: the default
	// lineage adjusts the service configuration when set; search the searcher's.
	lineage func(*lineage.Config)
	search  func(*search.Config)
	// auditor replaces the in-memory audit (w.audit) as the handler's Auditor when set.
	auditor audit.Auditor
	// canon canonicalises identifiers as ingestion does (nil: identity, as the fixture's datasets are written).
	canon catalog.Canonicalizer
}

func newWorld(t *testing.T, o worldOpt) *world {
	t.Helper()
	store := testenv.Store(t)
	fx := lineagetest.New(t, store)
	w := &world{t: t, fx: fx, grants: grantstore.NewGrantStore(store, time.Now), audit: &memAudit{}, prefix: fx.NS}
	w.admin, w.narrow, w.narrow2 = fx.NS+"-admin", fx.NS+"-narrow", fx.NS+"-narrow2"
	w.build()
	w.setupGrants()
	pol, err := grantpolicy.NewGrantPolicy(t.Context(), w.grants, grantpolicy.PolicyOptions{Names: grantstore.GraphNames{Store: store},
		Settings: authz.Settings{HiddenNeighbours: o.mode, SensitiveTags: []string{"pii"}}})
	if err != nil {
		t.Fatal(err)
	}
	w.policy = pol
	red, err := authz.NewRedactor(testRedactKey)
	if err != nil {
		t.Fatal(err)
	}
	// the trust gaps are recomputed on every answer (the fixture clock never moves the memo's TTL on): the OMIT
	// test changes hidden inventory between two identical questions
	lc := lineage.Config{CursorKey: testCursorKey, FanOut: o.fanOut, TrustGapsTTL: -1}
	if o.lineage != nil {
		o.lineage(&lc)
	}
	ts, err := trust.NewService(truststore.NewStore(store), pol, trust.Config{RunGrace: time.Minute}, fx.Clock())
	if err != nil {
		t.Fatal(err)
	}
	w.trust = ts
	w.gaps = gapsource.New(ts, truststore.NewStore(store), fx.Clock())
	d := testDeps{Store: store, Clock: fx.Clock(), Lineage: lc, Policy: pol,
		Redactor: red, Auditor: w.audit, Manager: manage.NewManager(w.grants, pol, w.audit, nil, time.Now), Trust: ts, Gaps: w.gaps,
		Canonicalizer: o.canon}
	if o.search != nil {
		o.search(&d.Search)
	}
	if o.auditor != nil {
		d.Auditor = o.auditor
	}
	if o.cache {
		w.rdb = redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
		t.Cleanup(func() { _ = w.rdb.Close() })
		d.Redis = w.rdb
	}
	w.sent = &sentEvents{}
	d.Submitter = w.sent
	w.deps = d
	w.srv = serveAs(t, d, "")
	return w
}

func (w *world) hidden(prefix string) string {
	n := "sec." + prefix + testenv.Token(6)
	w.secrets = append(w.secrets, n)
	return n
}

func (w *world) secretKey(key string, id string) {
	w.secrets = append(w.secrets, key, id)
}

// build writes:  H2 -(pub.j0)-> src -(pub.j1)-> mid -(hidden job)-> out ;  mid -(pub.j2)-> H1 -(pub.j3)-> behind,
// with column lineage mid.c -> out.c (hidden job) and mid.c -> H1.c -> behind.c, a run of pub.j2 that wrote H1.
func (w *world) build() {
	fx := w.fx
	w.src, w.mid, w.out, w.behind = fx.Dataset("pub.src"), fx.Dataset("pub.mid"), fx.Dataset("pub.out"), fx.Dataset("pub.behind")
	h1n, h2n, jn := w.hidden("h1"), w.hidden("h2"), w.hidden("job")
	w.h1, w.h2 = fx.Dataset(h1n), fx.Dataset(h2n)
	w.jHidden = fx.Job(jn)
	w.secretKey(w.h1, api.DatasetID(w.h1))
	w.secretKey(w.h2, api.DatasetID(w.h2))
	w.secretKey(w.jHidden, api.JobID(w.jHidden))
	j0, j1, j2, j3 := fx.Job("pub.j0"), fx.Job("pub.j1"), fx.Job("pub.j2"), fx.Job("pub.j3")
	fx.Flow(j0, []string{w.h2}, []string{w.src})
	fx.Flow(j1, []string{w.src}, []string{w.mid})
	fx.Flow(w.jHidden, []string{w.mid}, []string{w.out})
	fx.Flow(j2, []string{w.mid}, []string{w.h1})
	fx.Flow(j3, []string{w.h1}, []string{w.behind})
	w.midCol = fx.Field(w.mid, "c", fx.T0, time.Time{})
	w.outCol = fx.Field(w.out, "c", fx.T0, time.Time{})
	w.h1Col = fx.Field(w.h1, "c", fx.T0, time.Time{})
	w.behindCol = fx.Field(w.behind, "c", fx.T0, time.Time{})
	w.secretKey(w.h1Col, api.FieldID(w.h1Col))
	fx.ColumnFeeds(w.midCol, w.outCol, w.jHidden, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY"})
	fx.ColumnFeeds(w.midCol, w.h1Col, j2, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY"})
	fx.ColumnFeeds(w.h1Col, w.behindCol, j3, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY"})
	runVisible, runHidden := "00000000-0000-4000-8000-"+testenv.Token(6), "00000000-0000-4000-8000-"+testenv.Token(6)
	w.secrets = append(w.secrets, runHidden, api.RunID(runHidden))
	fx.Run(runVisible, j2, []string{w.mid}, []string{w.h1}, graph.PubPublished, "START", "COMPLETE")
	fx.Run(runHidden, w.jHidden, []string{w.mid}, []string{w.out}, graph.PubPublished, "START", "COMPLETE")
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tags = ['pii']`, map[string]any{"k": w.mid})
	w.alias = w.hidden("alias")
	fx.Exec(`MATCH (d:Dataset {key: $k}) MERGE (n:DatasetName {ident: $ident}) SET n.namespace = $ns, n.name = $name, n.env = ''
MERGE (n)-[r:NAMES]->(d) SET r.kind = 'SYMLINK', r.validFrom = 0, r.validTo = $open`,
		map[string]any{"k": w.mid, "ident": graph.DatasetIdent("", fx.NS, w.alias), "ns": fx.NS,
			"name": w.alias, "open": graph.OpenEnd})
	fx.Exec(`MATCH (j:Job {key: $j}) CREATE (j)-[:HAS_VERSION]->(:JobVersion {key: $k, jobKey: $j, definitionHash: $k,
  sql: $sql, validFrom: 0, validTo: $open})`, map[string]any{"j": j2, "k": j2 + "-leak-v1",
		"sql": "INSERT INTO " + h1n + " SELECT * FROM pub.mid", "open": graph.OpenEnd})
	fx.Exec(`MATCH (r:Run {key: $id}) SET r.errorMessage = $msg`, map[string]any{"id": runVisible, "msg": "failed writing " + h1n})
	w.buildInventory(jn)
}

// buildInventory registers expected jobs for coverage: visible pub.j1 and pub.never, the hidden job and a hidden
// one that never reported; and gives the hidden job a run with only a START (runs without terminal).
func (w *world) buildInventory(hiddenJob string) {
	fx := w.fx
	runOpen := "00000000-0000-4000-8000-" + testenv.Token(6) + "0open"
	w.secrets = append(w.secrets, runOpen, api.RunID(runOpen))
	fx.Run(runOpen, w.jHidden, nil, nil, graph.PubPending, "START")
	fx.Exec(`MATCH (r:Run {key: $id}) SET r.firstEventAt = r.startedAt`, map[string]any{"id": runOpen})
	day := 24 * time.Hour
	out := func(n string) []inventory.Dataset { return []inventory.Dataset{{Namespace: fx.NS, Name: n}} }
	inv := inventory.Inventory{Source: "leak-" + testenv.Token(6), Kind: inventory.KindList, Jobs: []inventory.Job{
		{Namespace: fx.NS, Name: "pub.j1", Interval: day, Outputs: out("pub.mid")},
		{Namespace: fx.NS, Name: "pub.never", Interval: day, Outputs: out("pub.out")},
		{Namespace: fx.NS, Name: hiddenJob, Interval: day, Outputs: out("pub.out")},
		{Namespace: fx.NS, Name: w.hidden("expected"), Interval: day, Outputs: out("pub.mid")},
	}}
	// quiet producers (ADR 0032): of the hidden job and of the visible pub.j2, both named as secrets
	var daily []time.Time
	for d := 12; d >= 5; d-- {
		daily = append(daily, fx.Now.Add(-time.Duration(d)*day))
	}
	producerRun(fx, w.jHidden, w.hidden("prod"), daily)
	producerRun(fx, graph.JobKey(fx.NS, "pub.j2"), w.hidden("prodj2"), daily)
	w.hiddenCanary()
	if err := inv.Normalize(); err != nil {
		w.t.Fatal(err)
	}
	if _, err := registry.NewStore(fx.Store).Register(w.t.Context(), inv, "leak", fx.Now); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) role(n string) string { return w.prefix + "-" + n }

func (w *world) apply(cs ...grant.Change) {
	w.t.Helper()
	if _, err := w.grants.Apply(context.Background(), "leak-test", cs); err != nil {
		w.t.Fatalf("apply grants: %v", err)
	}
}

func (w *world) pubPrefix() grant.Securable {
	return grant.Securable{Kind: grant.SecPrefix, Namespace: w.fx.NS, Name: "pub"}
}

// setupGrants: admin manages everything; narrow sees lineage of pub.*; narrow2 too, minus SQL, plus sensitive tags
// (a different scope).
func (w *world) setupGrants() {
	for _, r := range []string{"admin", "narrow", "narrow2"} {
		w.roles = append(w.roles, w.role(r))
		w.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: w.role(r)}})
	}
	g := func(role string, p authz.Privilege, on grant.Securable) grant.Change {
		return grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role(role), Privilege: p, On: on}}
	}
	bind := func(subject, role string) grant.Change {
		return grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: subject, Role: w.role(role)}}
	}
	w.apply(g("admin", authz.PrivManageGrants, grant.Root()), g("narrow", authz.PrivViewLineage, w.pubPrefix()),
		g("narrow", authz.PrivViewSQL, w.pubPrefix()), g("narrow2", authz.PrivViewLineage, w.pubPrefix()),
		g("narrow2", authz.PrivViewSensitive, w.pubPrefix()),
		bind(w.admin, "admin"), bind(w.narrow, "narrow"), bind(w.narrow2, "narrow2"))
	w.t.Cleanup(func() {
		var cs []grant.Change
		for _, r := range w.roles {
			cs = append(cs, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: r}})
		}
		_, _ = w.grants.Apply(context.Background(), "leak-test-cleanup", cs)
	})
}

// post sends one GraphQL request as principal and returns the raw body.
func (w *world) post(principal, q string, vars map[string]any) []byte {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(principalHeader, principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// leaks returns the secrets found in a text, in its strings decoded as base64url, and in cursors' payloads.
func (w *world) leaks(text string) []string {
	var found []string
	hay := []string{text}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for part := range strings.SplitSeq(x, ".") {
				if b, err := base64.RawURLEncoding.DecodeString(part); err == nil {
					hay = append(hay, string(b))
				}
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var doc any
	if json.Unmarshal([]byte(text), &doc) == nil {
		walk(doc)
	}
	for _, s := range w.secrets {
		for _, h := range hay {
			if strings.Contains(h, s) {
				found = append(found, s)
				break
			}
		}
	}
	return found
}

func (w *world) noLeak(what string, body []byte) {
	w.t.Helper()
	if l := w.leaks(string(body)); len(l) > 0 {
		w.t.Errorf("%s leaks %v:\n%s", what, l, body)
	}
}

// redisLeaks scans every result-tier entry written for this world's start nodes... (all hw:c:res keys holding
// this fixture's namespace) for secrets reachable by a narrow principal: entries keyed by a narrow scope.
func (w *world) redisValues(ctx context.Context, pattern string) []string {
	var out []string
	iter := w.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		v, err := w.rdb.Get(ctx, iter.Val()).Result()
		if err == nil && strings.Contains(v, w.fx.NS) {
			out = append(out, v)
		}
	}
	return out
}
