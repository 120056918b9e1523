package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Three projector instances share one consumer group: one starts alone, two join while it holds unsaved fold
// state (a rebalance with write-behind in flight), and the first leaves by SIGTERM mid-stream (its session end
// saves the fold state of the partitions it gives up). The events go straight to Kafka under one key per run, so
// they spread over the topic's three partitions, and every instance writes the same hub datasets. Once the
// stream is projected the other two stop too (their sessions end and save), and the graph equals the single
// in-process projection of each event once, every property included: an instance whose save was refused
// because another wrote the dataset from a snapshot without its unsaved observations refolds them
// (docs/adr/0054-refused-saves-refold-the-holders-changes.md). The instances that stayed both projected a share.
func TestScaleOutThreeProjectorsShareThePartitionsAndMatchOne(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 30)
	env := []string{"HEADWATER_CONSUMER_BATCH_SIZE=4", "HEADWATER_CONSUMER_TX_MAX_EVENTS=4", "HEADWATER_CONSUMER_BATCH_WAIT=20ms"}
	arch := filepath.Join(t.TempDir(), "archive")
	metrics := []string{freePort(t), freePort(t), freePort(t)}
	first := start(t, kc, env, "ingest", "--metrics-addr="+metrics[0], "--archive-dir="+arch)
	half := len(events) / 2
	produceKeyed(t, kc, events[:half], 0)
	waitSome(t, ids[:half], 4)
	var rest []*proc
	for _, m := range metrics[1:] {
		rest = append(rest, start(t, kc, env, "ingest", "--metrics-addr="+m, "--archive-dir="+arch))
	}
	// the second half goes out once all three hold partitions: else a fast first projector drains it alone
	waitGroupMembers(t, kc, 3, faultTimeout)
	produceKeyed(t, kc, events[half:], half)
	time.Sleep(3 * time.Second) // the group rebalances with batches and unsaved fold state in flight
	first.signal(syscall.SIGTERM)
	if err := first.wait(t, 60*time.Second); err != nil {
		t.Fatalf("SIGTERM must stop the first projector cleanly: %v", err)
	}
	waitEvents(t, store, ids, faultTimeout)
	waitCommitted(t, kc, faultTimeout)
	// the two that stayed took the stream over from the first; which of them got events depends on how the runs'
	// keys fell on the partitions each was given, so only their sum is asserted
	shared := 0.0
	for _, m := range metrics[1:] {
		n := metric(t, m, "headwater_consumer_events_total")
		t.Logf("the projector on %s projected %v events", m, n)
		shared += n
	}
	if shared == 0 {
		t.Errorf("the projectors that joined projected nothing: the partitions were not shared")
	}
	// Their sessions end too: each saves what it holds unsaved (write-behind), refolding what another instance's
	// write made it refuse.
	for _, p := range rest {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range rest {
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Fatalf("SIGTERM must stop the projectors that stayed cleanly: %v", err)
		}
	}
	got := dump(t, store, s)
	if want := reference(t, store, s, events, ids, ""); got != want {
		t.Fatalf("three projectors with a rebalance differ from one projection of each event:\n%s", diff(got, want))
	}
}

// waitGroupMembers waits until the consumer group is stable with n members that each hold a partition.
func waitGroupMembers(t *testing.T, kc kafkaio.Config, n int, timeout time.Duration) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(kc.Brokers, kc.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(timeout)
	for {
		groups, err := admin.DescribeConsumerGroups([]string{kc.ConsumerGroup})
		if err == nil && len(groups) == 1 && groups[0].State == "Stable" && len(groups[0].Members) == n {
			holding := 0
			for _, m := range groups[0].Members {
				if a, err := m.GetMemberAssignment(); err == nil && a != nil {
					for _, parts := range a.Topics {
						if len(parts) > 0 {
							holding++
							break
						}
					}
				}
			}
			if holding == n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer group %s did not reach %d members holding partitions within %s", kc.ConsumerGroup, n, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// produceKeyed writes the events straight to the events topic, one key per run (events come in START/terminal
// pairs), so the runs spread over the partitions.
func produceKeyed(t *testing.T, kc kafkaio.Config, events [][]byte, offset int) {
	t.Helper()
	p, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msgs := make([]kafkaio.Message, len(events))
	for i, e := range events {
		msgs[i] = kafkaio.Message{Topic: kc.EventsTopic, Key: fmt.Sprintf("run:e2e-%d", (offset+i)/2), Value: e}
	}
	if err := p.Send(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
}

// Two API instances share one Redis: B answers (and caches) a lineage query, an edge is written through A's gateway
// and projected by A's consumer, and B's next answer has it at once: B's cached entry is validated against the node
// generations A's projector bumped, so a write seen through one instance is never served stale by the other.
func TestScaleOutTwoAPIInstancesShareRedisWithoutStaleAnswers(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	redisAddr := freePort(t)
	startRedis(t, redisAddr)
	apiA, apiB, metricsB := freePort(t), freePort(t), freePort(t)
	// A loaded machine (CI runs packages side by side) must not turn a slow Redis reply into a miss: this test is
	// about stale answers, not the answer-time bound the 200 ms default keeps.
	env := []string{"HEADWATER_REDIS_ADDR=" + redisAddr, "HEADWATER_REDIS_OP_TIMEOUT=5s"}
	start(t, kc, env, "serve", "--http-addr="+apiA, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	start(t, kc, env, "serve", "--no-consumer", "--http-addr="+apiB, "--http-metrics-addr="+metricsB)
	waitHTTP(t, "http://"+apiA+"/readyz", 60*time.Second)
	waitHTTP(t, "http://"+apiB+"/readyz", 60*time.Second)
	events, ids := pipelineEvents(t, s, 1)
	postBatch(t, apiA, events)
	waitEvents(t, store, ids, projectTimeout)
	// The projector bumps the generations after its commit: until the offsets are committed a bump may still land
	// between B's two queries and rightly invalidate the first answer's entry.
	waitCommitted(t, kc, projectTimeout)
	before := downstream(t, apiB, s)
	if again := downstream(t, apiB, s); fmt.Sprint(again) != fmt.Sprint(before) {
		t.Fatalf("B's repeated answer differs: %v vs %v", again, before)
	}
	if hits := metric(t, metricsB, "headwater_cache_hits_total"); hits == 0 {
		t.Fatal("B's repeated query was not served from the shared cache")
	}
	extra, extraIDs := extraEdge(t, s)
	postBatch(t, apiA, extra)
	waitEvents(t, store, extraIDs, projectTimeout)
	waitCommitted(t, kc, projectTimeout) // offsets are committed after the generation bump: the write is visible
	after := downstream(t, apiB, s)
	if !contains(after, "mart/extra") || len(after) != len(before)+1 {
		t.Fatalf("B served a stale answer after A's write was projected: before %v, now %v", before, after)
	}
	if a := downstream(t, apiA, s); fmt.Sprint(a) != fmt.Sprint(after) {
		t.Fatalf("the two instances disagree: A %v, B %v", a, after)
	}
}
