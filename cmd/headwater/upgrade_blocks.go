package main

import (
	"context"
	"log/slog"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/project"
)

// upgradeBlocks rebuilds the block histories of the datasets the archive's headwater_governance_block facets name
// (of namespaces under --namespace-prefix; project.UpgradeBlocks, projection version 7), reading the archive in
// batches: version 6 kept the facet opaque and replay skips the events already projected.
func (u upgradeCmd) upgradeBlocks(ctx context.Context, proj *project.Projector, log *slog.Logger) (int, error) {
	total := 0
	err := u.archiveBatches(log, hasBlocks, func(batch []project.Envelope) error {
		n, err := proj.UpgradeBlocks(ctx, batch, u.NamespacePrefix)
		total += n
		return err
	})
	return total, err
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

// upgradeScans matches the reads whose archived events carry an Iceberg scan report to the snapshot they scanned
// (of job namespaces under --namespace-prefix; project.UpgradeScans, projection version 8), reading the archive in
// batches: version 7 kept the scan report among the input facets and replay skips the events already projected.
func (u upgradeCmd) upgradeScans(ctx context.Context, proj *project.Projector, log *slog.Logger) (int, error) {
	total := 0
	err := u.archiveBatches(log, hasScanReport, func(batch []project.Envelope) error {
		n, err := proj.UpgradeScans(ctx, batch, u.NamespacePrefix)
		total += n
		return err
	})
	return total, err
}

// hasScanReport says whether an event reads an input with an icebergScanReport snapshot id.
func hasScanReport(ev olevent.Event) bool {
	for _, d := range ev.Inputs {
		if d.ScanSnapshot != "" {
			return true
		}
	}
	return false
}
