// Package redrive sends quarantined events back through projection after a fix (a new normaliser, a new alias,
// a corrected limit). It reads the quarantine topic up to its current end, picks the records asked for, and
// produces their original payloads to the raw-event topic under the record's event id. Re-driving is idempotent:
// an event that is valid now (decoder, identities, the original principal's produce grants) is projected once
// (projection deduplicates by event id); one that is still invalid is quarantined again under the same key.
package redrive

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/rules"
)

// Sender makes messages durable (kafkaio.Producer).
type Sender interface {
	Send(ctx context.Context, msgs []kafkaio.Message) error
}

// Selector says whether a quarantine record should be re-driven.
type Selector func(kafkaio.QuarantineRecord) bool

// ByEventIDs selects records with one of the ids.
func ByEventIDs(ids ...string) Selector {
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return func(r kafkaio.QuarantineRecord) bool { return set[r.EventID] }
}

// Result says what was re-driven.
type Result struct {
	Scanned   int
	Redriven  []string
	NoPayload []string // selected but the payload was truncated (oversized) and cannot be re-driven
}

// readTimeout bounds the scan of the quarantine topic.
const readTimeout = 2 * time.Minute

// Run scans the quarantine topic to its current end and re-drives the selected records. The latest record per
// event id wins, and each event is re-driven once per call.
func Run(ctx context.Context, kc kafkaio.Config, send Sender, sel Selector) (Result, error) {
	recs, scanned, err := scan(ctx, kc, sel)
	if err != nil {
		return Result{}, err
	}
	res := Result{Scanned: scanned}
	var msgs []kafkaio.Message
	for id, r := range recs {
		payload := []byte(r.Payload)
		if len(payload) == 0 {
			payload = r.PayloadB64
		}
		if len(payload) == 0 || r.Rule == rules.MaxBytes {
			res.NoPayload = append(res.NoPayload, id)
			continue
		}
		// The event keeps the id of its quarantine record: for a valid event that failed projection its own id, for
		// a gateway refusal the id the 4xx answer named, so `event(id)` answers PROJECTED for the id the producer
		// was given. The consumer re-runs every check, the produce grants of the original principal included.
		hdr := map[string]string{kafkaio.HeaderReceivedAt: r.ReceivedAt.Format(time.RFC3339Nano),
			kafkaio.HeaderPrincipal: r.Principal, kafkaio.HeaderSource: kafkaio.SourceRedrive,
			kafkaio.HeaderEventID: id}
		msgs = append(msgs, kafkaio.Message{Topic: kc.EventsTopic, Key: "redrive:" + id, Value: payload, Headers: hdr})
		res.Redriven = append(res.Redriven, id)
	}
	if err := send.Send(ctx, msgs); err != nil {
		return Result{}, err
	}
	return res, nil
}

func scan(ctx context.Context, kc kafkaio.Config, sel Selector) (map[string]kafkaio.QuarantineRecord, int, error) {
	client, err := sarama.NewClient(kc.Brokers, kc.NewSaramaConfig())
	if err != nil {
		return nil, 0, fmt.Errorf("kafka: %w", err)
	}
	defer func() { _ = client.Close() }() // a read-only scan: nothing to flush
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = cons.Close() }()
	parts, err := client.Partitions(kc.QuarantineTopic)
	if err != nil {
		return nil, 0, fmt.Errorf("quarantine topic %s: %w", kc.QuarantineTopic, err)
	}
	out := map[string]kafkaio.QuarantineRecord{}
	scanned := 0
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	for _, p := range parts {
		end, err := client.GetOffset(kc.QuarantineTopic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, 0, err
		}
		if end == 0 {
			continue
		}
		pc, err := cons.ConsumePartition(kc.QuarantineTopic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, 0, err
		}
		for done := false; !done; {
			select {
			case m := <-pc.Messages():
				scanned++
				var r kafkaio.QuarantineRecord
				if json.Unmarshal(m.Value, &r) == nil && r.EventID != "" && sel(r) {
					out[r.EventID] = r
				}
				done = m.Offset >= end-1
			case <-ctx.Done():
				_ = pc.Close()
				return nil, 0, fmt.Errorf("scan quarantine partition %d: %w", p, ctx.Err())
			}
		}
		_ = pc.Close()
	}
	return out, scanned, nil
}
