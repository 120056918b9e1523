package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func parse(t *testing.T, args ...string) (*cli, error) {
	t.Helper()
	var c cli
	p, err := kong.New(&c, kong.Configuration(yamlResolver), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse(args)
	return &c, err
}

// clearHeadwaterEnv unsets every HEADWATER_* variable for the test (a test environment pointing the suite at
// other servers must not leak into what the configuration tests read) and restores them after.
func clearHeadwaterEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HEADWATER_") {
			t.Setenv(k, v) // registers the restore
			if err := os.Unsetenv(k); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestConfigPrecedenceFlagsOverEnvOverFileOverDefaults(t *testing.T) {
	clearHeadwaterEnv(t)
	file := filepath.Join(t.TempDir(), "hw.yaml")
	if err := os.WriteFile(file, []byte("neo4j:\n  uri: bolt://file:7687\n  maxPoolSize: 7\nkafka:\n  brokers: [file:9092]\n  eventsTopic: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HEADWATER_NEO4J_URI", "bolt://env:7687")
	t.Setenv("HEADWATER_KAFKA_EVENTS_TOPIC", "from-env")
	c, err := parse(t, "--config", file, "serve", "--kafka-events-topic=from-flag")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Serve
	if s.Neo4j.URI != "bolt://env:7687" {
		t.Errorf("env must beat file: %q", s.Neo4j.URI)
	}
	if s.Neo4j.MaxPoolSize != 7 || s.Kafka.Brokers[0] != "file:9092" {
		t.Errorf("file must beat defaults: pool=%d brokers=%v", s.Neo4j.MaxPoolSize, s.Kafka.Brokers)
	}
	if s.Kafka.EventsTopic != "from-flag" {
		t.Errorf("flag must beat env: %q", s.Kafka.EventsTopic)
	}
	if s.Neo4j.Database != "neo4j" || s.HTTP.Addr != "127.0.0.1:8080" {
		t.Errorf("defaults: db=%q addr=%q", s.Neo4j.Database, s.HTTP.Addr)
	}
}

func TestBadConfigurationNamesTheSetting(t *testing.T) {
	cases := map[string][]string{
		"kafka.quarantine-topic": {"serve", "--kafka-quarantine-topic=headwater.events"},
		"neo4j.max-pool-size":    {"serve", "--neo4j-max-pool-size=0"},
		"http.metrics-addr":      {"serve", "--http-metrics-addr=127.0.0.1:8080"},
		"consumer.batch-size":    {"ingest", "--consumer-batch-size=0"},
		"gateway.max-body-bytes": {"serve", "--gateway-max-body-bytes=10"},
	}
	for setting, args := range cases {
		_, err := parse(t, args...)
		if err == nil || !strings.Contains(err.Error(), setting) {
			t.Errorf("%v: want an error naming %s, got %v", args, setting, err)
		}
	}
}

func TestEffectiveConfigurationIsLoggedWithSecretsRedacted(t *testing.T) {
	var out, errb bytes.Buffer
	t.Setenv("HEADWATER_NEO4J_PASSWORD", "hunter2-secret")
	// version does not log configuration; migrate does, and fails fast against a closed port.
	_ = run([]string{"migrate", "--neo4j-uri=bolt://127.0.0.1:1", "--neo4j-connect-wait=0s"}, &out, &errb)
	logs := errb.String()
	if !strings.Contains(logs, "effective configuration") || !strings.Contains(logs, "neo4j-uri") {
		t.Fatalf("effective configuration not logged: %s", logs)
	}
	if strings.Contains(logs, "hunter2-secret") || !strings.Contains(logs, "[redacted]") {
		t.Fatalf("secret not redacted: %s", logs)
	}
}
