package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/rules"
)

func (h *handler) isQuarantineTopic(topic string) bool { return topic == h.kc.QuarantineTopic }

// decoded is one message turned into an envelope (or a quarantine record).
type decoded struct {
	env project.Envelope
	rec archive.Record
	bad *kafkaio.Message
}

// decode validates a message the same way the gateway does; direct Kafka producers get the same rules, and
// events on an external topic must be within the produce grants of the principal the topic is bound to.
func (h *handler) decode(ctx context.Context, m *sarama.ConsumerMessage) decoded {
	hdr := headers(m)
	received := m.Timestamp.UTC()
	if t, err := time.Parse(time.RFC3339Nano, hdr[kafkaio.HeaderReceivedAt]); err == nil {
		received = t
	}
	principal := hdr[kafkaio.HeaderPrincipal]
	source := hdr[kafkaio.HeaderSource]
	external := source == ""
	if external {
		source = "kafka:" + m.Topic
		principal = h.kc.ExternalTopics[m.Topic]
	}
	quarantine := func(reason, field, rule string) decoded {
		rec := kafkaio.QuarantineRecord{EventID: hdr[kafkaio.HeaderEventID], Reason: reason, Field: field, Rule: rule,
			Principal: principal, Stage: "consumer", ReceivedAt: received, Source: sourceRef(m)}
		if rec.EventID == "" {
			rec.EventID = kafkaio.RejectedEventID(m.Value)
		}
		q := kafkaio.QuarantineMessage(h.kc.QuarantineTopic, rec, m.Value)
		return decoded{bad: &q}
	}
	decode := h.d.Decoder.Decode
	if source == kafkaio.SourceGateway && hdr[kafkaio.HeaderEventID] != "" {
		decode = h.d.Decoder.DecodeValidated // validated by the gateway before it produced the message
	}
	ev, err := decode(m.Value)
	if err != nil {
		if ve, ok := errors.AsType[*olevent.ValidationError](err); ok {
			return quarantine(ve.Message, ve.Field, ve.Rule)
		}
		return quarantine(err.Error(), "", rules.Invalid)
	}
	owned, d := h.ownership(ctx, m.Topic, external, hdr, principal, &ev)
	if d != nil {
		return quarantine(d.Error(), d.Field, rules.ProducePermission)
	}
	if d := hdr[kafkaio.HeaderDigest]; d != "" && source == kafkaio.SourceGateway {
		ev.SetContentDigest(d) // computed by the gateway from the same bytes
	}
	olevent.ResolveID(hdr[kafkaio.HeaderEventID], &ev)
	return decoded{
		env: project.Envelope{Event: ev, ReceivedAt: received, Principal: principal, Source: source, Owned: owned,
			Pos: foldstate.Pos{Part: project.PartitionName(m.Topic, m.Partition), Offset: m.Offset}},
		rec: archive.Record{EventID: ev.ID, ReceivedAt: received, Principal: principal, Source: source,
			Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Event: json.RawMessage(m.Value), Owned: owned},
	}
}

// ownership is the set of namespaces the event may change (ADR 0018): the gateway's hw-owned header when it set
// one, else decided now from the principal's grants. Events on topics bound to a principal and re-driven events
// are checked like the gateway checks them (a denial quarantines); the gateway's own topic is internal (only the
// gateway, which checked already, and `headwater redrive` may write it: restrict it with Kafka ACLs), so a
// gateway message without the header (written before the header existed) only gets its set.
func (h *handler) ownership(ctx context.Context, topic string, external bool, hdr map[string]string, principal string,
	ev *olevent.Event) (ownership.Set, *producecheck.Denial) {
	if v, ok := hdr[kafkaio.HeaderOwned]; ok && !external {
		if s, err := ownership.FromHeader(v); err == nil {
			return s, nil
		}
	}
	_, bound := h.kc.ExternalTopics[topic]
	bound = bound && external
	if h.d.Guard == nil || (principal == "" && !bound) {
		return ownership.All(), nil
	}
	owned, d := h.d.Guard.Check(ctx, authz.Principal{Subject: principal, Kind: "producer"}, ev)
	if bound || hdr[kafkaio.HeaderSource] == kafkaio.SourceRedrive {
		return owned, d
	}
	return owned, nil
}

// prepared is a batch decoded and archived, waiting for its turn in Neo4j.
type prepared struct {
	envs []project.Envelope
	bad  []kafkaio.Message
}

// prepareBatch decodes and archives one batch. It runs before the batch waits for a projection slot, so one
// partition's batch is decoded while another's is in Neo4j.
func (h *handler) prepareBatch(ctx context.Context, msgs []*sarama.ConsumerMessage) (prepared, error) {
	var p prepared
	var recs []archive.Record
	for _, m := range msgs {
		d := h.decode(ctx, m)
		if d.bad != nil {
			p.bad = append(p.bad, *d.bad)
			continue
		}
		p.envs = append(p.envs, d.env)
		recs = append(recs, d.rec)
	}
	if err := h.d.Archive.Append(ctx, recs); err != nil {
		return p, err // not marked: the batch is retried after the session restarts
	}
	return p, nil
}

// finishBatch quarantines a projected batch's bad messages (invalid, and poison found while projecting it) and
// records what became visible. It returns nil only when every message is either in Neo4j or on the quarantine
// topic.
func (h *handler) finishBatch(ctx context.Context, bad []kafkaio.Message) error {
	if h.d.AfterProject != nil {
		h.d.AfterProject()
	}
	if len(bad) > 0 {
		if err := h.d.Quarantine.Send(ctx, bad); err != nil {
			return err
		}
		h.d.Metrics.quarantined.Add(float64(len(bad)))
	}
	return nil
}

// projection is how the combiner projects: one transaction per call (while Neo4j is unreachable the combiner
// waits and retries, so an outage never quarantines good events), Neo4j's health to tell a poison event from an
// outage, and the quarantine message of an event that fails alone.
func (h *handler) projection() projection {
	return projection{
		apply:     h.applyOnce,
		healthy:   func(ctx context.Context) bool { return h.d.Health.Ping(ctx) == nil },
		contended: graph.IsContention,
		poison:    h.poisonMessage,
		done:      h.observe,
		warn:      h.d.Log.Warn,
	}
}

// poisonMessage is the quarantine message of an event that failed to project alone while Neo4j was healthy.
func (h *handler) poisonMessage(e project.Envelope, cause error) kafkaio.Message {
	h.d.Log.Error("poison event quarantined", "eventId", e.Event.ID, "principal", e.Principal, "err", cause)
	raw, _ := json.Marshal(json.RawMessage(e.Event.Raw))
	rec := kafkaio.QuarantineRecord{EventID: e.Event.ID, Reason: "projection failed: " + cause.Error(),
		Producer: e.Event.Producer, Principal: e.Principal, Stage: "consumer", ReceivedAt: e.ReceivedAt, Source: e.Source}
	return kafkaio.QuarantineMessage(h.kc.QuarantineTopic, rec, raw)
}

func (h *handler) applyOnce(ctx context.Context, envs []project.Envelope) error {
	res, err := h.d.Projector.Apply(ctx, envs)
	if errors.Is(err, project.ErrGenerationBump) {
		// The graph committed; Redis missed the bump. Invalidate every cache entry as soon as Redis is back.
		h.d.Log.Warn("generation bump failed; bumping the cache epoch", "err", err)
		h.bumpEpoch(ctx)
		err = nil
	}
	if err == nil {
		h.d.Metrics.events.WithLabelValues("projected").Add(float64(res.Projected))
		h.d.Metrics.events.WithLabelValues("duplicate").Add(float64(res.Duplicates))
	}
	return err
}

// bumpEpoch tries the global epoch bump once; if Redis is still unreachable it marks the epoch dirty and the
// epoch keeper retries until Redis is back, without holding up projection.
func (h *handler) bumpEpoch(ctx context.Context) {
	if h.d.Epoch == nil {
		return
	}
	if h.d.Epoch.BumpEpoch(ctx) != nil {
		h.epochDirty.Store(true)
	}
}

// keepEpoch bumps the cache epoch as soon as Redis answers again after a missed generation bump.
func (h *handler) keepEpoch(ctx context.Context) {
	t := time.NewTicker(epochRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if h.d.Epoch != nil && h.epochDirty.Load() && h.d.Epoch.BumpEpoch(ctx) == nil {
				h.epochDirty.Store(false)
				h.d.Log.Info("cache epoch bumped after redis came back")
			}
		}
	}
}

// recordQuarantined stores quarantine records so `event(id)` can answer QUARANTINED with the reason.
func (h *handler) recordQuarantined(ctx context.Context, msgs []*sarama.ConsumerMessage) error {
	recs := make([]graph.QuarantinedRow, 0, len(msgs))
	for _, m := range msgs {
		var r kafkaio.QuarantineRecord
		if err := json.Unmarshal(m.Value, &r); err != nil || r.EventID == "" {
			h.d.Log.Warn("unreadable quarantine record skipped", "partition", m.Partition, "offset", m.Offset)
			continue
		}
		recs = append(recs, quarantinedRow(r, sourceRef(m)))
	}
	return h.d.QStore.RecordQuarantined(ctx, recs)
}

// quarantinedRow is what the graph stores of a quarantine-topic record: no payload, the message as its source.
func quarantinedRow(r kafkaio.QuarantineRecord, source string) graph.QuarantinedRow {
	return graph.QuarantinedRow{EventID: r.EventID, Reason: r.Reason, Field: r.Field, Rule: r.Rule,
		Producer: r.Producer, Principal: r.Principal, Stage: r.Stage, Source: source,
		ReceivedAt: graph.Millis(r.ReceivedAt)}
}

func (h *handler) observe(envs []project.Envelope) {
	now := h.d.Now()
	for _, e := range envs {
		h.d.Metrics.eventToVisible.Observe(now.Sub(e.Event.EventTime).Seconds())
		h.d.Metrics.receiveToVisible.Observe(now.Sub(e.ReceivedAt).Seconds())
	}
}

func headers(m *sarama.ConsumerMessage) map[string]string {
	out := make(map[string]string, len(m.Headers))
	for _, h := range m.Headers {
		if h != nil {
			out[string(h.Key)] = string(h.Value)
		}
	}
	return out
}

func sourceRef(m *sarama.ConsumerMessage) string {
	return "kafka:" + m.Topic + "@" + itoa(m.Partition) + "/" + strconv.FormatInt(m.Offset, 10)
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }
