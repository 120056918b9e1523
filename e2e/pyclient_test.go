package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/internal/testenv"
)

// The real OpenLineage Python client sends through the HTTP transport (gzip) to the gateway and through its
// Kafka transport straight into a topic bound to a producer principal; both runs end up projected.
func TestOpenLineagePythonClientOverHTTPAndKafka(t *testing.T) {
	python := os.Getenv("HEADWATER_TEST_PYTHON")
	if python == "" {
		t.Fatal("HEADWATER_TEST_PYTHON is not set: run the tests with `make test` (it prepares scripts/pyenv.sh)")
	}
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	ext := "t." + s.token + ".ol-direct"
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_KAFKA_EXTERNAL_TOPICS=" + ext + "=" + topicPrincipal},
		"serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)

	script, _ := filepath.Abs("testdata/ol_client.py")
	httpRun := runPython(t, python, script, "http", "http://"+api, token, s.jobNS+"-http", s.dsNS)
	kafkaRun := runPython(t, python, script, "kafka", strings.Join(kc.Brokers, ","), ext, s.jobNS+"-kafka", s.dsNS)

	for run, wantJobNS := range map[string]string{httpRun: s.jobNS + "-http", kafkaRun: s.jobNS + "-kafka"} {
		deadline := time.Now().Add(projectTimeout)
		for {
			res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
				`MATCH (r:Run)-[:OF_JOB]->(j:Job) WHERE r.key STARTS WITH $run + '@' OPTIONAL MATCH (r)-[w:WROTE]->(d:Dataset)
				 RETURN r.state AS state, j.namespace AS ns, collect(d.name) AS outs`,
				map[string]any{"run": run}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
			if err == nil && len(res.Records) == 1 {
				st, _ := res.Records[0].Get("state")
				ns, _ := res.Records[0].Get("ns")
				outs, _ := res.Records[0].Get("outs")
				if st == "COMPLETE" {
					if ns != wantJobNS || len(outs.([]any)) != 1 || outs.([]any)[0] != "out/orders" {
						t.Fatalf("run %s projected wrongly: ns=%v outs=%v", run, ns, outs)
					}
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s (job namespace %s) not projected as COMPLETE within %s", run, wantJobNS, projectTimeout)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

func runPython(t *testing.T, python string, args ...string) string {
	t.Helper()
	out, err := exec.Command(python, args...).Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("openlineage python client %v: %v\n%s", args[1:], err, stderr)
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	return lines[len(lines)-1]
}
