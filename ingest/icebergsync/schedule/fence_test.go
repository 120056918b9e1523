package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/testenv"
)

// stallable is the real lease store of a process that can stall: once stalled is closed, its lease calls never
// reach Neo4j (each waits for its deadline), as when the process is paused (SIGSTOP, a long GC pause).
type stallable struct {
	Neo4jLeases
	stalled chan struct{}
}

func (s stallable) Acquire(ctx context.Context, catalog, holder string, ttl time.Duration) (Lease, error) {
	select {
	case <-s.stalled:
		<-ctx.Done()
		return Lease{}, ctx.Err()
	default:
		return s.Neo4jLeases.Acquire(ctx, catalog, holder, ttl)
	}
}

// messages is how many messages the topic holds (every partition's newest offset, from a fresh topic).
func messages(t *testing.T, kc kafkaio.Config, topic string) int64 {
	t.Helper()
	client, err := sarama.NewClient(kc.Brokers, kc.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	parts, err := client.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range parts {
		off, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		n += off
	}
	return n
}

// gathered is the value of the unlabelled counter name in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}

// ADR 0087 with real Neo4j leases, a real gateway and real Kafka: holder a takes the lease and stalls mid-sync
// (its renewals stop reaching Neo4j) past the TTL; b takes the lease over (a new token) and publishes; then a
// resumes and submits its late batch before noticing the loss. The gateway checks a's lease right before
// producing and refuses the batch: an error naming the catalog and the lease (ErrFenced), counted in
// headwater_catalog_sync_fenced_total and headwater_gateway_fenced_total; nothing of it reaches Kafka (no event,
// no quarantine copy); b's batch is there.
func TestAStaleHoldersLateBatchIsRefused(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	prod, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prod.Close() })
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	greg := prometheus.NewRegistry()
	gw := gateway.New(gateway.Config{MaxBodyBytes: 5 << 20, MaxBatchEvents: 1000, RatePerSecond: 1000, RateBurst: 1000, RecentIDs: 100,
		MaxInFlightBytes: 64 << 20}, kc, dec, prod, producecheck.New(nil, nil), gateway.NewMetrics(greg), quiet(), time.Now)
	cat := "fence-" + testenv.Token(4)
	f := File{LeaseTTL: 2 * time.Second, Backoff: Backoff{Initial: time.Minute, Max: time.Minute},
		Catalogs: []Catalog{{Name: cat, Interval: time.Hour, Timeout: time.Minute}}}
	leases := Neo4jLeases{Store: store}
	principal := authz.Principal{Subject: "catalog-sync-" + cat, Kind: "service"}
	event := func(name string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"eventTime": time.Now().UTC().Format(time.RFC3339Nano), "producer": icebergsync.Producer,
			"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
			"dataset":   map[string]any{"namespace": "file", "name": "/fence/" + cat + "/" + name}})
		return b
	}
	publish := func(ctx context.Context, h Held, name string) error {
		_, err := icebergsync.SubmitPublisher{Sub: gw, Principal: principal, Fence: LeaseFence{Leases: leases, Held: h}}.
			Publish(ctx, []json.RawMessage{event(name)})
		return err
	}

	stalled, bSynced := make(chan struct{}), make(chan struct{})
	var once sync.Once
	heldA, heldB := make(chan Held, 1), make(chan Held, 1)
	lateErr := make(chan error, 1)
	syncA := func(ctx context.Context, _ Catalog, h Held) (Outcome, error) {
		heldA <- h
		close(stalled) // a stalls: its renewals no longer reach Neo4j ...
		<-bSynced      // ... until b has taken the lease over and published
		// a resumes and sends its batch before its own fence noticed (the pause froze that too)
		err := publish(context.WithoutCancel(ctx), h, "late-from-a")
		lateErr <- err
		return Outcome{}, err
	}
	syncB := func(ctx context.Context, _ Catalog, h Held) (Outcome, error) {
		err := publish(ctx, h, "from-b")
		once.Do(func() { heldB <- h; close(bSynced) })
		return Outcome{Events: 1}, err
	}
	mA := NewMetrics(prometheus.NewRegistry())
	a := New(f, stallable{Neo4jLeases: leases, stalled: stalled}, syncA, "a-"+cat, mA, quiet(), time.Now)
	b := New(f, leases, syncB, "b-"+cat, NewMetrics(nil), quiet(), time.Now)
	ctx, stop := context.WithTimeout(t.Context(), 90*time.Second)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	hA := <-heldA // a holds the lease and is syncing
	wg.Go(func() { _ = b.Run(ctx) })

	var err2 error
	select {
	case err2 = <-lateErr:
	case <-ctx.Done():
		t.Fatal("a's late batch was never sent (b never took the lease over?)")
	}
	hB := <-heldB
	if hB.Token <= hA.Token {
		t.Errorf("b took the lease over with token %d, a held token %d: a takeover must grow the token", hB.Token, hA.Token)
	}
	if !errors.Is(err2, ErrFenced) || !errors.Is(err2, gateway.ErrFenced) || !strings.Contains(err2.Error(), "catalog "+cat) ||
		!strings.Contains(err2.Error(), "token") {
		t.Fatalf("a's late batch: %v, want ErrFenced naming the catalog and the lease", err2)
	}
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(mA.fenced.WithLabelValues(cat)) != 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := testutil.ToFloat64(mA.fenced.WithLabelValues(cat)); got != 1 {
		t.Errorf("headwater_catalog_sync_fenced_total{catalog=%q} = %v, want 1", cat, got)
	}
	if got := gathered(t, greg, "headwater_gateway_fenced_total"); got != 1 {
		t.Errorf("headwater_gateway_fenced_total = %v, want 1", got)
	}
	stop()
	wg.Wait()
	if n := messages(t, kc, kc.QuarantineTopic); n != 0 {
		t.Errorf("the quarantine topic holds %d messages, want none", n)
	}
	if n := messages(t, kc, kc.EventsTopic); n < 1 {
		t.Fatalf("b's batch is not in Kafka")
	}
	for _, m := range testenv.ReadTopic(t, kc, kc.EventsTopic, int(messages(t, kc, kc.EventsTopic)), 20*time.Second) {
		if strings.Contains(string(m.Value), "late-from-a") {
			t.Errorf("a's late batch reached Kafka: %s", m.Value)
		}
	}
}
