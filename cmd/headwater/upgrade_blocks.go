package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/project"
)

// upgradeBlocks rebuilds the block histories of the datasets the archive's headwater_governance_block facets name
// (of namespaces under --namespace-prefix; project.UpgradeBlocks, projection version 7), reading the archive in
// batches: version 6 kept the facet opaque and replay skips the events already projected.
func (u upgradeCmd) upgradeBlocks(ctx context.Context, proj *project.Projector, log *slog.Logger) (int, error) {
	lim := u.Event.limits()
	lim.Horizon, lim.MaxFuture = replayTimeBound, replayTimeBound
	dec, err := decode.NewDecoder(lim, time.Now)
	if err != nil {
		return 0, err
	}
	var batch []project.Envelope
	total := 0
	flush := func() error {
		n, err := proj.UpgradeBlocks(ctx, batch, u.NamespacePrefix)
		total += n
		batch = batch[:0]
		return err
	}
	err = archive.Read(u.Dir, func(rec archive.Record) error {
		ev, err := dec.Decode(rec.Event)
		if err != nil || !hasBlocks(ev) {
			return nil // replay reports what no longer decodes; only block facets change
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
		return total, err
	}
	return total, flush()
}

// hasBlocks says whether an event carries a headwater_governance_block facet on a dataset it writes.
func hasBlocks(ev olevent.Event) bool {
	for _, d := range ev.Outputs {
		if d.Blocks != nil {
			return true
		}
	}
	return ev.Dataset != nil && ev.Dataset.Blocks != nil
}
