package kafkaio_test

import (
	"context"
	"errors"
	"testing"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// A Send that gives up waiting (its context ends) leaves sarama's SendMessages running; closing the producer
// right after must wait for it, not close the producer under it (sarama then panics with "send on closed
// channel" in its own goroutine, which took a whole test binary down in CI).
func TestCloseAfterAnAbandonedSendDoesNotPanic(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	for range 20 {
		p, err := kafkaio.NewProducer(kc)
		if err != nil {
			t.Fatal(err)
		}
		msgs := make([]kafkaio.Message, 200)
		for i := range msgs {
			msgs[i] = kafkaio.Message{Topic: kc.EventsTopic, Key: "k", Value: make([]byte, 1024)}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.Send(ctx, msgs); err != nil && !errors.Is(err, kafkaio.ErrUnavailable) {
			t.Fatalf("send: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	}
}
