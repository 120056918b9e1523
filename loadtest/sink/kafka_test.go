package sink

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// TestKafkaKeysLandOnMurmur2Partitions produces to a fresh topic and checks each key's partition is the one
// the Java client's murmur2 partitioner picks.
func TestKafkaKeysLandOnMurmur2Partitions(t *testing.T) {
	testenv.Servers(t)
	topic := "hwload-test-" + testenv.Token(6)
	k, err := NewKafka(KafkaConfig{Brokers: testenv.KafkaBrokers(), Topic: topic, CreateTopic: true, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.Close() }()
	evs := []gen.Event{{Body: []byte(`{}`), Key: "run:ns/a"}, {Body: []byte(`{}`), Key: "run:ns/b"}, {Body: []byte(`{}`), Key: "run:ns/c"}}
	res, err := k.Send(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("event %d: %v", i, r.Err)
		}
	}
	client, err := sarama.NewClient(testenv.KafkaBrokers(), ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	c, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	p := sarama.NewMurmur2Partitioner(topic)
	want := map[string]int32{}
	for _, ev := range evs {
		part, _ := p.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder(ev.Key)}, 4)
		want[ev.Key] = part
	}
	got := map[string]int32{}
	for part := range int32(4) {
		pc, err := c.ConsumePartition(topic, part, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		hw, err := client.GetOffset(topic, part, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		for range hw {
			select {
			case m := <-pc.Messages():
				got[string(m.Key)] = part
			case <-time.After(10 * time.Second):
				t.Fatalf("partition %d: timed out", part)
			}
		}
		_ = pc.Close()
	}
	if len(got) != len(want) {
		t.Fatalf("read back %d keys, want %d", len(got), len(want))
	}
	for key, part := range want {
		if got[key] != part {
			t.Errorf("key %s on partition %d, want %d", key, got[key], part)
		}
	}
}
