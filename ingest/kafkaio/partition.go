package kafkaio

import "github.com/IBM/sarama"

// ProducerLane is the partitioning value of events a principal sends through the gateway: every event of one
// producer lands on one partition of the events topic, so a producer's backlog queues behind itself and not in
// front of other producers' events (issue 13 item 8). The message key stays the OpenLineage transport's key.
func ProducerLane(principal string) string { return "producer:" + principal }

// partitionBy, as a ProducerMessage's Metadata, partitions the message by its value instead of its key.
type partitionBy string

// lanePartitioner partitions by a message's partitionBy metadata when set, else by its key (murmur2 both).
type lanePartitioner struct{ byHash sarama.Partitioner }

func newLanePartitioner(topic string) sarama.Partitioner {
	return lanePartitioner{byHash: sarama.NewCustomPartitioner(sarama.WithAbsFirst(), sarama.WithCustomHashFunction(NewMurmur2))(topic)}
}

func (p lanePartitioner) Partition(m *sarama.ProducerMessage, n int32) (int32, error) {
	if by, ok := m.Metadata.(partitionBy); ok && by != "" {
		return p.byHash.Partition(&sarama.ProducerMessage{Topic: m.Topic, Key: sarama.StringEncoder(by)}, n)
	}
	return p.byHash.Partition(m, n)
}

func (lanePartitioner) RequiresConsistency() bool { return true }

// PartitionOf is the partition of n a message with this key and lane (lane may be empty) is produced to.
func PartitionOf(key, lane string, n int32) int32 {
	m := &sarama.ProducerMessage{Key: sarama.StringEncoder(key)}
	if lane != "" {
		m.Metadata = partitionBy(lane)
	}
	p, _ := newLanePartitioner("").Partition(m, n)
	return p
}
