// Command gen writes the upgrade fixtures (e2e/testdata/upgrade-v1 and upgrade-v2, README.md there): it runs a
// headwater binary built from the last commit of the previous projection version against the shared stack, sends a
// small world through its HTTP gateway, waits until it is projected, records what that version answered through
// GraphQL (ids.json), exports the graph it wrote for the fixture's namespaces (graph.json) and copies the raw-event
// archive it wrote (archive/). -world=v2 adds the identities version 3 stores in another form (identities.go).
//
//	go run ./e2e/testdata/upgrade-v1/gen -bin /tmp/hw-v1 -out e2e/testdata/upgrade-v1
//	go run ./e2e/testdata/upgrade-v1/gen -bin /tmp/hw-v2 -out e2e/testdata/upgrade-v2 -world=v2 -commit=6463f7a -fx=upgv2-<token>
//	go run ./e2e/testdata/upgrade-v1/gen -bin /tmp/hw-v9 -out e2e/testdata/upgrade-v9 -world=v9 -commit=aee4812 -fx=upgv9-<token>
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

func main() {
	bin := flag.String("bin", "/tmp/hw-v1", "headwater binary built from the previous projection version")
	out := flag.String("out", "e2e/testdata/upgrade-v1", "fixture directory")
	fx := flag.String("fx", "upgv1-"+testenv.Token(4), "namespace prefix of the fixture (jobs <fx>-..., datasets s3://<fx>-..., postgres://<fx>-...)")
	demo := flag.String("demo", "demo/events", "the demo's event templates")
	worldName := flag.String("world", "v1", "v1: the upgrade-v1 world; v2: it and the identities of upgrade-v2; v5: v2 and the tags facets of upgrade-v5; v6: v5 and the block facets of upgrade-v6; v7: v6 and the time-travel read of upgrade-v7; v8: v7 and the job tags sequence of upgrade-v8; v9: v8 and the masking change of upgrade-v9")
	commit := flag.String("commit", "db621b7", "the commit the binary was built from (recorded in ids.json)")
	flag.Parse()
	maskChangeWorld = *worldName == "v9"
	jobTagsWorld = *worldName == "v8" || maskChangeWorld
	scansWorld = *worldName == "v7" || jobTagsWorld
	blocksWorld = *worldName == "v6" || scansWorld
	tagsWorld = *worldName == "v5" || blocksWorld
	if err := run(*bin, *out, *fx, *demo, *worldName == "v2" || tagsWorld, *commit); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(bin, out, fx, demoDir string, identities bool, commit string) error {
	tmp, err := os.MkdirTemp("", "hw-upgrade-v1-gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	kc := kafkaio.Config{Brokers: testenv.KafkaBrokers(), EventsTopic: "t." + fx + ".events", QuarantineTopic: "t." + fx + ".quarantine",
		Partitions: 3, Replication: 1, ClientID: "headwater-gen", ProduceTimeout: 10 * time.Second, MaxMessageBytes: 8 << 20,
		ConsumerGroup: "t." + fx + ".group", SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second}
	if err := kafkaio.EnsureTopics(kc); err != nil {
		return err
	}
	policy := filepath.Join(tmp, "policy.yaml")
	if err := os.WriteFile(policy, []byte(policyYAML(fx)), 0o600); err != nil {
		return err
	}
	env := append(os.Environ(),
		"HEADWATER_KAFKA_BROKERS="+strings.Join(kc.Brokers, ","),
		"HEADWATER_KAFKA_EVENTS_TOPIC="+kc.EventsTopic,
		"HEADWATER_KAFKA_QUARANTINE_TOPIC="+kc.QuarantineTopic,
		"HEADWATER_KAFKA_CONSUMER_GROUP="+kc.ConsumerGroup,
		"HEADWATER_NEO4J_URI="+testenv.Neo4jURI(),
		"HEADWATER_REDIS_ADDR=", // no cache: every answer below is read from Neo4j
		"HEADWATER_LOG_FORMAT=text",
		"HEADWATER_AUTHZ_POLICY_FILE="+policy,
		"HEADWATER_AUTHZ_POLICY_SOURCE="+fx,
		"HEADWATER_AUTHZ_AUDIT_TOPIC="+kc.EventsTopic+".audit")
	tokens := map[string]string{}
	for _, who := range []string{"admin", "producer-a", "producer-b", "reader"} {
		cmd := exec.Command(bin, "token", "create", "--owner="+fx+"-"+who, "--kind=producer", "--log-level=warn")
		cmd.Env = env
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("token create %s: %w", who, err)
		}
		tokens[who] = strings.TrimSpace(string(b))
	}
	arch := filepath.Join(tmp, "archive")
	api, metrics := freePort(), freePort()
	logf, _ := os.Create(filepath.Join(tmp, "v1.log"))
	srv := exec.Command(bin, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+arch)
	srv.Env, srv.Stdout, srv.Stderr = env, logf, logf
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill() }()
	if err := waitReady("http://" + api + "/readyz"); err != nil {
		b, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("%w\n%s", err, b)
	}
	w := newWorld(fx, demoDir)
	w.identities = identities
	sent, err := w.send(api, tokens)
	if err != nil {
		return err
	}
	if identities {
		for _, m := range w.grantMutations() {
			if _, err := gql(api, tokens["admin"], m, nil); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
		}
	}
	if err := waitProjected(arch, sent); err != nil {
		return err
	}
	answers, err := w.answers(api, tokens)
	if err != nil {
		return err
	}
	srv.Process.Signal(syscall.SIGTERM)
	_ = srv.Wait()

	ids, err := archiveIDs(arch)
	if err != nil {
		return err
	}
	g, err := export(fx, ids, w.runIDs(), identities)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(out, "archive")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "archive"), 0o755); err != nil {
		return err
	}
	segs, _ := filepath.Glob(filepath.Join(arch, "*"))
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "archive", filepath.Base(s)), b, 0o644); err != nil {
			return err
		}
	}
	answers["commit"] = commit
	answers["namespace"], answers["principals"] = fx, map[string]string{"admin": fx + "-admin", "producerA": fx + "-producer-a",
		"producerB": fx + "-producer-b", "reader": fx + "-reader"}
	answers["world"] = w.meta()
	if err := writeJSON(filepath.Join(out, "ids.json"), answers); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "graph.json"), g); err != nil {
		return err
	}
	fmt.Printf("fixture %s: %d archived events, %d nodes, %d relationships\n", fx, len(ids), len(g.Nodes), len(g.Rels))
	return nil
}

func policyYAML(fx string) string {
	return fmt.Sprintf(`version: 1
hiddenNeighbours: OMIT
roles:
  - name: %[1]s-all
    grants:
      - privileges: [MANAGE_GRANTS]
        on: {all: true}
  - name: %[1]s-prod-a
    grants:
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-a"}
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "s3://%[1]s-a"}
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "postgres://%[1]s-pga"}
  - name: %[1]s-prod-b
    grants:
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-b"}
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "s3://%[1]s-b"}
bindings:
  - role: %[1]s-all
    subjects: [%[1]s-admin]
  - role: %[1]s-prod-a
    subjects: [%[1]s-producer-a]
  - role: %[1]s-prod-b
    subjects: [%[1]s-producer-b]
`, fx)
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(url string) error {
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
	}
	return fmt.Errorf("%s not ready", url)
}

// waitProjected waits until the archive holds every accepted event and each archived id has an Event node.
func waitProjected(arch string, sent int) error {
	ctx := context.Background()
	drv, err := neo4j.NewDriverWithContext(testenv.Neo4jURI(), neo4j.NoAuth())
	if err != nil {
		return err
	}
	defer drv.Close(ctx)
	var ids []string
	for deadline := time.Now().Add(6 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) { // a loaded machine is slow
		recs := 0
		_ = archive.Read(arch, func(archive.Record) error { recs++; return nil }, func(string, error) {})
		if recs < sent {
			continue
		}
		if ids, err = archiveIDs(arch); err != nil {
			return err
		}
		res, err := neo4j.ExecuteQuery(ctx, drv, `MATCH (e:Event) WHERE coalesce(e.eventId, e.key) IN $ids RETURN count(DISTINCT coalesce(e.eventId, e.key)) AS n`,
			map[string]any{"ids": ids}, neo4j.EagerResultTransformer)
		if err != nil {
			return err
		}
		if n, _ := res.Records[0].Get("n"); n.(int64) == int64(len(ids)) {
			time.Sleep(2 * time.Second) // the consumer commits after projecting; let every batch finish
			return nil
		}
	}
	return fmt.Errorf("not projected: %d ids", len(ids))
}

func archiveIDs(arch string) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	err := archive.Read(arch, func(r archive.Record) error {
		if !seen[r.EventID] {
			seen[r.EventID] = true
			ids = append(ids, r.EventID)
		}
		return nil
	}, func(seg string, err error) {})
	return ids, err
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// gql posts a query with a token.
func gql(api, tok, query string, vars map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if len(out.Errors) > 0 {
		return map[string]any{}, fmt.Errorf("graphql: %v", out.Errors)
	}
	return out.Data, nil
}

func newUUID() string { return uuid.NewString() }

// b64 marks a []byte property in the export.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
