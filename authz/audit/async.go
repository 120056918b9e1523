package audit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Limits of the asynchronous audit writer (issue 13 item 11): a request hands its record to a bounded queue and
// answers without waiting for the durable sink, so the time of an answer does not tell whether it was audited
// (a denied root answers as fast as a missing one).
const (
	// DefaultAuditQueue is how many records wait for the sink at most.
	DefaultAuditQueue = 4096
	// DefaultAuditEnqueueWait is how long a request waits for room when the queue is full (the sink is slow or
	// down) before its record is refused with ErrAuditQueueFull. Records are never dropped silently.
	DefaultAuditEnqueueWait = 2 * time.Second
	// auditRetryMin and auditRetryMax bound the backoff between attempts to write one record: a record the sink
	// refuses is retried until it is written or the writer is closed.
	auditRetryMin = 100 * time.Millisecond
	auditRetryMax = 5 * time.Second
)

// Errors of the asynchronous audit writer.
var (
	// ErrAuditQueueFull means the record waited DefaultAuditEnqueueWait for room and was not queued.
	ErrAuditQueueFull = errors.New("audit queue full: the audit sink is not keeping up")
	// ErrAuditClosed means the writer was closed before the record was queued.
	ErrAuditClosed = errors.New("audit writer closed")
)

// AsyncAuditor decorates a durable Auditor (the Kafka auditor: acks=all, idempotent) with a bounded in-memory
// queue drained in order by one goroutine. Audit returns once the record is queued. A record the sink refuses is
// retried with backoff, never skipped; Close stops taking records and drains the queue within its context.
// What it does not survive: a crash (SIGKILL, OOM) loses the records still queued, at most the queue size.
type AsyncAuditor struct {
	sink    Auditor
	queue   chan AuditRecord
	wait    time.Duration
	log     *slog.Logger
	stop    chan struct{} // closed by Close: no new records
	abandon chan struct{} // closed when Close's context ends: stop retrying
	done    chan struct{}
	once    sync.Once
	giveUp  sync.Once
	ctx     context.Context // the sink's context, cancelled when Close gives up
	cancel  context.CancelFunc
	metrics *auditMetrics
}

var _ Auditor = (*AsyncAuditor)(nil)

// AsyncOptions tune an AsyncAuditor; zero values take the defaults.
type AsyncOptions struct {
	Queue       int           // records the queue holds (DefaultAuditQueue)
	EnqueueWait time.Duration // wait for room when full (DefaultAuditEnqueueWait)
	Log         *slog.Logger
	Registerer  prometheus.Registerer // nil: no metrics
}

// NewAsyncAuditor starts the writer goroutine over sink.
func NewAsyncAuditor(sink Auditor, o AsyncOptions) *AsyncAuditor {
	if o.Queue <= 0 {
		o.Queue = DefaultAuditQueue
	}
	if o.EnqueueWait <= 0 {
		o.EnqueueWait = DefaultAuditEnqueueWait
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	a := &AsyncAuditor{sink: sink, queue: make(chan AuditRecord, o.Queue), wait: o.EnqueueWait, log: o.Log,
		stop: make(chan struct{}), abandon: make(chan struct{}), done: make(chan struct{}), metrics: newAuditMetrics(o.Registerer)}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	go a.run()
	return a
}

// Audit queues r for the sink. When the queue is full it waits up to the enqueue wait (back-pressure on the
// requests that audit, never a silent drop), then refuses the record with ErrAuditQueueFull.
func (a *AsyncAuditor) Audit(ctx context.Context, r AuditRecord) error {
	select {
	case <-a.stop:
		return ErrAuditClosed
	default:
	}
	select {
	case a.queue <- r:
		a.metrics.queued()
		return nil
	default:
	}
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case a.queue <- r:
		a.metrics.queued()
		return nil
	case <-t.C:
		a.metrics.refused()
		return ErrAuditQueueFull
	case <-a.stop:
		return ErrAuditClosed
	case <-ctx.Done():
		a.metrics.refused()
		return ctx.Err()
	}
}

// run writes queued records in order until Close, then drains what is left.
func (a *AsyncAuditor) run() {
	defer close(a.done)
	for {
		select {
		case r := <-a.queue:
			if !a.write(r) {
				return
			}
		case <-a.stop:
			a.drain()
			return
		}
	}
}

func (a *AsyncAuditor) drain() {
	for {
		select {
		case r := <-a.queue:
			if !a.write(r) {
				return
			}
		default:
			return
		}
	}
}

// write hands one record to the sink, retrying with backoff until it is written; it gives up (false) only when
// Close's context ended.
func (a *AsyncAuditor) write(r AuditRecord) bool {
	backoff := auditRetryMin
	for {
		err := a.sink.Audit(a.ctx, r)
		if err == nil {
			a.metrics.written()
			return true
		}
		a.metrics.failed()
		a.log.Error("audit record not written, retrying", "err", err, "principal", r.Principal, "backoff", backoff)
		select {
		case <-a.abandon:
			a.log.Error("audit record lost at shutdown", "principal", r.Principal)
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, auditRetryMax)
	}
}

// Close stops taking records and waits until the queue is written or ctx ends; it reports how many records were
// still queued then (lost). It does not close the sink.
func (a *AsyncAuditor) Close(ctx context.Context) (lost int, err error) {
	a.once.Do(func() { close(a.stop) })
	select {
	case <-a.done:
		a.cancel()
		return 0, nil
	case <-ctx.Done():
		a.giveUp.Do(func() { close(a.abandon); a.cancel() })
		<-a.done
		return len(a.queue) + 1, ctx.Err() // the queued ones and the one being retried
	}
}

// auditMetrics are the asynchronous audit writer's Prometheus instruments.
type auditMetrics struct {
	depth                            prometheus.Gauge
	writes, failures, refusals, adds prometheus.Counter
}

func newAuditMetrics(reg prometheus.Registerer) *auditMetrics {
	if reg == nil {
		return nil
	}
	m := &auditMetrics{
		depth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_audit_queue_records",
			Help: "Audit records queued and not yet written to the audit stream."}),
		adds: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_audit_queued_total",
			Help: "Audit records queued for the audit stream."}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_audit_written_total",
			Help: "Audit records written to the audit stream."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_audit_write_errors_total",
			Help: "Failed attempts to write an audit record (each is retried)."}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_audit_refused_total",
			Help: "Audit records refused because the queue stayed full (the request logged the loss)."}),
	}
	reg.MustRegister(m.depth, m.adds, m.writes, m.failures, m.refusals)
	return m
}

func (m *auditMetrics) queued() {
	if m != nil {
		m.adds.Inc()
		m.depth.Inc()
	}
}

func (m *auditMetrics) written() {
	if m != nil {
		m.writes.Inc()
		m.depth.Dec()
	}
}

func (m *auditMetrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}

func (m *auditMetrics) refused() {
	if m != nil {
		m.refusals.Inc()
	}
}
