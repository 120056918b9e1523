package project

import (
	"context"
	"fmt"
)

// Projection version 4 (docs/adr/0035-write-what-changed.md) writes what changed: the latest evidence of a job's
// lineage edges once on the Job (an edge keeps its own copy only while it differs), run detail without what every
// row of the run shares (a READ's publication, lastAt and eventIds equal to the run's), and a Job's metadata
// stamps as inline numbers. UpgradeEvidence rewrites a graph version 3 wrote into that form, a page of jobs per
// transaction: every value a reader gets stays what it was.

// runFormVersion is the projection version whose run detail form (ioLastAt, ioEventIds) the runs step writes:
// runs a version from it on wrote are in that form already and are left alone (projection version 5 did not change
// it; selecting "not the current version" rewrote version 4's runs from rows that no longer hold the values).
const runFormVersion = 4

// upgradeEvidenceBatch is how many jobs one version-4 upgrade transaction rewrites.
const upgradeEvidenceBatch = 100

// UpgradeEvidence rewrites the jobs whose namespace starts with jobNamespacePrefix ("" for all), with their runs'
// detail and their edges, in projection version 4's stored form; it returns how many jobs it rewrote. Running it
// again changes nothing.
func (p *Projector) UpgradeEvidence(ctx context.Context, jobNamespacePrefix string) (int, error) {
	total := 0
	for after := ""; ; {
		var n int
		var next string
		err := p.upgradeTx(ctx, func(w *txWriter) error {
			var err error
			next, n, err = w.upgradeEvidence(jobNamespacePrefix, after)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("upgrade evidence: %w", err)
		}
		total += n
		if next == "" {
			return total, nil
		}
		after = next
	}
}

// upgradeEvidence rewrites one page of jobs (by key, after after) and returns the last key ("" when none was left).
func (w *txWriter) upgradeEvidence(prefix, after string) (string, int, error) {
	out, err := w.runAs("upgradeEvidence:jobs", `MATCH (j:Job) WHERE j.key > $after AND ($p = '' OR j.namespace STARTS WITH $p)
		WITH j ORDER BY j.key LIMIT $n
		RETURN j.key AS k, j.metaStamps AS v3`,
		map[string]any{"after": after, "p": prefix, "n": upgradeEvidenceBatch})
	if err != nil || len(out) == 0 {
		return "", 0, err
	}
	jobs := make([]string, 0, len(out))
	var stamps []any
	for _, row := range out {
		k, _ := row.Get("k")
		jobs = append(jobs, asStr(k))
		if v3, _ := row.Get("v3"); v3 != nil {
			st, err := stampsFromV3(asStr(v3))
			if err != nil {
				return "", 0, fmt.Errorf("job %s: %w", asStr(k), err)
			}
			stamps = append(stamps, map[string]any{"key": k, "props": mergeJobMeta(st, nil)})
		}
	}
	if len(stamps) > 0 {
		if _, err := w.runAs("upgradeEvidence:stamps", `UNWIND $rows AS row MATCH (j:Job {key: row.key})
			SET j += row.props`, map[string]any{"rows": stamps}); err != nil {
			return "", 0, err
		}
	}
	// Run detail: what the run's rows share moves onto the Run (ioRows): the latest-listed row's lastAt and eventIds
	// (runIOLatest: lastAt, then READ before WROTE, then dataset key).
	if _, err := w.runAs("upgradeEvidence:runs", `UNWIND $jobs AS k
		MATCH (r:Run {jobKey: k}) WHERE toInteger(coalesce(r.normVersion, '0')) < $formV4
		CALL (r) {
			OPTIONAL MATCH (r)-[x:READ|WROTE]->(d:Dataset)
			WITH x, d ORDER BY x.lastAt DESC, type(x), d.key
			RETURN head(collect(x.lastAt)) AS at, head(collect(x.eventIds)) AS ids
		}
		SET r.ioLastAt = at, r.ioEventIds = ids, r.normVersion = $nv
		WITH r
		MATCH (r)-[x:READ|WROTE]->(:Dataset)
		SET x.publication = CASE WHEN type(x) = 'READ' THEN null ELSE x.publication END,
			x.lastAt = CASE WHEN x.lastAt = r.ioLastAt THEN null ELSE x.lastAt END,
			x.eventIds = CASE WHEN x.eventIds = r.ioEventIds THEN null ELSE x.eventIds END`,
		map[string]any{"jobs": toAny(jobs), "nv": NormVersion, "formV4": runFormVersion}); err != nil {
		return "", 0, err
	}
	// Edges: refolded from the job's checkpoint (the fold is version 3's), written in version 4's form.
	var plan jobPlan
	plan.add(jobs...)
	if err := w.projectJobEdges(plan); err != nil {
		return "", 0, err
	}
	return jobs[len(jobs)-1], len(jobs), nil
}
