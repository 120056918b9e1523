package main

import (
	"context"
	"fmt"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/obs"
	"github.com/headwater-data/headwater/internal/redisconn"
)

// replayBatch is how many archived events are projected per Neo4j batch during replay.
const replayBatch = 500

type replayCmd struct {
	Dir      string           `help:"Archive directory to replay." default:".state/archive" env:"HEADWATER_ARCHIVE_DIR"`
	Neo4j    graph.Config     `embed:"" prefix:"neo4j-"`
	Redis    redisconn.Config `embed:"" prefix:"redis-"`
	Event    limitsConfig     `embed:"" prefix:"event-"`
	Identity identityConfig   `embed:"" prefix:"identity-"`
}

func (r replayCmd) Run(rc *runCtx) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := rc.log
	p, err := openPipeline(ctx, r.Neo4j, redisconn.Open(r.Redis), r.Event, r.Identity, log, obs.NewRegistry())
	if err != nil {
		return err
	}
	defer p.close()
	// Replay re-validates with the time bounds opened: archived events were valid when accepted.
	lim := r.Event.limits()
	lim.Horizon, lim.MaxFuture = replayTimeBound, replayTimeBound
	dec, err := decode.NewDecoder(lim, time.Now)
	if err != nil {
		return err
	}
	n, err := replayArchive(ctx, r.Dir, dec, p.projector, log)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(rc.stdout, "replayed %d archived events from %s\n", n, r.Dir)
	return err
}

// replayTimeBound replaces the event-time horizon during replay.
const replayTimeBound = 100 * 365 * 24 * time.Hour

// Replay's answer to contention (a transaction that timed out or waited too long for a lock, as on a loaded Neo4j):
// the batch is applied again after a back-off, doubling from replayBackoff up to replayMaxBackoff, at most
// replayAttempts times in all. Applying a batch again is safe: events are claimed by id, so what committed once is
// not projected twice.
const (
	replayAttempts   = 6
	replayBackoff    = time.Second
	replayMaxBackoff = 30 * time.Second
)

// batchApplier projects one batch (project.Projector).
type batchApplier interface {
	Apply(ctx context.Context, batch []project.Envelope) (project.Result, error)
}

// applyWithRetry applies batch, again after a back-off while it fails by contention.
func applyWithRetry(ctx context.Context, proj batchApplier, batch []project.Envelope, log *slog.Logger, sleep func(context.Context, time.Duration) error) error {
	wait := replayBackoff
	for attempt := 1; ; attempt++ {
		_, err := proj.Apply(ctx, batch)
		if err == nil || !graph.IsContention(err) {
			return err
		}
		if attempt == replayAttempts {
			return fmt.Errorf("replay: a batch of %d events failed %d times by contention (raise --neo4j-query-timeout on a loaded Neo4j): %w", len(batch), attempt, err)
		}
		log.Warn("replay batch failed by contention; applying it again", "attempt", attempt, "wait", wait, "err", err)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, replayMaxBackoff)
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func replayArchive(ctx context.Context, dir string, dec *decode.Decoder, proj batchApplier, log *slog.Logger) (int, error) {
	var batch []project.Envelope
	total := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := applyWithRetry(ctx, proj, batch, log, sleepCtx); err != nil {
			return err
		}
		total += len(batch)
		batch = batch[:0]
		return nil
	}
	err := archive.Read(dir, func(rec archive.Record) error {
		ev, err := dec.Decode(rec.Event)
		if err != nil {
			log.Warn("archived event no longer decodes; skipped", "eventId", rec.EventID, "err", err)
			return nil
		}
		ev.ID = rec.EventID
		batch = append(batch, project.Envelope{Event: ev, ReceivedAt: rec.ReceivedAt, Principal: rec.Principal, Source: "replay",
			Owned: rec.Owned})
		if len(batch) >= replayBatch {
			return flush()
		}
		return nil
	}, func(seg string, err error) { log.Warn("torn archive segment tail skipped", "segment", seg, "err", err) })
	if err != nil {
		return total, err
	}
	return total, flush()
}

// upgradeCmd upgrades a graph written by an earlier projection version in place (ingest/project/upgrade.go),
// then replays the archive (idempotent) to project what the earlier version could not. Stop the consumers first.
type upgradeCmd struct {
	replayCmd
	NamespacePrefix string `help:"Re-key only the runs of jobs whose namespace starts with this prefix (and the placeholder parents they name), rewrite only identities and grants whose namespace, or its part after '://', starts with it, move only those jobs' events onto their dbt node's job, and rebuild only those datasets' tag and block histories and match only those jobs' reads to their scanned snapshots; empty: all. Events are re-keyed by the archive's ids, quarantine records all." default:""`
}

func (u upgradeCmd) Run(rc *runCtx) error {
	if err := u.inPlace(rc); err != nil {
		return err
	}
	return u.replayCmd.Run(rc)
}

// inPlace re-keys events (by the archive's principals), quarantine records and runs (version 2), then writes
// stored identities and grants in today's canonical form (version 3), then jobs' edges, run detail and stamps in
// version 4's form.
func (u upgradeCmd) inPlace(rc *runCtx) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p, err := openPipeline(ctx, u.Neo4j, redisconn.Open(u.Redis), u.Event, u.Identity, rc.log, obs.NewRegistry())
	if err != nil {
		return err
	}
	defer p.close()
	keyed, err := upgradeEventKeys(ctx, u.Dir, p.projector)
	if err != nil {
		return err
	}
	quarantined, err := p.projector.UpgradeQuarantined(ctx, "")
	if err != nil {
		return err
	}
	runs, err := p.projector.UpgradeRuns(ctx, u.NamespacePrefix)
	if err != nil {
		return err
	}
	ids, err := p.projector.UpgradeIdentities(ctx, u.NamespacePrefix)
	if err != nil {
		return err
	}
	evidence, err := p.projector.UpgradeEvidence(ctx, u.NamespacePrefix)
	if err != nil {
		return err
	}
	grants, err := recanonicaliseGrants(ctx, grantstore.NewGrantStore(p.store, time.Now), p.norm, u.NamespacePrefix)
	if err != nil {
		return err
	}
	dbtMoved, err := u.upgradeDbtJobs(ctx, p.projector, rc.log)
	if err != nil {
		return err
	}
	retagged, err := u.upgradeTags(ctx, p.projector, rc.log)
	if err != nil {
		return err
	}
	reblocked, err := u.upgradeBlocks(ctx, p.projector, rc.log)
	if err != nil {
		return err
	}
	rescanned, err := u.upgradeScans(ctx, p.projector, rc.log)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(rc.stdout, "re-keyed %d events, %d quarantine records, %d runs to projection version %s\n",
		keyed, quarantined, runs, project.NormVersion); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(rc.stdout, "moved %d events onto their dbt node's job (ADR 0027)\n", dbtMoved); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(rc.stdout, "wrote the edges, run detail and stamps of %d jobs in version %s's form (ADR 0035)\n",
		evidence, project.NormVersion); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(rc.stdout, "rewrote the identities of %d datasets, %d names, %d jobs, %d unresolved identities, %d dataset events and %d grants\n",
		ids.Datasets, ids.Names, ids.Jobs, ids.Unresolved, ids.DatasetEvents, grants); err != nil {
		return err
	}
	if _, err = fmt.Fprintln(rc.stdout, project.UpgradeNoteV5); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(rc.stdout, "%s: %d datasets, %d jobs\n", project.UpgradeNoteV6, retagged.Datasets, retagged.Jobs); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(rc.stdout, "%s: %d datasets\n", project.UpgradeNoteV7, reblocked); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(rc.stdout, "%s: %d runs\n", project.UpgradeNoteV8, rescanned); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(rc.stdout, "%s: %d jobs\n", project.UpgradeNoteV9, retagged.Jobs); err != nil {
		return err
	}
	_, err = fmt.Fprintln(rc.stdout, project.UpgradeNoteV10)
	return err
}

// upgradeTags rebuilds the tag histories of the datasets the archive's tags facets name (of namespaces under
// --namespace-prefix; project.UpgradeTags), reading the archive in batches: version 5 kept the latest facet only
// and replay skips the events already projected.
func (u upgradeCmd) upgradeTags(ctx context.Context, proj *project.Projector, log *slog.Logger) (project.TagsUpgraded, error) {
	var total project.TagsUpgraded
	err := u.archiveBatches(log, hasDatasetTags, func(batch []project.Envelope) error {
		n, err := proj.UpgradeTags(ctx, batch, u.NamespacePrefix)
		total.Datasets, total.Jobs = total.Datasets+n.Datasets, total.Jobs+n.Jobs
		return err
	})
	return total, err
}

// hasDatasetTags says whether an event carries a dataset or job tags facet.
func hasDatasetTags(ev olevent.Event) bool {
	if ev.Job != nil && ev.Job.Tags != nil {
		return true
	}
	for _, ds := range [][]olevent.Dataset{ev.Inputs, ev.Outputs} {
		for _, d := range ds {
			if d.Tags != nil {
				return true
			}
		}
	}
	return ev.Dataset != nil && ev.Dataset.Tags != nil
}

// upgradeDbtJobs moves already-projected events of dbt node jobs (of job namespaces under --namespace-prefix) onto
// the job version 3 keys them by (project.UpgradeDbtJobs), reading the archive in batches; replay alone skips them
// as duplicates.
func (u upgradeCmd) upgradeDbtJobs(ctx context.Context, proj *project.Projector, log *slog.Logger) (int, error) {
	total := 0
	err := u.archiveBatches(log, func(ev olevent.Event) bool { return ev.Job != nil && ev.Job.DbtUniqueID != "" },
		func(batch []project.Envelope) error {
			n, err := proj.UpgradeDbtJobs(ctx, batch, u.NamespacePrefix)
			total += n
			return err
		})
	return total, err
}

// archiveBatches is the in-place upgrades' one reading loop: it decodes the archive under replay's time bounds
// and hands the events keep selects to apply, replayBatch at a time (then once more with the rest, possibly
// none). What no longer decodes is skipped: replay reports it.
func (u upgradeCmd) archiveBatches(log *slog.Logger, keep func(olevent.Event) bool, apply func([]project.Envelope) error) error {
	lim := u.Event.limits()
	lim.Horizon, lim.MaxFuture = replayTimeBound, replayTimeBound
	dec, err := decode.NewDecoder(lim, time.Now)
	if err != nil {
		return err
	}
	var batch []project.Envelope
	flush := func() error {
		err := apply(batch)
		batch = batch[:0]
		return err
	}
	err = archive.Read(u.Dir, func(rec archive.Record) error {
		ev, err := dec.Decode(rec.Event)
		if err != nil || !keep(ev) {
			return nil
		}
		ev.ID = rec.EventID
		batch = append(batch, project.Envelope{Event: ev, ReceivedAt: rec.ReceivedAt, Principal: rec.Principal,
			Source: "replay", Owned: rec.Owned})
		if len(batch) >= replayBatch {
			return flush()
		}
		return nil
	}, func(seg string, err error) { log.Warn("torn archive segment tail skipped", "segment", seg, "err", err) })
	if err != nil {
		return err
	}
	return flush()
}

// recanonicaliseGrants re-states every grant whose securable is no longer canonical (a NAMESPACE grant on
// "postgres://db" written before projection version 3 names "postgres://db:5432" now, ADR 0026) under the
// securable's canonical form, in one change (revoke and grant, one epoch bump), so it keeps covering what it
// covered. Grants from the policy file are re-stated the same way; the file's next sync finds them in force.
// scope limits it like the identity upgrade. It returns how many grants it re-stated.
func recanonicaliseGrants(ctx context.Context, gs *grantstore.GrantStore, canon grant.Canonicalizer, scope string) (int, error) {
	snap, err := gs.Load(ctx)
	if err != nil {
		return 0, err
	}
	var changes []grant.Change
	for _, g := range snap.Grants {
		if scope != "" && !strings.HasPrefix(g.On.Namespace, scope) && !strings.HasPrefix(afterScheme(g.On.Namespace), scope) {
			continue
		}
		on, err := grant.CanonicalSecurable(canon, g.On)
		if err != nil || on == g.On {
			continue // unchanged, or no longer canonicalisable: left as it is (it matches nothing new)
		}
		old, now := g, g
		now.On = on
		changes = append(changes, grant.Change{Op: grant.OpRevoke, Grant: &old}, grant.Change{Op: grant.OpGrant, Grant: &now})
	}
	if len(changes) == 0 {
		return 0, nil
	}
	if _, err := gs.Apply(ctx, "headwater upgrade", changes); err != nil {
		return 0, fmt.Errorf("re-state grants: %w", err)
	}
	return len(changes) / 2, nil
}

func afterScheme(ns string) string {
	_, rest, _ := strings.Cut(ns, "://")
	return rest
}

// upgradeEventKeys re-keys earlier events by the principal the archive recorded for them, in archive order.
func upgradeEventKeys(ctx context.Context, dir string, proj *project.Projector) (int, error) {
	total := 0
	var batch []project.EventOwner
	flush := func() error {
		n, err := proj.UpgradeEventKeys(ctx, batch)
		total += n
		batch = batch[:0]
		return err
	}
	err := archive.Read(dir, func(rec archive.Record) error {
		batch = append(batch, project.EventOwner{ID: rec.EventID, Principal: rec.Principal})
		if len(batch) >= replayBatch {
			return flush()
		}
		return nil
	}, func(string, error) {})
	if err != nil {
		return total, err
	}
	return total, flush()
}
