// Package auditkafka keeps the audit stream in Kafka: the durable writer (one JSON record per audit event, acks=all,
// keyed by principal) and the bounded backward reader of audit pages. It is the only authz package that imports
// sarama.
package auditkafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// messageSender is the durable producer the Kafka auditor writes through (kafkaio.Producer: acks=all,
// idempotent, sarama SyncProducer).
type messageSender interface {
	Send(ctx context.Context, msgs []kafkaio.Message) error
}

var _ messageSender = (*kafkaio.Producer)(nil)

// KafkaAuditor writes one JSON record per audit event to the audit topic, keyed by principal.
type KafkaAuditor struct {
	send  messageSender
	topic string
	close func() error
}

var _ audit.Auditor = (*KafkaAuditor)(nil)

// NewKafkaAuditor creates the audit topic when missing and connects a durable producer.
func NewKafkaAuditor(c kafkaio.Config, topic string) (*KafkaAuditor, error) {
	if err := EnsureAuditTopic(c, topic); err != nil {
		return nil, err
	}
	p, err := kafkaio.NewProducer(c)
	if err != nil {
		return nil, err
	}
	return &KafkaAuditor{send: p, topic: topic, close: p.Close}, nil
}

// Audit implements Auditor; it returns only after Kafka acknowledged the record.
func (k *KafkaAuditor) Audit(ctx context.Context, r audit.AuditRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	if err := k.send.Send(ctx, []kafkaio.Message{{Topic: k.topic, Key: "audit:" + r.Principal, Value: b}}); err != nil {
		return fmt.Errorf("write audit record: %w", err)
	}
	return nil
}

// Close flushes and closes the producer.
func (k *KafkaAuditor) Close() error { return k.close() }

// EnsureAuditTopic creates the audit topic (retention unlimited: the stream is append-only) when missing.
func EnsureAuditTopic(c kafkaio.Config, topic string) error {
	if topic == "" {
		return fmt.Errorf("%w: audit topic must not be empty", authz.ErrInvalid)
	}
	admin, err := sarama.NewClusterAdmin(c.Brokers, c.NewSaramaConfig())
	if err != nil {
		return fmt.Errorf("kafka admin at %s: %w", strings.Join(c.Brokers, ","), err)
	}
	defer func() { _ = admin.Close() }() // the topic exists or the error below says why
	forever, policy := "-1", "delete"
	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: c.Partitions, ReplicationFactor: c.Replication,
		ConfigEntries: map[string]*string{"retention.ms": &forever, "cleanup.policy": &policy}}, false)
	var te *sarama.TopicError
	if err == nil || errors.Is(err, sarama.ErrTopicAlreadyExists) || (errors.As(err, &te) && te.Err == sarama.ErrTopicAlreadyExists) {
		return nil
	}
	return fmt.Errorf("create audit topic %s: %w", topic, err)
}
