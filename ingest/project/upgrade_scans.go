package project

import (
	"context"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/internal/ordered"
)

// UpgradeNoteV8 is what `headwater upgrade` says of projection version 8's scanned snapshots
// (docs/adr/0084-the-scanned-snapshot-of-a-time-travel-read.md).
const UpgradeNoteV8 = "projection version 8 (ADR 0084): reads with an Iceberg scan report matched to the table's recorded snapshots, from the archive"

// UpgradeScans gives the already projected events whose inputs carry an icebergScanReport the scan report's
// snapshot id (projection version 8, scansnap.go) and folds their runs again, so each such READ names the snapshot
// it scanned when the table's recorded snapshots match it, and the jobs' column edges follow. Version 7 kept the
// facet only among the input facets, and replay skips events already projected. The snapshot id comes from the
// archive (the envelopes re-decoded), never from the stored payloads; each input is the one its stored event was
// bound to (same position and canonical identity); events never projected are left to the replay; only runs of
// jobs whose namespace starts with jobNamespacePrefix ("" for all). Idempotent: an input that already has its scan
// report changes nothing. It returns how many runs it folded again.
func (p *Projector) UpgradeScans(ctx context.Context, envs []Envelope, jobNamespacePrefix string) (int, error) {
	byKey := map[string]*rec{}
	for _, env := range envs {
		r, err := buildRec(env, p.canon)
		if err != nil || r.Job == nil || !strings.HasPrefix(r.Job.NS, jobNamespacePrefix) {
			continue // unprojectable events were quarantined; other jobs do not change
		}
		for _, d := range r.Inputs {
			if d.Scan != "" {
				byKey[r.key()] = r
				break
			}
		}
	}
	if len(byKey) == 0 {
		return 0, nil
	}
	var n int
	err := p.upgradeTx(ctx, func(w *txWriter) (err error) {
		n, err = w.upgradeScans(byKey)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("upgrade scans: %w", err)
	}
	return n, nil
}

// upgradeScans writes the archive's scan reports into the stored events' inputs and folds their runs again.
func (w *txWriter) upgradeScans(byKey map[string]*rec) (int, error) {
	out, err := w.runAs("upgradeScans:read", `UNWIND $keys AS k MATCH (e:Event {key: k})
		RETURN e.key AS k, e.payload AS p`, map[string]any{"keys": toAny(ordered.Keys(byKey))})
	if err != nil {
		return 0, err
	}
	var rows []any
	runs := map[string]bool{}
	for _, row := range out {
		k, _ := row.Get("k")
		pl, _ := row.Get("p")
		stored, err := decodeRec(pl)
		if err != nil {
			return 0, err
		}
		r, changed := byKey[asStr(k)], false
		for i, d := range r.Inputs {
			if d.Scan == "" || i >= len(stored.Inputs) {
				continue
			}
			was := stored.Inputs[i]
			if was.ID == nil || !was.ID.ok() || was.ID.canonical() != d.ID.canonical() || was.Scan == d.Scan {
				continue
			}
			was.Scan, changed = d.Scan, true
		}
		if !changed {
			continue
		}
		payload, err := encodePayload(stored)
		if err != nil {
			return 0, err
		}
		rows = append(rows, map[string]any{"key": stored.key(), "payload": payload})
		if rk := stored.runKey(); rk != "" {
			runs[rk] = true
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	if _, err := w.runAs("upgradeScans:events", `UNWIND $rows AS row
		MATCH (e:Event {key: row.key}) SET e.payload = row.payload`, map[string]any{"rows": rows}); err != nil {
		return 0, err
	}
	folded, err := w.refoldRuns(ordered.Keys(runs), nil)
	if err != nil {
		return 0, err
	}
	plan := jobPlan{runs: folded.states}
	plan.merge(folded.jobs)
	plan.allFull() // a READ's version changed: its column references resolve through another schema
	return len(folded.states), w.projectJobEdges(plan)
}
