package auditkafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// Scan tuning of KafkaAuditReader.
const (
	// auditReadChunk is how many offsets one backward step reads from a partition.
	auditReadChunk = 500
	// auditSinceSkew widens a `since` read: the scan starts at the first offset whose Kafka timestamp (produce
	// time) is at least since minus this margin, so records whose own time (the writer's clock) is a little
	// ahead of Kafka's are still found. Records are then filtered on their own time.
	auditSinceSkew = 5 * time.Minute
	// auditNetTimeout bounds each broker request of the reader, including the offset lookups that precede the
	// scan (sarama's requests take no context, so the read's deadline only stops the scan itself).
	auditNetTimeout = 5 * time.Second
)

// errScanBudget ends a read that scanned MaxAuditScan records.
var errScanBudget = errors.New("audit scan budget reached")

// KafkaAuditReader reads pages of the audit topic newest first: a bounded, backward scan of every partition
// between fixed offsets, merged by record time. It never joins a consumer group and never commits offsets.
type KafkaAuditReader struct {
	client  sarama.Client
	topic   string
	maxScan int // MaxAuditScan; tests lower it
}

// NewKafkaAuditReader connects to the brokers of c; the audit topic is created when missing (as the auditor
// does). Close releases the connection.
func NewKafkaAuditReader(c kafkaio.Config, topic string) (*KafkaAuditReader, error) {
	if err := EnsureAuditTopic(c, topic); err != nil {
		return nil, err
	}
	sc := c.NewSaramaConfig()
	sc.Consumer.Return.Errors = true
	sc.Net.ReadTimeout, sc.Net.WriteTimeout = auditNetTimeout, auditNetTimeout
	client, err := sarama.NewClient(c.Brokers, sc)
	if err != nil {
		return nil, fmt.Errorf("kafka client for the audit topic: %w", err)
	}
	return &KafkaAuditReader{client: client, topic: topic, maxScan: audit.MaxAuditScan}, nil
}

// Close closes the Kafka client.
func (k *KafkaAuditReader) Close() error { return k.client.Close() }

// ReadAudit returns one page. Within a partition (one principal's records: they are keyed by principal) records
// come in the order they were written, newest first; across partitions, newest record time first.
func (k *KafkaAuditReader) ReadAudit(ctx context.Context, q audit.AuditQuery) (audit.AuditPage, error) {
	if q.Limit < 1 || q.Limit > audit.MaxAuditPage {
		return audit.AuditPage{}, fmt.Errorf("%w: limit must be between 1 and %d", authz.ErrInvalid, audit.MaxAuditPage)
	}
	ctx, cancel := context.WithTimeout(ctx, audit.AuditReadTimeout)
	defer cancel()
	parts, err := k.bounds(q)
	if err != nil {
		return audit.AuditPage{}, err
	}
	cons, err := sarama.NewConsumerFromClient(k.client)
	if err != nil {
		return audit.AuditPage{}, fmt.Errorf("kafka consumer for the audit topic: %w", err)
	}
	defer func() { _ = cons.Close() }() // a read-only scan: nothing to flush
	s := &auditScan{ctx: ctx, cons: cons, topic: k.topic, q: q, parts: parts, maxScan: k.maxScan}
	return s.page()
}

// partScan is the unread range [lo, next) of one partition and the matching records read but not returned.
type partScan struct {
	id       int32
	lo, next int64
	buf      []audit.AuditEntry // newest (highest offset) first
}

// bounds computes each partition's range: below Before (or the end), at or above the oldest kept offset (or
// the first offset near Since).
func (k *KafkaAuditReader) bounds(q audit.AuditQuery) ([]*partScan, error) {
	ids, err := k.client.Partitions(k.topic)
	if err != nil {
		return nil, fmt.Errorf("audit topic %s: %w", k.topic, err)
	}
	var out []*partScan
	for _, id := range ids {
		before, ok := q.Before[id]
		if q.Before != nil && !ok {
			continue
		}
		ps, err := k.partBounds(id, before, q)
		if err != nil {
			return nil, err
		}
		out = append(out, ps)
	}
	return out, nil
}

func (k *KafkaAuditReader) partBounds(id int32, before int64, q audit.AuditQuery) (*partScan, error) {
	end, err := k.client.GetOffset(k.topic, id, sarama.OffsetNewest)
	if err != nil {
		return nil, fmt.Errorf("audit partition %d end: %w", id, err)
	}
	lo, err := k.client.GetOffset(k.topic, id, sarama.OffsetOldest)
	if err != nil {
		return nil, fmt.Errorf("audit partition %d start: %w", id, err)
	}
	if !q.Since.IsZero() {
		at, err := k.client.GetOffset(k.topic, id, q.Since.Add(-auditSinceSkew).UnixMilli())
		if err != nil {
			return nil, fmt.Errorf("audit partition %d offset at %s: %w", id, q.Since, err)
		}
		if at < 0 { // nothing written since
			at = end
		}
		lo = max(lo, at)
	}
	next := end
	if q.Before != nil {
		next = min(max(before, 0), end)
	}
	return &partScan{id: id, lo: lo, next: max(next, lo)}, nil
}

// auditScan is the state of one read.
type auditScan struct {
	ctx     context.Context
	cons    sarama.Consumer
	topic   string
	q       audit.AuditQuery
	parts   []*partScan
	maxScan int
	res     audit.AuditPage
}

// page merges the partitions newest first until the page is full, every partition is exhausted, or the budget
// or deadline stops a partition that must be read before the next record can be chosen.
func (s *auditScan) page() (audit.AuditPage, error) {
	for len(s.res.Entries) < s.q.Limit {
		best, err := s.newest()
		if errors.Is(err, errScanBudget) || errors.Is(err, context.DeadlineExceeded) {
			s.res.Truncated = true
			break
		}
		if err != nil {
			return audit.AuditPage{}, err
		}
		if best == nil {
			break
		}
		s.res.Entries = append(s.res.Entries, best.buf[0])
		best.buf = best.buf[1:]
	}
	s.res.Next = map[int32]int64{}
	for _, ps := range s.parts {
		s.res.Next[ps.id] = ps.next
		if len(ps.buf) > 0 {
			s.res.Next[ps.id] = ps.buf[0].Offset + 1
		}
		s.res.More = s.res.More || len(ps.buf) > 0 || ps.next > ps.lo
	}
	return s.res, nil
}

// newest fills the partitions' buffers and returns the partition whose head is newest (nil: all exhausted).
func (s *auditScan) newest() (*partScan, error) {
	if err := s.fillAll(); err != nil {
		return nil, err
	}
	var best *partScan
	for _, ps := range s.parts {
		if len(ps.buf) > 0 && (best == nil || ps.buf[0].Time.After(best.buf[0].Time)) {
			best = ps
		}
	}
	return best, nil
}

// fillAll reads backwards, round by round, one chunk from every partition that has no buffered record, sharing
// the remaining budget equally among them, until each has a record or is exhausted. The equal share makes every
// page progress: a partition read without a match moves its position down even when the budget ends the page.
func (s *auditScan) fillAll() error {
	for {
		var needy []*partScan
		for _, ps := range s.parts {
			if len(ps.buf) == 0 && ps.next > ps.lo {
				needy = append(needy, ps)
			}
		}
		if len(needy) == 0 {
			return nil
		}
		share := max(1, (s.maxScan-s.res.Scanned)/len(needy))
		for _, ps := range needy {
			if err := s.step(ps, min(auditReadChunk, share)); err != nil {
				return err
			}
		}
	}
}

// step reads the n offsets below ps.next (fewer at the range's start or the budget's end).
func (s *auditScan) step(ps *partScan, n int) error {
	left := s.maxScan - s.res.Scanned
	if left <= 0 {
		return errScanBudget
	}
	from := max(ps.lo, ps.next-int64(min(n, left)))
	got, err := s.read(ps.id, from, ps.next)
	if err != nil {
		return err
	}
	slices.Reverse(got)
	ps.buf, ps.next = got, from
	return nil
}

// read returns the matching records at offsets [from, to) of a partition, oldest first.
func (s *auditScan) read(id int32, from, to int64) ([]audit.AuditEntry, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	pc, err := s.cons.ConsumePartition(s.topic, id, from)
	if err != nil {
		return nil, fmt.Errorf("read audit partition %d at %d: %w", id, from, err)
	}
	defer func() { _ = pc.Close() }()
	var out []audit.AuditEntry
	for {
		select {
		case m := <-pc.Messages():
			if m.Offset >= to {
				return out, nil
			}
			s.res.Scanned++
			if e, ok := s.decode(m); ok && s.q.Matches(e.AuditRecord) {
				out = append(out, e)
			}
			if m.Offset >= to-1 {
				return out, nil
			}
		case err := <-pc.Errors():
			return nil, fmt.Errorf("read audit partition %d: %w", id, err)
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
}

func (s *auditScan) decode(m *sarama.ConsumerMessage) (audit.AuditEntry, bool) {
	var r audit.AuditRecord
	if err := json.Unmarshal(m.Value, &r); err != nil || r.Principal == "" || r.Time.IsZero() {
		s.res.Undecodable++
		return audit.AuditEntry{}, false
	}
	return audit.AuditEntry{AuditRecord: r, Partition: m.Partition, Offset: m.Offset}, true
}
