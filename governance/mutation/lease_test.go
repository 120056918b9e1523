package mutation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance/lease"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// The mutations under the dataset's lease (ADR 0081), with the real Redis lease and a fake event status.

// fakeEvents answers an event PROJECTED once projected says so.
type fakeEvents struct {
	mu        sync.Mutex
	projected bool
	asked     []string
}

func (f *fakeEvents) EventStatus(_ context.Context, key string) (graph.EventStatusRow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, key)
	return graph.EventStatusRow{Projected: f.projected}, nil
}

func leasedService(t *testing.T, ev *fakeEvents, ttl, wait time.Duration) (*Service, *fakeSubmitter, *lease.Redis) {
	t.Helper()
	testenv.Servers(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s, sub := service(fakePolicy{authz.PrivManageTags: true}, graph.DatasetRow{}, "")
	l := lease.New(rdb, ttl, wait)
	s.WithLease(l, ev)
	s.wait = 300 * time.Millisecond
	s.cat = keyed{s.cat.(fakeCatalog), t.Name() + time.Now().Format(".150405.000000000")} // a lease key of this run
	return s, sub, l
}

// keyed is the fake catalog with a dataset key of its own, so runs do not share a lease.
type keyed struct {
	fakeCatalog
	key string
}

func (k keyed) FindDataset(ctx context.Context, n, nm string, t int64) (graph.DatasetRow, error) {
	row, err := k.fakeCatalog.FindDataset(ctx, n, nm, t)
	row.Key = k.key
	return row, err
}

func (k keyed) FindField(ctx context.Context, ref api.FieldRef, t int64) (graph.FieldRow, graph.DatasetRow, error) {
	f, row, err := k.fakeCatalog.FindField(ctx, ref, t)
	row.Key = k.key
	return f, row, err
}

// TestLeaseReleasedOnceProjected: a mutation whose event is projected releases the lease (the next one goes at
// once), having asked the event's status under the caller's event key.
func TestLeaseReleasedOnceProjected(t *testing.T) {
	ev := &fakeEvents{projected: true}
	s, sub, _ := leasedService(t, ev, 5*time.Second, 100*time.Millisecond)
	for range 2 {
		if _, err := s.SetTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if len(sub.sent) != 2 || len(ev.asked) == 0 || ev.asked[0] != graph.EventKey("alice", "ev-1") {
		t.Fatalf("sent %d, asked %v", len(sub.sent), ev.asked)
	}
}

// TestLeaseKeptWhileNotProjected: a mutation whose event is not projected within the wait answers accepted but
// keeps the lease: the next mutation on the dataset waits LeaseWait and is UNAVAILABLE naming the dataset, with
// nothing sent; after the lease's expiry it goes.
func TestLeaseKeptWhileNotProjected(t *testing.T) {
	ev := &fakeEvents{}
	s, sub, _ := leasedService(t, ev, 800*time.Millisecond, 100*time.Millisecond)
	if a, err := s.SetTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, ""); err != nil || a.EventID != "ev-1" {
		t.Fatalf("%+v %v", a, err)
	}
	_, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, "masked")
	if !is(err, api.ErrUnavailable) || !errors.Is(err, lease.ErrBusy) ||
		!strings.Contains(err.Error(), "another governance mutation on s3://lake crm.customers is still being projected") ||
		!strings.Contains(err.Error(), "retry") || len(sub.sent) != 1 {
		t.Fatalf("a mutation while the lease is kept: %v (sent %d)", err, len(sub.sent))
	}
	time.Sleep(800 * time.Millisecond)
	ev.mu.Lock()
	ev.projected = true
	ev.mu.Unlock()
	if _, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, "masked"); err != nil {
		t.Fatalf("after the expiry: %v", err)
	}
}

// TestLeaseWithoutRedisRefuses: Redis unreachable refuses the mutation UNAVAILABLE, nothing sent.
func TestLeaseWithoutRedisRefuses(t *testing.T) {
	s, sub := service(fakePolicy{authz.PrivManageTags: true}, graph.DatasetRow{}, "")
	s.WithLease(lease.New(nil, time.Second, time.Second), &fakeEvents{})
	_, err := s.SetTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, "")
	if !is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "per-dataset lease (Redis) is unavailable") || len(sub.sent) != 0 {
		t.Fatalf("%v (sent %d)", err, len(sub.sent))
	}
}
