package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// catalogMetric reads one catalog's series from a process's metrics listener (-1 when absent).
func catalogMetric(t *testing.T, metrics, name, catalog, extra string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + name + `\{([^}]*)\} ([0-9.e+]+)$`)
	for _, m := range re.FindAllStringSubmatch(get(t, "http://"+metrics+"/metrics"), -1) {
		if regexp.MustCompile(`catalog="`+regexp.QuoteMeta(catalog)+`"`).MatchString(m[1]) && regexp.MustCompile(extra).MatchString(m[1]) {
			v, _ := strconv.ParseFloat(m[2], 64)
			return v
		}
	}
	return -1
}

type readiness struct {
	Ready    bool
	Checks   map[string]string
	Degraded []string
}

func ready(t *testing.T, api string) readiness {
	t.Helper()
	resp, err := http.Get("http://" + api + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Issue 18, the scheduled mode (docs/adr/0049-scheduled-catalog-syncs.md): two serve processes with the same
// catalogs file of two catalogs. Exactly one of them syncs each catalog (the lease); the table pyiceberg created
// reaches the graph with no `catalog sync` run; a catalog that is down is retried with growing back-off and shows
// as degraded in both processes' readiness while both stay ready; when the syncing process is SIGKILLed the other
// takes the catalog over within the lease's lifetime and syncs the next append.
func TestScheduledCatalogSyncsHaveOneActiveSyncer(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	tok := testenv.Token(4)
	uri := testenv.IcebergURI()
	ns, good, down := "hw_sched_"+tok, "fx-sched-"+tok, "down-"+tok
	o := &ownTest{t: t, jobNS: runID + "-sched-" + tok}
	icebergStep(t, "create", ns)

	var mu sync.Mutex
	var downCalls []time.Time
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/v1/config" {
			downCalls = append(downCalls, time.Now())
		}
		mu.Unlock()
		http.Error(w, `{"error": {"message": "down", "type": "ServiceUnavailableException", "code": 503}}`, http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	file := filepath.Join(t.TempDir(), "catalogs.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, `leaseTTL: 6s
backoff: {initial: 1s, max: 4s}
catalogs:
  - {name: %s, uri: '%s', root: %s, interval: 2s, principal: '%s'}
  - {name: %s, uri: '%s', namespace: '%s', root: %s, interval: 1m, principal: '%s'}
`, good, uri, ns, subject, down, failing.URL, uri, ns, subject), 0o600); err != nil {
		t.Fatal(err)
	}
	type server struct {
		p            *proc
		api, metrics string
	}
	var servers []server
	for range 2 {
		api, metrics := freePort(t), freePort(t)
		p := start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+t.TempDir(),
			"--catalogs-file="+file)
		servers = append(servers, server{p, api, metrics})
	}
	for _, s := range servers {
		waitHTTP(t, "http://"+s.api+"/readyz", 60*time.Second)
	}
	o.api = servers[0].api

	// The table reaches the graph from the schedule alone, bound to its uuid in iceberg://<good>.
	bound := func() bool {
		recs, err := store.ReadRecords(t.Context(), `MATCH (:DatasetName {namespace: $u})-[:NAMES]->(d:Dataset {name: $n}) RETURN d.id AS id`,
			map[string]any{"u": "iceberg://" + good, "n": ns + ".orders"})
		return err == nil && len(recs) == 1
	}
	for deadline := time.Now().Add(90 * time.Second); !bound(); time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("the scheduled sync did not bring %s.orders into the graph bound to iceberg://%s", ns, good)
		}
	}
	if d := icebergDataset(t, o, uri, ns+".orders", nil); d == nil ||
		!slices.ContainsFunc(d.Aliases, func(a struct{ Namespace, Name, Kind string }) bool { return a.Namespace == "iceberg://"+good }) {
		t.Fatalf("the API does not show the synced table with its uuid alias: %+v", d)
	}

	// One active syncer per catalog.
	leader := func(cat string) int {
		t.Helper()
		var who []int
		for i, s := range servers {
			if s.p != nil && catalogMetric(t, s.metrics, "headwater_catalog_sync_leader", cat, "") == 1 {
				who = append(who, i)
			}
		}
		if len(who) != 1 {
			t.Fatalf("catalog %s has %d syncing processes (%v), want exactly one", cat, len(who), who)
		}
		return who[0]
	}
	l := leader(good)
	leader(down)
	if n := catalogMetric(t, servers[1-l].metrics, "headwater_catalog_syncs_total", good, `result="ok"`); n > 0 {
		t.Errorf("the standby synced %s %v times", good, n)
	}

	// The down catalog: degraded in both processes' readiness, both ready, and retried with growing back-off.
	time.Sleep(8 * time.Second)
	for i, s := range servers {
		r := ready(t, s.api)
		if !r.Ready || !slices.Contains(r.Degraded, "catalog:"+down) || r.Checks["catalog:"+good] != "ok" {
			t.Errorf("process %d readiness: %+v, want ready with catalog:%s degraded and catalog:%s ok", i, r, down, good)
		}
	}
	mu.Lock()
	calls := slices.Clone(downCalls)
	mu.Unlock()
	if len(calls) < 3 || len(calls) > 8 {
		t.Errorf("the down catalog was asked %d times in ~%s, want a few (back-off 1 s, 2 s, 4 s)", len(calls), time.Since(calls[0]))
	} else if first, last := calls[1].Sub(calls[0]), calls[len(calls)-1].Sub(calls[len(calls)-2]); last < first+time.Second {
		t.Errorf("retries of the down catalog did not back off: first gap %s, last %s (%v)", first, last, calls)
	}

	// SIGKILL the good catalog's syncer: the other takes over within the lease's lifetime and syncs an append.
	servers[l].p.signal(syscall.SIGKILL)
	killed := time.Now()
	servers[l].p = nil
	o.api = servers[1-l].api
	icebergStep(t, "append-1", ns)
	for {
		d := icebergDataset(t, o, uri, ns+".orders", nil)
		if d != nil && len(d.Versions.Nodes) >= 1 {
			break
		}
		if time.Since(killed) > 90*time.Second {
			t.Fatalf("after the syncer was killed the append's snapshot never reached the graph: %+v", d)
		}
		time.Sleep(time.Second)
	}
	if got := leader(good); got != 1-l {
		t.Fatalf("leader after the kill: %d", got)
	}
	if n := catalogMetric(t, servers[1-l].metrics, "headwater_catalog_syncs_total", good, `result="ok"`); n < 1 {
		t.Errorf("the process that took over counts %v successful syncs", n)
	}
}
