package kafkaio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// ErrUnavailable means Kafka did not acknowledge in time; the caller must not claim durability.
var ErrUnavailable = errors.New("kafka unavailable")

// Message is one record to produce.
type Message struct {
	Topic string
	Key   string
	// Lane, when set, chooses the partition instead of Key (ProducerLane); the key is still sent.
	Lane    string
	Value   []byte
	Headers map[string]string
}

// Producer produces durably: Send returns only after every message is acknowledged by all in-sync replicas.
type Producer struct {
	p       sarama.SyncProducer
	timeout time.Duration
	// inflight counts SendMessages calls still running, including those whose Send gave up waiting (context or
	// timeout): sarama panics when the producer is closed under one, so Close waits for them.
	inflight sync.WaitGroup
}

// NewProducer connects a durable producer.
func NewProducer(c Config) (*Producer, error) {
	p, err := sarama.NewSyncProducer(c.Brokers, c.ProducerConfig())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return &Producer{p: p, timeout: c.ProduceTimeout}, nil
}

// Send produces the messages and waits for their acknowledgement. Any failure is ErrUnavailable-wrapped and
// means none of the messages may be reported as durable (some may be; the projection is idempotent).
func (p *Producer) Send(ctx context.Context, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	pms := make([]*sarama.ProducerMessage, len(msgs))
	for i, m := range msgs {
		pm := &sarama.ProducerMessage{Topic: m.Topic, Value: sarama.ByteEncoder(m.Value)}
		if m.Key != "" {
			pm.Key = sarama.StringEncoder(m.Key)
		}
		if m.Lane != "" {
			pm.Metadata = partitionBy(m.Lane)
		}
		for k, v := range m.Headers {
			pm.Headers = append(pm.Headers, sarama.RecordHeader{Key: []byte(k), Value: []byte(v)})
		}
		pms[i] = pm
	}
	done := make(chan error, 1)
	p.inflight.Go(func() {
		done <- p.p.SendMessages(pms)
	})
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	case <-time.After(p.timeout):
		return fmt.Errorf("%w: no acknowledgement within %s", ErrUnavailable, p.timeout)
	}
}

// Close waits for sends still in flight (they end with sarama's own retries and timeouts), then flushes and
// closes the producer.
func (p *Producer) Close() error {
	p.inflight.Wait()
	return p.p.Close()
}

// QuarantineRecord is the value written to the quarantine topic for a rejected or poison event.
type QuarantineRecord struct {
	EventID    string          `json:"eventId,omitempty"`
	Reason     string          `json:"reason"`
	Field      string          `json:"field,omitempty"`
	Rule       string          `json:"rule,omitempty"`
	Producer   string          `json:"producer,omitempty"`  // the event's producer URI when readable
	Principal  string          `json:"principal,omitempty"` // who sent it
	Stage      string          `json:"stage"`               // gateway | consumer
	ReceivedAt time.Time       `json:"receivedAt"`
	Source     string          `json:"source,omitempty"` // gateway, kafka:<topic>@<partition>/<offset>
	Payload    json.RawMessage `json:"payload,omitempty"`
	PayloadB64 []byte          `json:"payloadBase64,omitempty"` // when the payload is not JSON
}

// RejectedEventID is the id of input rejected before it had a valid event id: "sha256:" and the hex digest of the
// bytes received. The gateway answers it in the 4xx and the consumer uses it for invalid direct-Kafka messages,
// so a producer can ask event(id) about either.
func RejectedEventID(raw []byte) string {
	h := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(h[:])
}

// QuarantineMessage builds the message for a record; raw is stored as JSON when it is JSON, base64 otherwise.
func QuarantineMessage(topic string, r QuarantineRecord, raw []byte) Message {
	if json.Valid(raw) {
		r.Payload = raw
	} else {
		r.PayloadB64 = raw
	}
	b, _ := json.Marshal(r)
	return Message{Topic: topic, Key: "quarantine:" + r.EventID, Value: b}
}
