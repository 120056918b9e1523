// Package e2e runs the real headwater binary against the real Neo4j, Kafka and Redis: events through the HTTP
// gateway or straight into Kafka, crashes by SIGKILL at the worst moment, several consumer instances, replay from
// the archive. "Same graph" is always a diff of project.Dump, never a count.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Each run of the suite gets its own principals: a token for `subject` (everything on everything) and a
// principal bound to external Kafka topics, granted by a policy file of its own.
var binary, policyFile, runID, subject, token, topicPrincipal, narrowToken, readerToken string

// tokenA and tokenB are two producers, each with PRODUCE and DESCRIBE on its own namespaces only
// (<runID>-a, s3://<runID>-a and <runID>-b, s3://<runID>-b).
var tokenA, tokenB string

// eventKeys are the Event node keys an event id can have in this suite: ids are scoped by the principal that
// sent them (graph.EventKey), and the suite's events come from these principals (or none: an unbound topic).
func eventKeys(ids []string) []string {
	var out []string
	for _, p := range []string{"", subject, topicPrincipal, runID + "-narrow-producer", runID + "-producer-a", runID + "-producer-b"} {
		for _, id := range ids {
			out = append(out, graph.EventKey(p, id))
		}
	}
	return out
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// Every e2e test runs the binary against the real servers (testenv.Servers): -short runs none of them.
		fmt.Println("e2e: every test needs the real servers; skipped under -short")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "headwater-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "headwater")
	out, err := exec.Command("go", "build", "-o", binary, "../cmd/headwater").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build headwater: %v\n%s", err, out)
		os.Exit(1)
	}
	if err := setupPrincipals(dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e principals: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// handedOut keeps every address freePort returned in this process: the kernel may hand a just-closed ephemeral port
// out again, and two flags of one serve given the same address make it refuse to start.
var handedOut sync.Map

func freePort(t *testing.T) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		if _, dup := handedOut.LoadOrStore(addr, true); !dup {
			return addr
		}
	}
}

// proc is a running headwater process.
type proc struct {
	cmd     *exec.Cmd
	done    chan error
	log     string
	metrics string // the metrics listener's host:port, when the starter records it
}

// start runs the binary with args and extra environment; the process is killed at test end if still running.
func start(t *testing.T, kc kafkaio.Config, env []string, args ...string) *proc {
	t.Helper()
	logf := filepath.Join(t.TempDir(), "headwater.log")
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	// Through a pipe, not the file itself: a fault test's file size limit on the process (the archive's full
	// disk) must not cut its log.
	out := struct{ io.Writer }{f}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(),
		"HEADWATER_KAFKA_BROKERS="+strings.Join(kc.Brokers, ","),
		"HEADWATER_KAFKA_EVENTS_TOPIC="+kc.EventsTopic,
		"HEADWATER_KAFKA_QUARANTINE_TOPIC="+kc.QuarantineTopic,
		"HEADWATER_KAFKA_CONSUMER_GROUP="+kc.ConsumerGroup,
		"HEADWATER_KAFKA_SESSION_TIMEOUT=6s",
		"HEADWATER_NEO4J_URI="+testenv.Neo4jURI(),
		"HEADWATER_REDIS_ADDR="+testenv.RedisAddr(),
		"HEADWATER_LOG_FORMAT=text",
		"HEADWATER_AUTHZ_POLICY_FILE="+policyFile,
		"HEADWATER_AUTHZ_POLICY_SOURCE="+runID,
		"HEADWATER_AUTHZ_AUDIT_TOPIC="+kc.EventsTopic+".audit",
	)
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1), log: logf}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			b, _ := os.ReadFile(logf)
			t.Logf("headwater log (%s):\n%s", strings.Join(args, " "), tail(string(b), 4000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// wait returns the process's exit error within timeout.
func (p *proc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(timeout):
		t.Fatalf("process did not exit within %s", timeout)
		return nil
	}
}

func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%s not 200 within %s", url, timeout)
}

// waitEvents waits until every event id is projected (an Event node exists).
func waitEvents(t *testing.T, store *graph.Store, ids []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var n int64
	for time.Now().Before(deadline) {
		res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
			"MATCH (e:Event) WHERE e.key IN $keys RETURN count(DISTINCT coalesce(e.eventId, e.key)) AS n",
			map[string]any{"keys": eventKeys(ids)}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
		if err == nil {
			v, _ := res.Records[0].Get("n")
			n = v.(int64)
			if n == int64(len(ids)) {
				return
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%d of %d events projected within %s", n, len(ids), timeout)
}

// waitCommitted waits until the consumer group has committed offsets up to the end of every partition.
func waitCommitted(t *testing.T, kc kafkaio.Config, timeout time.Duration) {
	t.Helper()
	client, err := sarama.NewClient(kc.Brokers, kc.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := client.Partitions(kc.EventsTopic)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		offs, err := admin.ListConsumerGroupOffsets(kc.ConsumerGroup, map[string][]int32{kc.EventsTopic: parts})
		if err == nil {
			behind := 0
			for _, p := range parts {
				hw, _ := client.GetOffset(kc.EventsTopic, p, sarama.OffsetNewest)
				blk := offs.GetBlock(kc.EventsTopic, p)
				if hw > 0 && (blk == nil || blk.Offset < hw) { // an empty partition has nothing to commit
					behind++
				}
			}
			if behind == 0 {
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("consumer group %s did not commit to the end within %s", kc.ConsumerGroup, timeout)
}

// scope is one test's namespaces: jobs under jobNS..., datasets under dsNS....
type scope struct {
	token string
	jobNS string
	dsNS  string
}

func newScope(t *testing.T) scope {
	tok := testenv.Token(5)
	return scope{token: tok, jobNS: "e2e-" + tok, dsNS: "s3://e2e-" + tok}
}

func dump(t *testing.T, store *graph.Store, s scope) string {
	t.Helper()
	a, err := project.Dump(context.Background(), store, s.jobNS)
	if err != nil {
		t.Fatal(err)
	}
	b, err := project.Dump(context.Background(), store, s.dsNS)
	if err != nil {
		t.Fatal(err)
	}
	return a + b
}

// erase deletes the test's subgraph so the same events can be projected again from nothing.
func erase(t *testing.T, store *graph.Store, s scope, eventIDs []string) {
	t.Helper()
	for _, q := range []string{
		`MATCH (j:Job) WHERE j.namespace STARTS WITH $jp
		 OPTIONAL MATCH (j)<-[:OF_JOB]-(r:Run) OPTIONAL MATCH (j)-[:HAS_VERSION]->(v)
		 DETACH DELETE j, r, v`,
		`MATCH (d:Dataset) WHERE d.namespace STARTS WITH $dp
		 OPTIONAL MATCH (d)-[:HAS_FIELD]->(f) OPTIONAL MATCH (d)<-[:VERSION_OF]-(dv)
		 DETACH DELETE d, f, dv`,
		`MATCH (n:DatasetName|UnresolvedIdentity) WHERE n.namespace STARTS WITH $dp DETACH DELETE n`,
		`MATCH (e:Event) WHERE e.key IN $ids DETACH DELETE e`,
	} {
		if _, err := neo4j.ExecuteQuery(context.Background(), store.Driver, q,
			map[string]any{"jp": s.jobNS, "dp": s.dsNS, "ids": eventKeys(eventIDs)}, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(store.Database)); err != nil {
			t.Fatalf("erase: %v", err)
		}
	}
}

// reference erases the scope and projects the events once each, in order, in-process, as sent by principal: the
// graph every recovery path must reproduce.
func reference(t *testing.T, store *graph.Store, s scope, events [][]byte, ids []string, principal string) string {
	t.Helper()
	erase(t, store, s, ids)
	norm, err := normalize.New(normalize.Config{DefaultEnv: "default"})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := project.New(store, norm, noBump{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	var envs []project.Envelope
	for i, raw := range events {
		ev, err := dec.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		olevent.ResolveID("", &ev)
		if ev.ID != ids[i] {
			t.Fatalf("event %d: id %s, want %s", i, ev.ID, ids[i])
		}
		envs = append(envs, project.Envelope{Event: ev, ReceivedAt: time.Now(), Principal: principal, Source: "reference"})
	}
	if _, err := proj.Apply(context.Background(), envs); err != nil {
		t.Fatal(err)
	}
	return dump(t, store, s)
}

type noBump struct{}

func (noBump) Bump(context.Context, []string) error { return nil }

// countProjected counts how many of the ids are Event nodes now.
func countProjected(t *testing.T, ids []string) int {
	t.Helper()
	store := testenv.Store(t)
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
		"MATCH (e:Event) WHERE e.key IN $keys RETURN count(e) AS n", map[string]any{"keys": eventKeys(ids)},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := res.Records[0].Get("n")
	return int(v.(int64))
}

// waitQuarantined waits for a Quarantined node and returns its reason.
func waitQuarantined(t *testing.T, store *graph.Store, id string) string {
	t.Helper()
	deadline := time.Now().Add(projectTimeout)
	for time.Now().Before(deadline) {
		res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
			"MATCH (q:Quarantined) WHERE q.key IN $keys RETURN q.reason AS r", map[string]any{"keys": eventKeys([]string{id})},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
		if err == nil && len(res.Records) == 1 {
			r, _ := res.Records[0].Get("r")
			return r.(string)
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("event %s not quarantined within %s", id, projectTimeout)
	return ""
}

// adminAndProducerRoles are the policy-file roles <prefix>-all (every grant), <prefix>-prod-a and <prefix>-prod-b
// (PRODUCE, DESCRIBE and VIEW_LINEAGE on <prefix>-a / <prefix>-b and their s3:// namespaces only).
func adminAndProducerRoles(prefix string) string {
	return fmt.Sprintf(`  - name: %[1]s-all
    grants:
      - privileges: [MANAGE_GRANTS]
        on: {all: true}
  - name: %[1]s-prod-a
    grants:
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-a"}
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "s3://%[1]s-a"}
  - name: %[1]s-prod-b
    grants:
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "%[1]s-b"}
      - privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE]
        on: {namespace: "s3://%[1]s-b"}
`, prefix)
}

// setupPrincipals writes the suite's policy file and creates its API token.
func setupPrincipals(dir string) error {
	runID = "e2e-" + testenv.Token(4)
	subject, topicPrincipal = runID+"-user", runID+"-kafka-producer"
	policyFile = filepath.Join(dir, "policy.yaml")
	policy := fmt.Sprintf(`version: 1
hiddenNeighbours: OMIT
roles:
`+adminAndProducerRoles(runID)+`  - name: %[1]s-narrow
    grants:
      - privileges: [PRODUCE]
        on: {namespace: "%[1]s-allowed"}
      - privileges: [PRODUCE]
        on: {namespace: "s3://%[1]s-allowed"}
      - privileges: [PRODUCE]
        on: {namespace: "%[1]s-own"}
      - privileges: [PRODUCE]
        on: {namespace: "s3://%[1]s-own"}
  - name: %[1]s-reader
    grants:
      - privileges: [DESCRIBE]
        on: {namespace: "%[1]s-readable"}
      - privileges: [DESCRIBE]
        on: {namespace: "s3://%[1]s-readable"}
bindings:
  - role: %[1]s-all
    subjects: [%[2]s, %[3]s]
  - role: %[1]s-narrow
    subjects: [%[1]s-narrow-producer]
  - role: %[1]s-prod-a
    subjects: [%[1]s-producer-a]
  - role: %[1]s-prod-b
    subjects: [%[1]s-producer-b]
  - role: %[1]s-reader
    subjects: [%[1]s-reader]
`, runID, subject, topicPrincipal)
	if err := os.WriteFile(policyFile, []byte(policy), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := graph.Open(ctx, graph.Config{URI: testenv.Neo4jURI(), Database: "neo4j", MaxPoolSize: 4,
		ConnectWait: 20 * time.Second, QueryTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer store.Close(context.Background())
	if _, _, err := store.Migrate(ctx); err != nil {
		return err
	}
	tokens := apitoken.NewStore(store, time.Now)
	if token, _, err = tokens.Create(ctx, apitoken.NewToken{Owner: subject, Kind: "service", CreatedBy: "e2e"}); err != nil {
		return err
	}
	narrowToken, _, err = tokens.Create(ctx, apitoken.NewToken{Owner: runID + "-narrow-producer", Kind: "producer", CreatedBy: "e2e"})
	if err != nil {
		return err
	}
	if tokenA, _, err = tokens.Create(ctx, apitoken.NewToken{Owner: runID + "-producer-a", Kind: "producer", CreatedBy: "e2e"}); err != nil {
		return err
	}
	if tokenB, _, err = tokens.Create(ctx, apitoken.NewToken{Owner: runID + "-producer-b", Kind: "producer", CreatedBy: "e2e"}); err != nil {
		return err
	}
	readerToken, _, err = tokens.Create(ctx, apitoken.NewToken{Owner: runID + "-reader", Kind: "user", CreatedBy: "e2e"})
	return err
}

// authed adds the suite's bearer token to a request.
func authed(req *http.Request) *http.Request {
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}
