// Package project is Headwater's projector: it turns decoded OpenLineage events into the temporal property graph
// in Neo4j (docs/graph-model.md), idempotently and whatever order events arrive in.
//
// Invariants: an Event node keyed by eventId means "projected" (a second delivery is a duplicate and changes
// nothing); every event's canonical, resolved form is stored on its Event node, and derived state (run state, run
// inputs/outputs, lineage intervals, field histories, declared lineage) is recomputed from the applied events, so
// any prefix, permutation or repetition of a set of events gives the graph of applying each once in eventTime
// order. The only order-sensitive step is identity binding (renames, symlinks), which never merges two nodes: a
// conflict becomes an UnresolvedIdentity. The pure parts live in ingest/fold (the run state machine, the dataset
// log and its field histories, intervals, the job's edges and column lineage, the resumable edge fold and its
// checkpoint); this package converts its records into their inputs (runstate.go, dsstate.go) and keeps the
// stored encodings; the transaction's steps pass each other typed values (plan.go). Dump
// renders a namespace's projection as deterministic text for tests and reconciliation.
package project

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
	"github.com/headwater-data/headwater/internal/rules"
)

// NormVersion is recorded as normVersion on what the projector writes. Version 2 (issue 13): producers change
// only what they own (ADR 0018: inputs' lifecycle and metadata are not applied, reads are labelled observed on
// read); runs are keyed by (runId, job) and events by (event id, principal) (upgrade.go, ADR 0019). Version 3
// (issue 14): canonical namespaces write the default port the OpenLineage naming spec writes (normalize-2; keys
// still hash the portless key form), Dataset and Job nodes carry searchName for case-insensitive search
// (upgrade_identity.go, ADR 0026). Version 4 (issue 17): the projector writes what changed: lineage edges' latest
// evidence kept once on the Job, run detail without what its run's rows share, inline metadata stamps
// (upgrade_evidence.go, ADR 0035). Version 5 (issue 18): fields follow stable field ids (a rename keeps the
// Field, Field.paths/pathFroms) and Iceberg snapshots are dataset versions with parent, time, operation and
// summary (ADR 0041); a version-4 graph has nothing in another form (UpgradeNoteV5). Version 6 (issue 19): tags
// are temporal: the dataset state keeps every tags facet, the Dataset node its tag history (tagHistory,
// tagNames; tags.go); an empty tags facet removes the tags; a version-5 graph's tag histories are rebuilt from
// the archive (UpgradeTags, ADR 0066). Version 7 (issue 19): explicit governance blocks: the dataset state keeps
// every headwater_governance_block facet of its owners, the Dataset node its block history (blockHistory;
// blocks.go); a version-6 graph's block histories are rebuilt from the archive (UpgradeBlocks, ADR 0067).
// Version 7 (also, issue 18): Iceberg column lineage through the snapshot schema: the dataset state and node keep
// every schema the catalog sync recorded (icebergSchemas), DatasetVersion its schemaId (ADR 0065; schemarefs.go).
// Version 8 (issues 18, 19): a time-travel read names the snapshot it scanned: an input's icebergScanReport.snapshotId
// (kept as sent) matched to the table's recorded snapshot ids sets READ.datasetVersion, with scanSnapshotId,
// scanMatch and reportedVersion (scansnap.go); a version-7 graph's reads are matched from the archive
// (UpgradeScans, ADR 0084); each tag interval records its setting event's principal and an empty job tags facet
// clears the job's tags (tags.go, jobtags.go; refilled from the archive by UpgradeTags, ADR 0086). Version 9
// (issue 19): a job tag log on the Job node (jobTagLog: every job tags facet of a recent window in full, change
// points before it; fold.JobTagLog) and the job's tag history derived from it (jobTagHistory); a version-8
// graph's logs are filled from the archive (UpgradeTags, ADR 0090). Version 10 (issue 19): a COLUMN_FEEDS keeps its
// transformation history (tHistory, when its runs' kinds changed: fold.ColAgg.TL), so an asOf answers the
// transformations of that time; the job fold's checkpoint column version 3 makes every job with column lineage
// fold in full once, which `headwater upgrade` does for all (UpgradeEvidence, ADR 0091).
const NormVersion = "10"

// ErrGenerationBump wraps a failed cache-generation bump: the graph is committed; the caller must bump the global
// cache epoch.
var ErrGenerationBump = errors.New("cache generation bump failed")

// Envelope is one event with its delivery context.
type Envelope struct {
	Event      olevent.Event
	ReceivedAt time.Time
	Principal  string // producer principal (gateway token owner or the topic's bound principal)
	Source     string // "gateway", "kafka:<topic>", "replay"
	// Owned is the set of namespaces the producer held PRODUCE on when the event was accepted (the zero set:
	// everything). The projector applies the event's changes only there (docs/adr/0018-producers-change-only-
	// what-they-own.md).
	Owned ownership.Set
	// Pos is where the event was read from (Kafka topic/partition and offset); zero for events with no replayable
	// source (replay from the archive, tests). Only positioned events' dataset state is saved write-behind
	// (dsfold.go): the others are saved with the change.
	Pos foldstate.Pos
}

// GenerationBumper is implemented by the cache package (Redis INCR of "hw:gen:<nodeKey>").
type GenerationBumper interface {
	Bump(ctx context.Context, keys []string) error
}

// Canonicalizer is implemented by ingest/normalize: returns canonical env, namespace, name.
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (ns, nm string, err error)
}

// Result summarises one Apply.
type Result struct {
	Projected, Duplicates int
	IDConflicts           int // events whose id their principal already used for another content (quarantined)
	Unresolved            int
	Touched               []string // node keys whose neighbourhood changed
}

// Projector applies batches of events to the graph.
type Projector struct {
	store   *graph.Store
	canon   Canonicalizer
	gens    GenerationBumper
	log     *slog.Logger
	seconds prometheus.Histogram
	steps   *prometheus.HistogramVec
	stmts   *prometheus.HistogramVec
	events  *prometheus.CounterVec
	// restores counts datasets whose sealed observation log a late event had to restore (dslog.go).
	restores prometheus.Counter
	// folds counts jobs whose edges a batch recomputed, by where the fold started; runs counts the runs it read.
	folds  *prometheus.CounterVec
	runs   prometheus.Counter
	recent *recentEvents
	// stepTimes, when set (tests and benchmarks only), accumulates the time spent per transaction step.
	stepTimes map[string]time.Duration
	fold      *dsFoldState  // in-memory dataset fold state (dsfold.go)
	jobs      *jobFoldState // in-memory job fold state (jobfold.go)
}

// New builds a projector and registers its metrics.
func New(store *graph.Store, canon Canonicalizer, gens GenerationBumper, log *slog.Logger,
	reg prometheus.Registerer) (*Projector, error) {
	if store == nil || canon == nil || gens == nil {
		return nil, errors.New("project: store, canonicalizer and generation bumper are required")
	}
	if log == nil {
		log = slog.Default()
	}
	p := &Projector{store: store, canon: canon, gens: gens, log: log, recent: newRecentEvents(RecentEventsMaxBytes),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_projector_batch_seconds",
			Help: "Time to project one batch, commit and bump generations.", Buckets: prometheus.DefBuckets}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "headwater_projector_step_seconds",
			Help: "Time of each step of the batch transaction (claim, identities, events, jobs, datasets, runs, job " +
				"edges, commit): where projection time goes.", Buckets: prometheus.DefBuckets}, []string{"step"}),
		stmts: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "headwater_projector_statement_seconds",
			Help:    "Time of each Cypher statement of the batch transaction, by the projector function that ran it.",
			Buckets: prometheus.DefBuckets}, []string{"fn"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_projector_events_total",
			Help: "Events given to the projector, by outcome."}, []string{"outcome"}),
		folds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_projector_job_folds_total",
			Help: "Jobs whose edges a batch recomputed, by where the fold started: head (the job's checkpoint), " +
				"stored (a stored checkpoint before a late run), full (all runs)."}, []string{"from"}),
		runs: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_job_fold_runs_total",
			Help: "Runs read to recompute job edges."}),
		restores: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_dataset_log_restores_total",
			Help: "Datasets whose sealed observation log was restored because an event arrived with an earlier time."}),
	}
	p.fold = newFoldState(foldstate.DefaultMaxBytes)
	p.jobs = newJobFoldState(JobStateMaxBytes)
	if reg != nil {
		for _, c := range append(append([]prometheus.Collector{p.seconds, p.steps, p.stmts, p.events, p.restores, p.folds,
			p.runs}, append(p.fold.collectors(), p.recent.collectors()...)...), p.jobs.collectors()...) {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register projector metrics: %w", err)
			}
		}
	}
	return p, nil
}

// UnresolvedGeneration is the generation key bumped whenever an UnresolvedIdentity is written (cache.UnresolvedKey).
const UnresolvedGeneration = "unresolved"

// Apply projects a batch in one write transaction (retried on transient errors), then bumps the generations of
// the touched nodes. A bump failure is returned wrapped in ErrGenerationBump after the commit.
func (p *Projector) Apply(ctx context.Context, batch []Envelope) (Result, error) {
	start := time.Now()
	defer func() { p.seconds.Observe(time.Since(start).Seconds()) }()
	recs, err := p.prepare(batch)
	if err != nil {
		p.events.WithLabelValues("failed").Add(float64(len(batch)))
		return Result{}, err
	}
	if len(recs) == 0 {
		return Result{}, nil
	}
	res, err := p.writeFenced(ctx, batch, recs)
	if err != nil {
		p.events.WithLabelValues("failed").Add(float64(len(batch)))
		return Result{}, err
	}
	res.Duplicates += len(batch) - len(recs)
	p.events.WithLabelValues("projected").Add(float64(res.Projected))
	p.events.WithLabelValues("duplicate").Add(float64(res.Duplicates))
	p.events.WithLabelValues(rules.IDConflict).Add(float64(res.IDConflicts))
	if res.Unresolved > 0 {
		// Answers carrying UNRESOLVED_IDENTITY gaps depend on this generation (docs/caching.md).
		res.Touched = append(res.Touched, UnresolvedGeneration)
	}
	if len(res.Touched) > 0 {
		if err := p.gens.Bump(ctx, res.Touched); err != nil {
			return res, fmt.Errorf("%w: %w", ErrGenerationBump, err)
		}
	}
	p.log.Debug("projected batch", "events", len(batch), "projected", res.Projected,
		"duplicates", res.Duplicates, "touched", len(res.Touched))
	return res, nil
}

// prepare canonicalises the batch and drops in-batch repetitions of an event key (a principal's event id); a
// repetition with other content is kept, after the first, so the transaction records it as an id conflict.
func (p *Projector) prepare(batch []Envelope) ([]*rec, error) {
	seen := map[string]string{}
	out := make([]*rec, 0, len(batch))
	for _, env := range batch {
		r, err := buildRec(env, p.canon)
		if err != nil {
			return nil, err
		}
		k := r.key()
		if d, ok := seen[k]; ok {
			if digestsDiffer(d, r.Digest) {
				out = append(out, r)
			}
			continue
		}
		seen[k] = r.Digest
		out = append(out, r)
	}
	return out, nil
}

// write runs the batch transaction. An attempt resolves identities in the recs it is given, so a retried attempt
// starts from recs built afresh from the batch.
func (p *Projector) write(ctx context.Context, batch []Envelope, recs []*rec) (Result, error) {
	var bodyDone time.Time
	var applied []*rec
	var tag string
	attempt := 0
	fold := p.fold.attempt()
	var jobs *jobTx
	sess := p.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		attempt++
		these := recs
		if attempt > 1 {
			var err error
			if these, err = p.prepare(batch); err != nil {
				return nil, err
			}
		}
		w := &txWriter{ctx: ctx, tx: tx, token: newToken(), touched: map[string]bool{}, stepTimes: p.stepTimes,
			steps: p.steps, statements: p.stmts, recent: p.recent, restores: p.restores,
			folds: p.folds, foldRuns: p.runs, fold: fold.begin(), jobs: p.jobs.begin()}
		jobs = w.jobs
		res, fresh, err := w.apply(these, p.fold.staleDirty())
		if err == nil {
			err = w.saveDueJobs() // due job checkpoints, written behind
		}
		if err == nil {
			err = fold.seal(w) // the fold state's snapshots and watermarks, in this transaction
		}
		applied, tag = fresh, w.token
		bodyDone = time.Now()
		return res, err
	}, neo4j.WithTxTimeout(p.store.TxTimeout()))
	fold.end(err == nil)
	jobs.end(err == nil)
	if err != nil {
		return Result{}, fmt.Errorf("project batch: %w", err)
	}
	p.steps.WithLabelValues("commit").Observe(time.Since(bodyDone).Seconds())
	p.recent.add(applied, tag)
	return out.(Result), nil
}

func newToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
