package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// DefaultTopic is the raw-event topic the gateway writes and the projector consumes.
const DefaultTopic = "headwater.events"

// KafkaConfig says where events go.
type KafkaConfig struct {
	Brokers     []string
	Topic       string
	Partitions  int32 // used only when CreateTopic is set and the topic does not exist
	CreateTopic bool
}

// Kafka produces events with acks=all and idempotence, keyed like the OpenLineage Kafka transport
// ("run:{root or parent or job namespace/name}") and partitioned with murmur2, as the Java client does.
type Kafka struct {
	p     sarama.SyncProducer
	topic string
}

var _ Sink = (*Kafka)(nil)

// ProducerConfig is the sarama configuration the sink uses.
func ProducerConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = sarama.V3_9_0_0
	c.ClientID = "hwload"
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Idempotent = true
	c.Net.MaxOpenRequests = 1
	c.Producer.Return.Successes = true
	c.Producer.Partitioner = sarama.NewMurmur2Partitioner
	c.Producer.MaxMessageBytes = 4 << 20
	return c
}

// NewKafka connects a producer, creating the topic first when asked.
func NewKafka(c KafkaConfig) (*Kafka, error) {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	cfg := ProducerConfig()
	if c.CreateTopic {
		if err := EnsureTopic(c.Brokers, c.Topic, c.Partitions, cfg); err != nil {
			return nil, err
		}
	}
	p, err := sarama.NewSyncProducer(c.Brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka producer %v: %w", c.Brokers, err)
	}
	return &Kafka{p: p, topic: c.Topic}, nil
}

// EnsureTopic creates the topic (replication factor 1) unless it exists.
func EnsureTopic(brokers []string, topic string, partitions int32, cfg *sarama.Config) error {
	admin, err := sarama.NewClusterAdmin(brokers, cfg)
	if err != nil {
		return fmt.Errorf("kafka admin %v: %w", brokers, err)
	}
	defer func() { _ = admin.Close() }()
	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: max(1, partitions), ReplicationFactor: 1}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		var te *sarama.TopicError
		if !errors.As(err, &te) || !errors.Is(te.Err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	return nil
}

// Send produces the events as one batch and waits for every acknowledgement.
func (k *Kafka) Send(_ context.Context, events []gen.Event) ([]Result, error) {
	msgs := make([]*sarama.ProducerMessage, len(events))
	for i, ev := range events {
		msgs[i] = &sarama.ProducerMessage{Topic: k.topic, Key: sarama.StringEncoder(ev.Key),
			Value: sarama.ByteEncoder(ev.Body), Metadata: i}
	}
	out := make([]Result, len(events))
	for i := range out {
		out[i] = Result{Attempts: 1}
	}
	err := k.p.SendMessages(msgs)
	var perr sarama.ProducerErrors
	switch {
	case err == nil:
	case errors.As(err, &perr):
		for _, pe := range perr {
			out[pe.Msg.Metadata.(int)].Err = pe.Err
		}
	default:
		return nil, fmt.Errorf("produce to %s: %w", k.topic, err)
	}
	return out, nil
}

// Close closes the producer.
func (k *Kafka) Close() error { return k.p.Close() }
