package project

import (
	"sort"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// The snapshot a time-travel read scanned (projection version 8,
// docs/adr/0084-the-scanned-snapshot-of-a-time-travel-read.md). An input whose events carry
// icebergScanReport.snapshotId (fold.RunIO.Scan, the text as sent) is matched, when its run is folded, to the
// snapshot ids the catalog sync recorded for the table (DatasetVersion nodes with committedAt): exactly one id that
// rounds to it becomes the READ's datasetVersion (the reported one kept as reportedVersion); none or several keep
// the reported version, and READ.scanMatch says which (fold.ScanMatched, ScanUnmatched, ScanAmbiguous). A snapshot
// recorded later re-folds the runs whose scan it matches (queueLateScans), so the order of arrival does not matter.

// resolveScans matches the runs' inputs with a scan report to their datasets' recorded snapshots, in place, and
// returns the jobs to fold from all their runs: those of runs whose READ now names another snapshot than the one
// reported. The job fold keeps what it resolved a run's column references to from its earlier events (a START
// without the scan report resolved through the reported snapshot's schema), so only a full fold re-resolves them
// through the scanned one. Reads that match the reported version, or none, change nothing a full fold would.
func (w *txWriter) resolveScans(states []*fold.RunState) ([]string, error) {
	want := map[string]bool{}
	for _, st := range states {
		for k, io := range st.Inputs {
			if io.Scan != "" {
				want[k] = true
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	snaps, err := w.recordedSnapshots(ordered.Keys(want))
	if err != nil {
		return nil, err
	}
	full := map[string]bool{}
	for _, st := range states {
		for k, io := range st.Inputs {
			if io.Scan == "" {
				continue
			}
			id, how := fold.MatchScanSnapshot(io.Scan, snaps[k])
			io.ScanMatch = how
			if how == fold.ScanMatched && id != io.Version {
				io.Reported, io.Version = io.Version, id
			}
			if io.Reported != "" && st.JobKey != "" {
				full[st.JobKey] = true
			}
		}
	}
	return ordered.Keys(full), nil
}

// recordedSnapshots are the snapshot ids the catalog sync recorded per dataset (sorted keys).
func (w *txWriter) recordedSnapshots(keys []string) (map[string][]string, error) {
	sort.Strings(keys)
	rows, err := w.runAs("resolveScans:snapshots", `UNWIND $keys AS k
		MATCH (:Dataset {key: k})<-[:VERSION_OF]-(v:DatasetVersion) WHERE v.committedAt IS NOT NULL
		RETURN k, collect(v.version) AS ids`, map[string]any{"keys": toAny(keys)})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		k, _ := r.Get("k")
		ids, _ := r.Get("ids")
		for _, id := range ids.([]any) {
			out[asStr(k)] = append(out[asStr(k)], asStr(id))
		}
	}
	return out, nil
}

// lateScanRuns are the runs to fold again because the batch records snapshots their reads' scan reports match:
// of the READ edges with a scan report of those datasets, those whose scan matches one of the new snapshot ids (a
// read projected before the sync recorded its snapshot, or one a new id makes ambiguous).
func (w *txWriter) lateScanRuns(recs []*rec) ([]string, error) {
	fresh := map[string][]string{}
	for _, r := range recs {
		for _, d := range r.datasets() {
			if d.Snapshot != nil && d.ID != nil && d.ID.Key != "" {
				fresh[d.ID.Key] = append(fresh[d.ID.Key], d.Version)
			}
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	keys := ordered.Keys(fresh)
	sort.Strings(keys)
	rows, err := w.runAs("lateScanRuns", `UNWIND $keys AS k
		MATCH (:Dataset {key: k})<-[x:READ]-(r:Run) WHERE x.scanSnapshotId IS NOT NULL
		RETURN k, r.key AS run, x.scanSnapshotId AS scan`, map[string]any{"keys": toAny(keys)})
	if err != nil {
		return nil, err
	}
	runs := map[string]bool{}
	for _, row := range rows {
		k, _ := row.Get("k")
		run, _ := row.Get("run")
		scan, _ := row.Get("scan")
		if _, how := fold.MatchScanSnapshot(asStr(scan), fresh[asStr(k)]); how != fold.ScanUnmatched {
			runs[asStr(run)] = true
		}
	}
	return ordered.Keys(runs), nil
}
