package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/internal/testenv"
)

// explorerTimeout bounds the browser tests (npm ci on a fresh clone, the world's projection, eight steps).
const explorerTimeout = 10 * time.Minute

// TestExplorerInChromium runs the lineage explorer's browser tests (web/explorer/e2e/explorer.e2e.ts through
// scripts/explorer.sh e2e: headless Debian chromium driven by playwright-core) against a real serve process: the
// demo lineage in namespaces of its own, a server that redacts hidden neighbours, an analyst who may see all
// lineage and SQL, and a narrow reader of the warehouse, dbt and bi namespaces only. Screenshots of every step are
// kept in web/explorer/e2e-artifacts (ignored by git; CI keeps them as artifacts).
func TestExplorerInChromium(t *testing.T) {
	testenv.Servers(t)
	prefix := "x" + testenv.Token(4)
	analyst, narrow := prefix+"-analyst", prefix+"-narrow"
	policy := explorerPolicy(t, prefix, analyst, narrow)
	store := testenv.Store(t)
	tokens := apitoken.NewStore(store, time.Now)
	tok := func(owner string) string {
		s, _, err := tokens.Create(t.Context(), apitoken.NewToken{Owner: owner, Kind: "user", CreatedBy: "e2e"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	api := freePort(t)
	start(t, testenv.KafkaConfig(t), []string{"HEADWATER_AUTHZ_POLICY_FILE=" + policy,
		"HEADWATER_AUTHZ_POLICY_SOURCE=" + runID + "-explorer", "HEADWATER_AUTHZ_REDACT_KEY=" + testenv.Token(32)},
		"serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)

	artifacts, err := filepath.Abs("../web/explorer/e2e-artifacts")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(artifacts)
	cmd := exec.CommandContext(t.Context(), "../scripts/explorer.sh", "e2e")
	cmd.Env = append(os.Environ(), "HW_API=http://"+api, "HW_PREFIX="+prefix, "HW_PRODUCER_TOKEN="+token,
		"HW_ANALYST_TOKEN="+tok(analyst), "HW_NARROW_TOKEN="+tok(narrow), "HW_ARTIFACTS="+artifacts, "NO_COLOR=1")
	cmd.WaitDelay = 10 * time.Second
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(explorerTimeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the browser tests did not finish within %s:\n%s", explorerTimeout, tail(string(out), 8000))
	}
	if err != nil {
		t.Fatalf("the browser tests failed (%v); screenshots in %s:\n%s", err, artifacts, tail(string(out), 12000))
	}
	t.Logf("browser tests passed; screenshots in %s\n%s", artifacts, tail(string(out), 2000))
}

// explorerPolicy is the suite's policy file with hidden neighbours redacted, an analyst role (VIEW_LINEAGE and
// VIEW_SQL on everything) and a narrow role (DESCRIBE and VIEW_LINEAGE on the world's warehouse, dbt and bi
// namespaces: the lake, the source database, and the Airflow and Spark jobs are hidden from it).
func explorerPolicy(t *testing.T, prefix, analyst, narrow string) string {
	t.Helper()
	base, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Replace(string(base), "hiddenNeighbours: OMIT\n", "hiddenNeighbours: REDACT\n", 1)
	policy = strings.Replace(policy, "bindings:\n", fmt.Sprintf(`  - name: %[1]s-analysts
    grants:
      - privileges: [VIEW_LINEAGE, VIEW_SQL]
        on: {all: true}
  - name: %[1]s-narrow
    grants:
      - privileges: [DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "postgres://%[1]s-warehouse:5432"}
      - privileges: [DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-dbt"}
      - privileges: [DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-bi"}
bindings:
  - role: %[1]s-analysts
    subjects: [%[2]s]
  - role: %[1]s-narrow
    subjects: [%[3]s]
`, prefix, analyst, narrow), 1)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
