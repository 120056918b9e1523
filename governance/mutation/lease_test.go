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
// once) and answers Projected, having asked the event's status under the caller's event key of the id it sent.
func TestLeaseReleasedOnceProjected(t *testing.T) {
	ev := &fakeEvents{projected: true}
	s, sub, _ := leasedService(t, ev, 5*time.Second, 100*time.Millisecond)
	for range 2 {
		a, err := s.SetTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, "")
		if err != nil || !a.Projected {
			t.Fatalf("%+v %v", a, err)
		}
		if ev.asked[len(ev.asked)-1] != graph.EventKey("alice", a.EventID) || !strings.Contains(string(sub.sent[len(sub.sent)-1]), `"eventId":"`+a.EventID+`"`) {
			t.Fatalf("asked %q for the event %s", ev.asked, sub.sent[len(sub.sent)-1])
		}
	}
	if len(sub.sent) != 2 {
		t.Fatalf("sent %d", len(sub.sent))
	}
}

// TestLeasePendingUntilProjected (ADR 0088): a mutation whose event is not projected within the wait answers
// accepted, not projected, and leaves the lease pending on its event: the next mutation on the dataset waits
// LeaseWait and is UNAVAILABLE naming the dataset, with nothing sent, also after the lease's ttl has passed (the
// ADR 0081 lease lapsed there and the next one read a state without the first); once the event is projected the
// next one takes the lease over and goes.
func TestLeasePendingUntilProjected(t *testing.T) {
	ev := &fakeEvents{}
	s, sub, _ := leasedService(t, ev, 300*time.Millisecond, 100*time.Millisecond)
	a, err := s.SetTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, "")
	if err != nil || a.EventID == "" || a.Projected {
		t.Fatalf("%+v %v", a, err)
	}
	for _, after := range []string{"at once", "after the ttl"} {
		_, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, "masked")
		if !is(err, api.ErrUnavailable) || !errors.Is(err, lease.ErrBusy) ||
			!strings.Contains(err.Error(), "another governance mutation on s3://lake crm.customers is still being projected") ||
			!strings.Contains(err.Error(), "retry") || len(sub.sent) != 1 {
			t.Fatalf("a mutation while the first is not projected (%s): %v (sent %d)", after, err, len(sub.sent))
		}
		time.Sleep(400 * time.Millisecond)
	}
	ev.mu.Lock()
	ev.projected = true
	ev.mu.Unlock()
	if b, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, "masked"); err != nil || !b.Projected {
		t.Fatalf("once the first is projected: %+v %v", b, err)
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
