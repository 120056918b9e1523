package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/rules"
)

// Decoder validates and decodes one event (decode.Decoder).
type Decoder interface {
	Decode(raw []byte) (olevent.Event, error)
}

// Sender makes messages durable (kafkaio.Producer).
type Sender interface {
	Send(ctx context.Context, msgs []kafkaio.Message) error
}

// Guard checks a producer's produce grants for an event (producecheck.Guard).
type Guard interface {
	Check(ctx context.Context, p authz.Principal, ev *olevent.Event) (ownership.Set, *producecheck.Denial)
}

// Gateway serves the ingestion endpoints.
type Gateway struct {
	cfg    Config
	kafka  kafkaio.Config
	dec    Decoder
	send   Sender
	guard  Guard
	limits *limiters
	ids    *recentIDs
	// inflight is the in-flight byte budget of the HTTP endpoints (Submit, for events built in the server, is
	// bounded by its callers).
	inflight *inFlight
	now      func() time.Time
	log      *slog.Logger
	m        *Metrics
}

// New builds a gateway. The caller's principal comes from the request context (authn middleware).
func New(cfg Config, kc kafkaio.Config, dec Decoder, send Sender, guard Guard, m *Metrics, log *slog.Logger, now func() time.Time) *Gateway {
	return &Gateway{cfg: cfg, kafka: kc, dec: dec, send: send, guard: guard,
		limits: newLimiters(cfg.RatePerSecond, cfg.RateBurst, now), ids: newRecentIDs(cfg.RecentIDs), now: now,
		log: log, m: m, inflight: newInFlight(cfg.MaxInFlightBytes, m.inFlightBytes)}
}

// Register mounts the endpoints on mux.
func (g *Gateway) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/lineage", g.handleOne)
	mux.HandleFunc("POST /api/v1/lineage/batch", g.handleBatch)
}

// Result is the per-event answer.
type Result struct {
	Index    int                  `json:"index"`
	Status   string               `json:"status"` // accepted | rejected
	EventID  string               `json:"eventId,omitempty"`
	Error    *ErrorBody           `json:"error,omitempty"`
	Warnings []olevent.FacetIssue `json:"warnings,omitempty"`
	digest   string               // content digest of an accepted event (recentIDs)
}

// ErrorBody names the field and the rule that failed.
type ErrorBody struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

type request struct {
	who        authz.Principal
	principal  string
	receivedAt time.Time
	headerID   string
	guard      Guard // the write check: the gateway's (produce grants) unless SubmitWith names another
}

// begin reads the body under the request's reservation, shrunk to the body's size once read.
func (g *Gateway) begin(w http.ResponseWriter, r *http.Request, res *reservation) (request, []byte, bool) {
	who := authz.FromContext(r.Context())
	req := request{who: who, principal: who.Subject, receivedAt: g.now().UTC(), headerID: headerID(r)}
	body, rej := g.readBody(w, r)
	res.shrink(int64(len(body)))
	if rej != nil {
		g.rejectWhole(r.Context(), w, req, rej, body)
		return req, nil, false
	}
	return req, body, true
}

func (g *Gateway) handleOne(w http.ResponseWriter, r *http.Request) {
	held, ok := g.admit(w, r)
	if !ok {
		return
	}
	defer held.release()
	req, body, ok := g.begin(w, r, held)
	if !ok {
		return
	}
	if !g.allow(w, req.principal, 1) {
		return
	}
	res, msgs := g.prepare(r.Context(), req, 0, body, nil)
	if !g.deliver(r.Context(), w, req, msgs) {
		return
	}
	g.rememberAccepted(req, []Result{res})
	status := http.StatusAccepted
	if res.Status == "rejected" {
		status = http.StatusBadRequest
		switch res.Error.Rule {
		case rules.ProducePermission:
			status = http.StatusForbidden
		case rules.IDConflict:
			status = http.StatusConflict
		}
	}
	g.count(req.principal, []Result{res})
	writeJSON(w, status, res)
}

func (g *Gateway) handleBatch(w http.ResponseWriter, r *http.Request) {
	held, ok := g.admit(w, r)
	if !ok {
		return
	}
	defer held.release()
	req, body, ok := g.begin(w, r, held)
	if !ok {
		return
	}
	items, rej := splitBatch(body)
	if rej != nil {
		g.rejectWhole(r.Context(), w, req, rej, body)
		return
	}
	if len(items) > g.cfg.MaxBatchEvents {
		g.rejectWhole(r.Context(), w, req, &ErrorBody{Field: "body", Rule: ruleMaxBatchEvents,
			Message: "batch has " + strconv.Itoa(len(items)) + " events; the limit is " + strconv.Itoa(g.cfg.MaxBatchEvents)}, body)
		return
	}
	if !g.allow(w, req.principal, len(items)) {
		return
	}
	results := make([]Result, len(items))
	var msgs []kafkaio.Message
	inBatch := map[string]string{} // ids accepted earlier in this batch -> digest
	for i, raw := range items {
		var m []kafkaio.Message
		results[i], m = g.prepare(r.Context(), req, i, raw, inBatch)
		msgs = append(msgs, m...)
	}
	if !g.deliver(r.Context(), w, req, msgs) {
		return
	}
	g.rememberAccepted(req, results)
	g.count(req.principal, results)
	accepted := 0
	for _, res := range results {
		if res.Status == "accepted" {
			accepted++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"accepted": accepted, "rejected": len(results) - accepted, "results": results})
}

// prepare validates one event and returns its result and the message to send: the event itself, or its
// quarantine copy. inBatch holds the ids (and digests) accepted earlier in the same batch request.
func (g *Gateway) prepare(ctx context.Context, req request, idx int, raw []byte, inBatch map[string]string) (Result, []kafkaio.Message) {
	ev, err := g.dec.Decode(raw)
	if err != nil {
		return g.reject(req, idx, raw, errorBody(err))
	}
	guard := req.guard
	if guard == nil {
		guard = g.guard
	}
	owned, d := guard.Check(ctx, req.who, &ev)
	if d != nil {
		return g.reject(req, idx, raw, ErrorBody{Field: d.Field, Rule: rules.ProducePermission, Message: d.Error()})
	}
	olevent.ResolveID(req.headerID, &ev)
	digest := ev.ContentDigest()
	if d, seen := inBatch[ev.ID]; (seen && d != digest) || g.ids.conflicts(req.principal, ev.ID, digest) {
		return g.reject(req, idx, raw, ErrorBody{Field: "eventId", Rule: rules.IDConflict, Message: "event id " + ev.ID +
			" was already accepted from this producer for an event with other content; send it under a new id"})
	}
	if inBatch != nil {
		inBatch[ev.ID] = digest
	}
	msg := kafkaio.Message{Topic: g.kafka.EventsTopic, Key: olevent.PartitionKey(&ev), Lane: kafkaio.ProducerLane(req.principal), Value: raw, Headers: map[string]string{
		kafkaio.HeaderEventID:    ev.ID,
		kafkaio.HeaderReceivedAt: req.receivedAt.Format(time.RFC3339Nano),
		kafkaio.HeaderPrincipal:  req.principal,
		kafkaio.HeaderSource:     kafkaio.SourceGateway,
		kafkaio.HeaderDigest:     digest,
	}}
	if v, ok := owned.Header(); ok {
		msg.Headers[kafkaio.HeaderOwned] = v // what the event may change, decided now (ADR 0018)
	}
	if len(ev.FacetIssues) > 0 {
		g.m.facetIssues.WithLabelValues(req.principal).Add(float64(len(ev.FacetIssues)))
	}
	return Result{Index: idx, Status: "accepted", EventID: ev.ID, Warnings: ev.FacetIssues, digest: digest},
		[]kafkaio.Message{msg}
}

// rememberAccepted records the ids of events Kafka acknowledged, for the id-conflict check (recentIDs).
func (g *Gateway) rememberAccepted(req request, results []Result) {
	ids, digests := make([]string, 0, len(results)), make([]string, 0, len(results))
	for _, r := range results {
		if r.Status == "accepted" {
			ids, digests = append(ids, r.EventID), append(digests, r.digest)
		}
	}
	g.ids.remember(req.principal, ids, digests)
}

// reject answers one event as rejected and returns its quarantine copy.
func (g *Gateway) reject(req request, idx int, raw []byte, body ErrorBody) (Result, []kafkaio.Message) {
	q := quarantineRecord(req, raw, body)
	return Result{Index: idx, Status: "rejected", EventID: q.EventID, Error: &body},
		[]kafkaio.Message{kafkaio.QuarantineMessage(g.kafka.QuarantineTopic, q, raw)}
}

// quarantineRecord describes rejected input; its event id is derived from the bytes received.
func quarantineRecord(req request, raw []byte, body ErrorBody) kafkaio.QuarantineRecord {
	return kafkaio.QuarantineRecord{EventID: kafkaio.RejectedEventID(raw), Reason: body.Message, Field: body.Field,
		Rule: body.Rule, Producer: producerOf(raw), Principal: req.principal, Stage: "gateway",
		ReceivedAt: req.receivedAt, Source: "gateway"}
}

// deliver makes accepted events and quarantine copies durable; on failure it answers 503 and returns false.
func (g *Gateway) deliver(ctx context.Context, w http.ResponseWriter, req request, msgs []kafkaio.Message) bool {
	start := g.now()
	err := g.send.Send(ctx, msgs)
	g.m.produceSeconds.Observe(g.now().Sub(start).Seconds())
	if err != nil {
		g.log.Warn("kafka did not acknowledge", "principal", req.principal, "messages", len(msgs), "err", err)
		g.m.unavailable.Inc()
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfterUnavailable.Seconds())))
		writeJSON(w, http.StatusServiceUnavailable, ErrorBody{Field: "", Rule: ruleUnavailable,
			Message: "events could not be made durable; nothing was accepted; retry later"})
		return false
	}
	return true
}

// rejectWhole answers a request that could not be split into events, after quarantining what it can.
func (g *Gateway) rejectWhole(ctx context.Context, w http.ResponseWriter, req request, body *ErrorBody, raw []byte) {
	rec := quarantineRecord(req, raw, *body)
	payload := raw
	if len(payload) > quarantinePrefixBytes {
		rec.Reason += " (payload truncated to its first " + strconv.Itoa(quarantinePrefixBytes) + " bytes; size " + strconv.Itoa(len(raw)) + ", digest " + rec.EventID + ")"
		payload = payload[:quarantinePrefixBytes]
	}
	if !g.deliver(ctx, w, req, []kafkaio.Message{kafkaio.QuarantineMessage(g.kafka.QuarantineTopic, rec, payload)}) {
		return
	}
	g.m.events.WithLabelValues(req.principal, "rejected", body.Rule).Inc()
	writeJSON(w, wholeStatus(body.Rule), Result{Status: "rejected", EventID: rec.EventID, Error: body})
}

func (g *Gateway) allow(w http.ResponseWriter, principal string, n int) bool {
	wait, ok := g.limits.take(principal, n)
	if ok {
		return true
	}
	g.m.rateLimited.WithLabelValues(principal).Inc()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	writeJSON(w, http.StatusTooManyRequests, ErrorBody{Field: "", Rule: ruleRateLimit,
		Message: "producer " + principal + " is over its event rate; retry after the given delay"})
	return false
}

func (g *Gateway) count(principal string, results []Result) {
	for _, r := range results {
		rule := ""
		if r.Error != nil {
			rule = r.Error.Rule
		}
		g.m.events.WithLabelValues(principal, r.Status, rule).Inc()
	}
}

// readBody reads the body (gunzipping when Content-Encoding is gzip) up to MaxBodyBytes.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *ErrorBody) {
	var src io.Reader = http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes)
	gz, rej := contentEncoding(r.Header.Values("Content-Encoding"))
	if rej != nil {
		raw, _ := io.ReadAll(src) // kept as sent (bounded), so the quarantine record is this body's
		return raw, rej
	}
	if gz {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, &ErrorBody{Field: "body", Rule: ruleGzip, Message: "Content-Encoding is gzip but the body is not valid gzip"}
		}
		defer func() { _ = zr.Close() }() // a gzip reader's Close only reports an earlier read error, which ReadAll returns
		src = zr
	}
	body, err := io.ReadAll(io.LimitReader(src, g.cfg.MaxBodyBytes+1))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || int64(len(body)) > g.cfg.MaxBodyBytes {
		return body, &ErrorBody{Field: "body", Rule: rules.MaxBytes, Message: "request body exceeds " + strconv.FormatInt(g.cfg.MaxBodyBytes, 10) + " bytes"}
	}
	if err != nil {
		return body, &ErrorBody{Field: "body", Rule: ruleRead, Message: "request body could not be read"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return body, &ErrorBody{Field: "body", Rule: olevent.RuleRequired, Message: "request body is empty"}
	}
	return body, nil
}

func headerID(r *http.Request) string {
	if v := r.Header.Get("Idempotency-Key"); v != "" {
		return v
	}
	return r.Header.Get("X-Event-Id")
}

func errorBody(err error) ErrorBody {
	if ve, ok := errors.AsType[*olevent.ValidationError](err); ok {
		return ErrorBody{Field: ve.Field, Rule: ve.Rule, Message: ve.Message}
	}
	return ErrorBody{Field: "body", Rule: rules.Invalid, Message: "event could not be decoded"}
}

func producerOf(raw []byte) string {
	var env struct {
		Producer string `json:"producer"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Producer) <= 512 {
		return env.Producer
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
