package drive

import (
	"context"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// Neo4jVisibility checks Event nodes by key (graph.EventKey of the sending principal and the eventId): their
// existence means "projected".
type Neo4jVisibility struct {
	Store     *graph.Store
	Principal string // the producer principal the events were sent as ("": bare event ids)
}

var _ Visibility = (*Neo4jVisibility)(nil)

// Visible returns the ids whose Event node exists, in one read.
func (v *Neo4jVisibility) Visible(ctx context.Context, ids []string) ([]string, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = graph.EventKey(v.Principal, id)
	}
	res, err := neo4j.ExecuteQuery(ctx, v.Store.Driver,
		"UNWIND range(0, size($keys) - 1) AS i MATCH (e:"+graph.LabelEvent+" {key: $keys[i]}) RETURN $ids[i] AS id",
		map[string]any{"ids": ids, "keys": keys}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(v.Store.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("visibility of %d events: %w", len(ids), err)
	}
	out := make([]string, 0, len(res.Records))
	for _, r := range res.Records {
		if id, ok := r.Values[0].(string); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// DefaultGroup is the projector's consumer group.
const DefaultGroup = "headwater-projector"

// KafkaLag is the consumer group's lag on the topic: sum over partitions of high-water mark minus committed
// offset (a partition with nothing committed counts from its oldest offset).
type KafkaLag struct {
	Client sarama.Client
	Admin  sarama.ClusterAdmin
	Group  string
	Topic  string
}

var _ LagReader = (*KafkaLag)(nil)

// NewKafkaLag connects a client and an admin on the brokers.
func NewKafkaLag(brokers []string, group, topic string, cfg *sarama.Config) (*KafkaLag, error) {
	c, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka client %v: %w", brokers, err)
	}
	a, err := sarama.NewClusterAdminFromClient(c)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("kafka admin: %w", err)
	}
	return &KafkaLag{Client: c, Admin: a, Group: group, Topic: topic}, nil
}

// Lag reads committed offsets and high-water marks.
func (k *KafkaLag) Lag(_ context.Context) (int64, error) {
	parts, err := k.Client.Partitions(k.Topic)
	if err != nil {
		return 0, fmt.Errorf("partitions of %s: %w", k.Topic, err)
	}
	offs, err := k.Admin.ListConsumerGroupOffsets(k.Group, map[string][]int32{k.Topic: parts})
	if err != nil {
		return 0, fmt.Errorf("offsets of %s: %w", k.Group, err)
	}
	var lag int64
	for _, p := range parts {
		hw, err := k.Client.GetOffset(k.Topic, p, sarama.OffsetNewest)
		if err != nil {
			return 0, fmt.Errorf("high-water mark %s/%d: %w", k.Topic, p, err)
		}
		committed := int64(-1)
		if b := offs.GetBlock(k.Topic, p); b != nil {
			committed = b.Offset
		}
		if committed < 0 {
			if committed, err = k.Client.GetOffset(k.Topic, p, sarama.OffsetOldest); err != nil {
				return 0, fmt.Errorf("oldest offset %s/%d: %w", k.Topic, p, err)
			}
		}
		lag += max(0, hw-committed)
	}
	return lag, nil
}

// Close closes the admin (and with it the client).
func (k *KafkaLag) Close() error { return k.Admin.Close() }
