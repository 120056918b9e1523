package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// TestEachProducersEventsShareOnePartition (issue 13 item 8): the gateway partitions by producer principal, so
// one producer's backlog never sits in front of another producer's events; the key stays the OpenLineage
// transport's key.
func TestEachProducersEventsShareOnePartition(t *testing.T) {
	f := newFixture(t, defaults())
	jobs := []string{"job.a", "job.b", "job.c", "job.d", "job.e", "job.f"}
	for _, who := range []string{"a", "b"} {
		for _, job := range jobs {
			ev := strings.Replace(runEvent(uuid.NewString(), "START"), `"name":"job.a"`, `"name":"`+job+`"`, 1)
			if code, _, body := post(t, f.srv.URL+"/api/v1/lineage", ev, map[string]string{"X-Test-Principal": who}); code != http.StatusAccepted {
				t.Fatalf("got %d %v", code, body)
			}
		}
	}
	msgs := testenv.ReadTopic(t, f.kc, f.kc.EventsTopic, 2*len(jobs), 10*time.Second)
	for _, m := range msgs {
		principal := ""
		for _, h := range m.Headers {
			if string(h.Key) == kafkaio.HeaderPrincipal {
				principal = string(h.Value)
			}
		}
		want := kafkaio.PartitionOf("", kafkaio.ProducerLane(principal), f.kc.Partitions)
		if m.Partition != want {
			t.Errorf("%s's event with key %s on partition %d, want its producer's partition %d", principal, m.Key, m.Partition, want)
		}
		if !strings.HasPrefix(string(m.Key), "run:gw-test/job.") {
			t.Errorf("key %q: want the OpenLineage transport's run:{job} key", m.Key)
		}
	}
}
