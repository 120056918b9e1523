// Package testenv connects integration tests to the real Neo4j, Kafka and Redis that scripts/stack/stack.sh
// starts. Tests never skip when a server is missing: they fail with a message saying how to start the stack.
// The one skip is asked for: under `go test -short` (`make unit`) every test that needs a server skips (Servers;
// Store, KafkaConfig and Redis call it), so -short runs exactly the tests that need none. CI never passes -short.
//
// Tests share one Neo4j database, so every test scopes its data with a unique namespace (Namespace) and never
// deletes data it did not create.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

const hint = "start the stack with `scripts/stack/stack.sh up` (or run `make test`)"

// Env returns the environment variable or a default.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Neo4jURI is the Bolt URI tests use.
func Neo4jURI() string { return Env("HEADWATER_NEO4J_URI", "bolt://127.0.0.1:7687") }

// KafkaBrokers are the brokers tests use.
func KafkaBrokers() []string {
	return strings.Split(Env("HEADWATER_KAFKA_BROKERS", "127.0.0.1:9092"), ",")
}

// RedisAddr is the Redis address tests use.
func RedisAddr() string { return Env("HEADWATER_REDIS_ADDR", "127.0.0.1:6379") }

// Servers marks a test that needs the real Neo4j, Kafka or Redis: under -short it skips the test, otherwise it
// does nothing (a missing server then fails the test). Call it first in a test that reaches a server without
// Store, KafkaConfig or Redis.
func Servers(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real servers; -short runs only the tests that need none")
	}
}

// Store opens the real Neo4j, migrates it, and closes it when the test ends.
func Store(t testing.TB) *graph.Store {
	t.Helper()
	Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := graph.Open(ctx, graph.Config{URI: Neo4jURI(), Database: "neo4j", MaxPoolSize: 20,
		ConnectWait: 20 * time.Second, QueryTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("neo4j: %v; %s", err, hint)
	}
	if _, _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// Namespace returns a unique namespace prefix for one test's data, e.g. "t-3fa2c1/".
func Namespace(t testing.TB) string {
	t.Helper()
	return "t-" + Token(6)
}

// Token returns a random hex token of n bytes.
func Token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// KafkaConfig returns a Kafka configuration with unique topics for one test; the topics are created.
func KafkaConfig(t testing.TB) kafkaio.Config {
	t.Helper()
	Servers(t)
	tok := Token(4)
	c := kafkaio.Config{Brokers: KafkaBrokers(), EventsTopic: "t." + tok + ".events", QuarantineTopic: "t." + tok + ".quarantine",
		Partitions: 3, Replication: 1, ClientID: "headwater-test", ProduceTimeout: 10 * time.Second,
		MaxMessageBytes: 8 << 20, ConsumerGroup: "t." + tok + ".group", SessionTimeout: 10 * time.Second,
		RebalanceTimeout: 10 * time.Second}
	if err := kafkaio.EnsureTopics(c); err != nil {
		t.Fatalf("kafka: %v; %s", err, hint)
	}
	return c
}

// ReadTopic reads n messages from the topic (all partitions, from the oldest) or fails after timeout.
func ReadTopic(t testing.TB, c kafkaio.Config, topic string, n int, timeout time.Duration) []*sarama.ConsumerMessage {
	t.Helper()
	Servers(t)
	client, err := sarama.NewClient(c.Brokers, c.NewSaramaConfig())
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer func() { _ = client.Close() }()
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cons.Close() }()
	parts, err := client.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan *sarama.ConsumerMessage, n+16)
	for _, p := range parts {
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = pc.Close() }()
		go func() {
			for m := range pc.Messages() {
				out <- m
			}
		}()
	}
	var got []*sarama.ConsumerMessage
	deadline := time.After(timeout)
	for len(got) < n {
		select {
		case m := <-out:
			got = append(got, m)
		case <-deadline:
			t.Fatalf("read %d of %d messages from %s within %s", len(got), n, topic, timeout)
		}
	}
	// Give stragglers a moment, so tests can assert there are no more than n.
	select {
	case m := <-out:
		got = append(got, m)
	case <-time.After(300 * time.Millisecond):
	}
	return got
}
