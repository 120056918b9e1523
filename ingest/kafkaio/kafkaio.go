// Package kafkaio is Headwater's Kafka plumbing: configuration, topic creation, the durable producer (acks=all,
// idempotent) and the message format shared by the gateway, the consumer and external producers.
//
// Message format: the value is the OpenLineage event JSON exactly as the producer sent it (so events written by
// the OpenLineage Kafka transport and by the gateway look the same); Headwater's metadata rides in headers, which
// external producers do not set, and the consumer must not depend on them or on the key.
package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// Header names the gateway sets on raw-event messages.
const (
	HeaderEventID    = "hw-event-id"
	HeaderReceivedAt = "hw-received-at" // RFC3339Nano
	HeaderPrincipal  = "hw-principal"
	HeaderSource     = "hw-source"
	// HeaderOwned is the JSON array of canonical namespaces the producer held PRODUCE on, among those the event
	// can change, when the gateway accepted it (ingest/ownership); absent means unrestricted.
	HeaderOwned  = "hw-owned"
	HeaderDigest = "hw-digest" // the event's content digest (olevent.Event.ContentDigest), set by the gateway
)

// Values of HeaderSource.
const (
	// SourceGateway marks events the gateway validated before producing them: the consumer decodes them without
	// validating again (the events topic is internal; restrict writes to it with Kafka ACLs).
	SourceGateway = "gateway"
	// SourceRedrive marks quarantined events re-driven by `headwater redrive`: validated again like any input.
	SourceRedrive = "redrive"
)

// Config is the Kafka configuration shared by gateway and consumer.
type Config struct {
	Brokers          []string          `help:"Kafka bootstrap brokers." default:"127.0.0.1:9092" env:"HEADWATER_KAFKA_BROKERS" yaml:"brokers"`
	EventsTopic      string            `help:"Topic of accepted raw OpenLineage events." default:"headwater.events" env:"HEADWATER_KAFKA_EVENTS_TOPIC" yaml:"eventsTopic"`
	QuarantineTopic  string            `help:"Topic of rejected and poison events." default:"headwater.quarantine" env:"HEADWATER_KAFKA_QUARANTINE_TOPIC" yaml:"quarantineTopic"`
	Partitions       int32             `help:"Partitions when Headwater creates its topics." default:"6" env:"HEADWATER_KAFKA_PARTITIONS" yaml:"partitions"`
	Replication      int16             `help:"Replication factor when Headwater creates its topics." default:"1" env:"HEADWATER_KAFKA_REPLICATION" yaml:"replication"`
	ClientID         string            `help:"Kafka client id." default:"headwater" env:"HEADWATER_KAFKA_CLIENT_ID" yaml:"clientId"`
	ProduceTimeout   time.Duration     `help:"How long the gateway waits for Kafka to acknowledge before answering 503." default:"5s" env:"HEADWATER_KAFKA_PRODUCE_TIMEOUT" yaml:"produceTimeout"`
	MaxMessageBytes  int               `help:"Largest message produced." default:"8388608" env:"HEADWATER_KAFKA_MAX_MESSAGE_BYTES" yaml:"maxMessageBytes"`
	ExternalTopics   map[string]string `help:"Topics written directly by the OpenLineage Kafka transport, each bound to a producer principal (topic=principal)." env:"HEADWATER_KAFKA_EXTERNAL_TOPICS" yaml:"externalTopics"`
	ConsumerGroup    string            `help:"Consumer group of the projector." default:"headwater-projector" env:"HEADWATER_KAFKA_CONSUMER_GROUP" yaml:"consumerGroup"`
	SessionTimeout   time.Duration     `help:"Consumer group session timeout." default:"20s" env:"HEADWATER_KAFKA_SESSION_TIMEOUT" yaml:"sessionTimeout"`
	RebalanceTimeout time.Duration     `help:"Consumer group rebalance timeout." default:"30s" env:"HEADWATER_KAFKA_REBALANCE_TIMEOUT" yaml:"rebalanceTimeout"`
	// ProducerLinger and ProducerFlushBytes: the producer gathers messages of concurrent requests for up to the
	// linger (or until the bytes) into one produce request, instead of one request per trickle.
	ProducerLinger     time.Duration `help:"Longest the producer gathers messages into one produce request (0: send at once)." default:"5ms" env:"HEADWATER_KAFKA_PRODUCER_LINGER" yaml:"producerLinger"`
	ProducerFlushBytes int           `help:"Bytes that send a produce request before the linger ends." default:"262144" env:"HEADWATER_KAFKA_PRODUCER_FLUSH_BYTES" yaml:"producerFlushBytes"`
}

// Producer batching defaults (docs/adr/0038-latency-settings-and-the-warm-world-procedure.md): a few
// milliseconds on the gateway's answer against fewer, larger produce requests for the broker and the client.
const (
	DefaultProducerLinger     = 5 * time.Millisecond
	DefaultProducerFlushBytes = 256 << 10
	maxProducerLinger         = time.Second
)

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	switch {
	case len(c.Brokers) == 0 || c.Brokers[0] == "":
		return errors.New("kafka.brokers: at least one broker is required")
	case c.EventsTopic == "" || c.QuarantineTopic == "":
		return errors.New("kafka.events-topic and kafka.quarantine-topic: must not be empty")
	case c.EventsTopic == c.QuarantineTopic:
		return errors.New("kafka.quarantine-topic: must differ from kafka.events-topic")
	case c.Partitions < 1:
		return fmt.Errorf("kafka.partitions: must be at least 1, got %d", c.Partitions)
	case c.Replication < 1:
		return fmt.Errorf("kafka.replication: must be at least 1, got %d", c.Replication)
	case c.ProduceTimeout <= 0:
		return errors.New("kafka.produce-timeout: must be positive")
	case c.ConsumerGroup == "":
		return errors.New("kafka.consumer-group: must not be empty")
	case c.ProducerLinger < 0 || c.ProducerLinger > maxProducerLinger:
		return fmt.Errorf("kafka.producer-linger: must be between 0 and %s, got %s", maxProducerLinger, c.ProducerLinger)
	case c.ProducerFlushBytes < 0:
		return fmt.Errorf("kafka.producer-flush-bytes: must not be negative, got %d", c.ProducerFlushBytes)
	}
	for t, p := range c.ExternalTopics {
		if t == "" || p == "" || t == c.EventsTopic || t == c.QuarantineTopic {
			return fmt.Errorf("kafka.external-topics: %q=%q must name a separate topic and a principal", t, p)
		}
	}
	return nil
}

// SourceTopics are the topics the consumer reads: the gateway's plus every external topic.
func (c Config) SourceTopics() []string {
	ts := []string{c.EventsTopic}
	for t := range c.ExternalTopics {
		ts = append(ts, t)
	}
	return ts
}

// kafkaVersion is the protocol version sarama speaks; Kafka 4 dropped the pre-2.1 protocols.
var kafkaVersion = sarama.V3_9_0_0

// NewSaramaConfig returns the base client configuration.
func (c Config) NewSaramaConfig() *sarama.Config {
	sc := sarama.NewConfig()
	sc.ClientID = c.ClientID
	sc.Version = kafkaVersion
	sc.Net.DialTimeout = 3 * time.Second
	sc.Metadata.Retry.Max = 2
	sc.Metadata.Retry.Backoff = 200 * time.Millisecond
	return sc
}

// ProducerConfig is the durable producer configuration: acks=all, idempotent, murmur2 partitioning like the Java
// and Python clients (by key, or by a message's Lane when set).
func (c Config) ProducerConfig() *sarama.Config {
	sc := c.NewSaramaConfig()
	sc.Producer.RequiredAcks = sarama.WaitForAll
	sc.Producer.Idempotent = true
	sc.Net.MaxOpenRequests = 1
	sc.Producer.Retry.Max = 5
	sc.Producer.Retry.Backoff = 100 * time.Millisecond
	sc.Producer.Return.Successes = true
	sc.Producer.Return.Errors = true
	sc.Producer.MaxMessageBytes = c.MaxMessageBytes
	sc.Producer.Timeout = c.ProduceTimeout
	sc.Producer.Compression = sarama.CompressionLZ4
	sc.Producer.Partitioner = newLanePartitioner
	sc.Producer.Flush.Frequency = c.ProducerLinger
	if c.ProducerLinger > 0 {
		sc.Producer.Flush.Bytes = c.ProducerFlushBytes
	}
	return sc
}

// EnsureTopics creates the events and quarantine topics (and external topics) when missing.
func EnsureTopics(c Config) error {
	admin, err := sarama.NewClusterAdmin(c.Brokers, c.NewSaramaConfig())
	if err != nil {
		return fmt.Errorf("kafka admin at %s: %w", strings.Join(c.Brokers, ","), err)
	}
	defer func() { _ = admin.Close() }() // the topics exist or the error below says why
	existing, err := admin.ListTopics()
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	for _, t := range c.SourceTopics() {
		if err := createTopic(admin, existing, t, c.Partitions, c.Replication, nil); err != nil {
			return err
		}
	}
	forever := "-1"
	return createTopic(admin, existing, c.QuarantineTopic, c.Partitions, c.Replication, map[string]*string{"retention.ms": &forever})
}

func createTopic(admin sarama.ClusterAdmin, existing map[string]sarama.TopicDetail, name string, parts int32, repl int16, cfg map[string]*string) error {
	if _, ok := existing[name]; ok {
		return nil
	}
	err := admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: repl, ConfigEntries: cfg}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		var te *sarama.TopicError
		if errors.As(err, &te) && te.Err == sarama.ErrTopicAlreadyExists {
			return nil
		}
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

// Ping checks that a broker answers a metadata request for the events topic within ctx's deadline.
func Ping(ctx context.Context, c Config) error {
	done := make(chan error, 1)
	go func() {
		sc := c.NewSaramaConfig()
		sc.Metadata.Retry.Max = 0
		client, err := sarama.NewClient(c.Brokers, sc)
		if err != nil {
			done <- err
			return
		}
		defer func() { _ = client.Close() }() // a metadata probe: nothing to flush
		_, err = client.Partitions(c.EventsTopic)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
