package gateway_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Submit (declared lineage, ADR 0044) is all or nothing: with one event refused, the valid one is withheld and
// only the refused one's quarantine copy is sent; a submission with no refusal is durable with the batch
// endpoint's headers.
func TestSubmitIsAllOrNothing(t *testing.T) {
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
	g := gateway.New(defaults(), kc, dec, prod, producecheck.New(nil, nil), gateway.NewMetrics(prometheus.NewRegistry()),
		slog.New(slog.DiscardHandler), time.Now)
	ctx := authz.WithPrincipal(context.Background(), authz.Principal{Subject: "producer-decl", Kind: "producer"})

	first, second := uuid.NewString(), uuid.NewString()
	bad := strings.Replace(runEvent(uuid.NewString(), "START"), `"runId":"`, `"runId":"not-a-uuid-`, 1)
	sub, err := g.Submit(ctx, [][]byte{[]byte(runEvent(first, "START")), []byte(bad)})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Accepted || sub.Results[0].Status != "withheld" || sub.Results[1].Status != "rejected" ||
		sub.Results[1].Error.Field != "run.runId" {
		t.Fatalf("one refusal: %+v", sub)
	}
	testenv.ReadTopic(t, kc, kc.QuarantineTopic, 1, 10*time.Second)

	sub, err = g.Submit(ctx, [][]byte{[]byte(runEvent(second, "START"))})
	if err != nil || !sub.Accepted || sub.Results[0].Status != "accepted" {
		t.Fatalf("no refusal: %+v %v", sub, err)
	}
	// both events share one partition (same run key and lane): the first message is the first event if it was sent
	m := testenv.ReadTopic(t, kc, kc.EventsTopic, 1, 10*time.Second)[0]
	if !strings.Contains(string(m.Value), second) {
		t.Fatalf("the withheld event was sent: %s", m.Value)
	}
	hdr := map[string]string{}
	for _, h := range m.Headers {
		hdr[string(h.Key)] = string(h.Value)
	}
	if hdr[kafkaio.HeaderPrincipal] != "producer-decl" || hdr[kafkaio.HeaderEventID] != sub.Results[0].EventID ||
		hdr[kafkaio.HeaderDigest] == "" || hdr[kafkaio.HeaderSource] != kafkaio.SourceGateway {
		t.Fatalf("headers %v", hdr)
	}
}
