package project

import (
	"slices"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// projectRuns recomputes every affected run from all of its applied events (under the run's write lock) and
// rewrites the Run node, its OF_JOB / CHILD_OF / RAN_VERSION links and its READ / WROTE detail. A run is one runId
// of one job (graph.RunKey): an event of another job with the same runId is another run and never touches this one.
func (w *txWriter) projectRuns(recs []*rec) (runFolds, error) {
	set, ids := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		if r.RunID != "" && r.Job != nil {
			set[r.runKey()] = true
			ids[r.RunID] = true
		}
		if r.PubRunID != "" {
			ids[r.PubRunID] = true
		}
	}
	late, err := w.lateScanRuns(recs) // ADR 0084 (scansnap.go)
	if err != nil {
		return runFolds{}, err
	}
	for _, k := range late {
		set[k] = true
	}
	if len(ids) == 0 {
		out, err := w.refoldRuns(ordered.Keys(set), recs)
		fullFoldLate(&out, late)
		return out, err
	}
	siblings, err := w.runsWithIDs(ordered.Keys(ids))
	if err != nil {
		return runFolds{}, err
	}
	for _, r := range recs {
		if r.PubRunID != "" { // a quality gate's publication: every run of that runId folds it
			for _, k := range siblings[r.PubRunID] {
				set[k] = true
			}
		}
	}
	for _, keys := range siblings {
		w.touch(keys...) // their runIdConflict may have changed (read-time flag, lineage.Run)
	}
	out, err := w.refoldRuns(ordered.Keys(set), recs)
	fullFoldLate(&out, late)
	return out, err
}

// fullFoldLate queues, to be folded from all their runs, the jobs of the runs re-folded because their scanned
// snapshot was recorded late (lateScanRuns): the READ's version may have changed either way (ADR 0084).
func fullFoldLate(out *runFolds, late []string) {
	for _, k := range late {
		if _, job := graph.SplitRunKey(k); job != "" {
			out.jobs.addFull(job)
		}
	}
}

// refoldRuns folds the runs (sorted keys) from all their applied events, fresh being this batch's, and rewrites
// them; it returns them with the jobs they queue for the job-edge step.
func (w *txWriter) refoldRuns(runs []string, fresh []*rec) (runFolds, error) {
	var out runFolds
	if len(runs) == 0 {
		return out, nil
	}
	events, err := w.loadRunEvents(runs, fresh)
	if err != nil {
		return out, err
	}
	states := make([]*fold.RunState, 0, len(runs))
	for _, k := range runs {
		if !hasRunEvent(events[k]) {
			continue // a parent placeholder (no events of its own yet): only its own job's events make it a run
		}
		st := foldRun(k, events[k])
		states = append(states, st)
		if out.states == nil {
			out.states = map[string]*fold.RunState{}
		}
		out.states[k] = st
		w.touch(k, st.JobKey)
		if st.JobKey != "" {
			out.jobs.changed(st.JobKey, st.FirstEventAt)
		}
		// A run whose events name two jobs (a dbt node job and the job its name keys, ADR 0027) may have been
		// filed under the other one by an earlier batch: that job's edges are recomputed without it.
		for _, e := range events[k] {
			if e.Job != nil && e.Job.Key != st.JobKey {
				w.touch(e.Job.Key)
				out.jobs.changed(e.Job.Key, st.FirstEventAt)
			}
		}
	}
	full, err := w.resolveScans(states) // ADR 0084 (scansnap.go)
	if err != nil {
		return out, err
	}
	for _, j := range full {
		out.jobs.addFull(j)
	}
	return out, w.writeRuns(states)
}

// runsWithIDs returns, per runId, the keys of the stored runs (of any job) with that runId: a prefix seek on the
// unique key's range index.
func (w *txWriter) runsWithIDs(ids []string) (map[string][]string, error) {
	out, err := w.run(`UNWIND $ids AS id
		MATCH (r:Run) WHERE r.key STARTS WITH id + $sep AND r.runId = id
		RETURN id, collect(r.key) AS keys`, map[string]any{"ids": toAny(ids), "sep": graph.RunKeySep})
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, row := range out {
		id, _ := row.Get("id")
		keys, _ := row.Get("keys")
		for _, k := range keys.([]any) {
			m[id.(string)] = append(m[id.(string)], k.(string))
		}
	}
	return m, nil
}

func hasRunEvent(evs []*rec) bool {
	for _, e := range evs {
		if e.Kind == string(olevent.KindRun) {
			return true
		}
	}
	return false
}

// loadRunEvents locks the runs (in key order) and returns all their applied events: this batch's from memory
// (fresh, as storeEvents stored them), earlier ones decoded from their Event payloads.
func (w *txWriter) loadRunEvents(runs []string, fresh []*rec) (map[string][]*rec, error) {
	m := freshByRun(runs, fresh)
	freshOf := map[string][]any{}
	for _, r := range fresh {
		if k := r.runKey(); k != "" {
			freshOf[k] = append(freshOf[k], r.key())
		}
	}
	known := w.recent.known(runs)
	knownOf := map[string]map[string]any{}
	for id, t := range known {
		k := t.r.runKey()
		if knownOf[k] == nil {
			knownOf[k] = map[string]any{}
		}
		knownOf[k][id] = t.tag
	}
	rows := make([]any, 0, len(runs))
	for _, k := range runs {
		runID, _ := graph.SplitRunKey(k)
		group := graph.RunKey(runID, "")
		f := append(append([]any{}, freshOf[k]...), freshOf[group]...)
		kn := knownOf[k]
		if kn == nil {
			kn = map[string]any{}
		}
		rows = append(rows, map[string]any{"k": k, "g": group, "fresh": f, "known": kn})
	}
	// Payloads of events this process committed recently come from memory; the set of events always comes from
	// Neo4j. A run reads its own events and its runId's group (publication DatasetEvents).
	out, err := w.run(`UNWIND $rows AS row
		MERGE (r:Run {key: row.k})
		SET r.projLock = true REMOVE r.projLock
		WITH row
		MATCH (e:Event) WHERE e.runKey IN [row.k, row.g] AND NOT e.key IN row.fresh
		WITH row, e, row.known[e.key] IS NOT NULL AND row.known[e.key] = e.ptag AS cached
		RETURN row.k AS k, collect(CASE WHEN cached THEN e.key END) AS cached,
			collect(CASE WHEN cached THEN null ELSE e.payload END) AS payloads`, map[string]any{"rows": rows})
	if err != nil {
		return nil, err
	}
	for _, row := range out {
		k, _ := row.Get("k")
		cached, _ := row.Get("cached")
		for _, id := range cached.([]any) {
			m[k.(string)] = append(m[k.(string)], known[id.(string)].r)
		}
		ps, _ := row.Get("payloads")
		for _, p := range ps.([]any) {
			r, err := decodeRec(p)
			if err != nil {
				return nil, err
			}
			m[k.(string)] = append(m[k.(string)], r)
		}
	}
	return m, nil
}

// freshByRun is, per run key of runs, the batch's events of that run or of its runId's group, in batch order.
// Each event's run key is built once (a scan of the batch per run built one per run and event: n² strings for a
// transaction of n events, ADR 0040).
func freshByRun(runs []string, fresh []*rec) map[string][]*rec {
	at := map[string][]int{} // run key -> positions in fresh, ascending
	for i, r := range fresh {
		if k := r.runKey(); k != "" {
			at[k] = append(at[k], i)
		}
	}
	m := map[string][]*rec{}
	for _, k := range runs {
		runID, _ := graph.SplitRunKey(k)
		group := graph.RunKey(runID, "")
		own, grp := at[k], at[group]
		if group == k {
			grp = nil
		}
		for len(own) > 0 || len(grp) > 0 { // merge the two ascending lists: batch order
			if len(grp) == 0 || (len(own) > 0 && own[0] < grp[0]) {
				m[k], own = append(m[k], fresh[own[0]]), own[1:]
			} else {
				m[k], grp = append(m[k], fresh[grp[0]]), grp[1:]
			}
		}
	}
	return m
}

// writeRuns rewrites the runs' properties and links. Links that are still right are kept (MERGE, and SET of
// properties that did not change writes nothing); only links to other targets are deleted, so a run's next event
// does not delete and re-create all its relationships.
func (w *txWriter) writeRuns(states []*fold.RunState) error {
	rows := make([]any, 0, len(states))
	keep := make([]any, 0, len(states))
	var io []any
	for _, s := range states {
		row, err := runRow(s)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		ios := ioRows(s)
		links := make([]any, 0, len(ios))
		for _, x := range ios {
			m := x.(map[string]any)
			links = append(links, m["dir"].(string)+">"+m["ds"].(string))
		}
		keep = append(keep, map[string]any{"key": s.Key, "links": links})
		io = append(io, ios...)
	}
	if _, err := w.runAs("writeRuns:runs", `UNWIND $rows AS row
		MATCH (r:Run {key: row.key})
		SET r += row.props
		WITH r, row
		CALL (r, row) {
			OPTIONAL MATCH (r)-[old:OF_JOB|CHILD_OF|RAN_VERSION]->(t)
			WITH old, t WHERE old IS NOT NULL AND NOT (
				(type(old) = 'OF_JOB' AND t.key = row.job) OR (type(old) = 'CHILD_OF' AND t.key = row.parent) OR
				(type(old) = 'RAN_VERSION' AND t.key = row.version))
			DELETE old
		}
		FOREACH (_ IN CASE WHEN row.job <> '' THEN [1] ELSE [] END |
			MERGE (j:Job {key: row.job})
			MERGE (r)-[:OF_JOB]->(j))
		FOREACH (_ IN CASE WHEN row.parent <> '' THEN [1] ELSE [] END |
			MERGE (p:Run {key: row.parent})
			ON CREATE SET p.runId = row.parentRunId
			MERGE (r)-[:CHILD_OF]->(p))
		FOREACH (_ IN CASE WHEN row.version <> '' THEN [1] ELSE [] END |
			MERGE (j:Job {key: row.job})
			MERGE (v:JobVersion {key: row.version})
				ON CREATE SET v += row.def, v.validFrom = row.first, v.validTo = $open, v.normVersion = $nv
			SET v.validFrom = CASE WHEN row.first < v.validFrom THEN row.first ELSE v.validFrom END
			MERGE (j)-[:HAS_VERSION]->(v)
			MERGE (r)-[:RAN_VERSION]->(v))`,
		map[string]any{"rows": rows, "open": graph.OpenEnd, "nv": NormVersion}); err != nil {
		return err
	}
	return w.writeRunIO(keep, io)
}

// writeRunIO makes the runs' READ / WROTE exactly the derived ones (links: per run, its "DIR>dataset" list),
// writing only the rows whose derived properties changed since the projector last wrote them (projHash): a READ
// or WROTE is written at its first listing and when its detail changes (its terminal event's publication,
// facets, column lineage), not on every event of the run.
func (w *txWriter) writeRunIO(links []any, io []any) error {
	out, err := w.runAs("writeRuns:read-io", `UNWIND $runs AS rr
		MATCH (:Run {key: rr.key})-[x:READ|WROTE]->(d:Dataset)
		RETURN rr.key + '|' + type(x) + '>' + d.key AS id, x.`+projHashProp+` AS h`, map[string]any{"runs": links})
	if err != nil {
		return err
	}
	stored := make(map[string]any, len(out))
	for _, r := range out {
		id, _ := r.Get("id")
		h, _ := r.Get("h")
		stored[asStr(id)] = h
	}
	var rows []any
	for _, x := range io {
		m := x.(map[string]any)
		id := m["run"].(string) + "|" + m["dir"].(string) + ">" + m["ds"].(string)
		h, was := stored[id]
		delete(stored, id)
		if nh := propsHash(m["props"].(map[string]any)); !was || h != nh {
			m["h"] = nh
			rows = append(rows, m)
		}
	}
	if len(stored) > 0 {
		stale := make([]any, 0, len(stored))
		for _, id := range ordered.Keys(stored) {
			run, rest, _ := strings.Cut(id, "|")
			dir, ds, _ := strings.Cut(rest, ">")
			stale = append(stale, map[string]any{"run": run, "dir": dir, "ds": ds})
		}
		if _, err := w.runAs("writeRuns:stale-io", `UNWIND $rows AS row
			MATCH (:Run {key: row.run})-[x:READ|WROTE]->(d:Dataset {key: row.ds}) WHERE type(x) = row.dir
			DELETE x`, map[string]any{"rows": stale}); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err = w.runAs("writeRuns:io", `UNWIND $rows AS row
		MATCH (r:Run {key: row.run}), (d:Dataset {key: row.ds})
		FOREACH (_ IN CASE WHEN row.dir = 'READ' THEN [1] ELSE [] END |
			MERGE (r)-[x:READ]->(d) SET x = row.props, x.`+projHashProp+` = row.h)
		FOREACH (_ IN CASE WHEN row.dir = 'WROTE' THEN [1] ELSE [] END |
			MERGE (r)-[x:WROTE]->(d) SET x = row.props, x.`+projHashProp+` = row.h)`,
		map[string]any{"rows": rows})
	return err
}

func runRow(s *fold.RunState) (map[string]any, error) {
	facets, err := json.Marshal(s.Facets)
	if err != nil {
		return nil, err
	}
	conflicting := s.Conflicting
	if conflicting == nil {
		conflicting = []string{}
	}
	props := map[string]any{"jobKey": s.JobKey, "state": s.State, "conflictingStates": toAny(conflicting),
		"startedAt": ptr(s.StartedAt), "endedAt": ptr(s.EndedAt), "nominalStartTime": ptr(s.NomStart),
		"nominalEndTime": ptr(s.NomEnd), "errorMessage": nilIfEmpty(s.ErrorMsg), "facets": string(facets),
		"lastEventTime": s.LastEventTime, "firstEventAt": s.FirstEventAt, "processingType": nilIfEmpty(s.ProcessingType),
		"producer": nilIfEmpty(s.Producer), "parentRunId": nil, "rootRunId": nil, "parentKey": nil, "rootKey": nil,
		"jobVersion": nil, "runId": s.RunID, "ioLastAt": nil, "ioEventIds": nil, "normVersion": NormVersion}
	if at, ids := runIOLatest(s); ids != nil || at != nil {
		props["ioLastAt"], props["ioEventIds"] = at, toAny(ids)
	}
	row := map[string]any{"key": s.Key, "job": s.JobKey, "parent": "", "parentJob": "", "parentRunId": "",
		"version": "", "first": s.FirstEventAt}
	// A parent (root) is the run of the job the facet names: a parent facet can name no other job's run.
	if s.Parent != nil {
		props["parentRunId"] = s.Parent.RunID
		if s.Parent.JobKey != "" {
			k := graph.RunKey(s.Parent.RunID, s.Parent.JobKey)
			props["parentKey"], row["parent"], row["parentJob"], row["parentRunId"] = k, k, s.Parent.JobKey, s.Parent.RunID
		}
	}
	if s.Root != nil {
		props["rootRunId"] = s.Root.RunID
		if s.Root.JobKey != "" {
			props["rootKey"] = graph.RunKey(s.Root.RunID, s.Root.JobKey)
		}
	}
	if s.DefHash != "" && s.JobKey != "" {
		v := graph.JobVersionKey(s.JobKey, s.DefHash)
		props["jobVersion"], row["version"] = v, v
		row["def"] = map[string]any{"jobKey": s.JobKey, "definitionHash": s.DefHash, "sql": s.Def.SQL,
			"sourceCode": s.Def.SourceCode, "sourceCodeLocation": s.Def.SourceLocation}
	} else {
		row["def"] = map[string]any{}
	}
	row["props"] = props
	return row, nil
}

// ioRows are the run's READ / WROTE rows. What every row of a run shares is kept once on the Run (docs/adr/0035):
// a row's lastAt when it is the run's ioLastAt, its eventIds when they are the run's ioEventIds (runIOLatest);
// readers take coalesce(row value, run value). A READ's publication is the run's (runPub), derived by readers.
func ioRows(s *fold.RunState) []any {
	var out []any
	lastAt, ids := runIOLatest(s)
	for _, dir := range []string{graph.RelRead, graph.RelWrote} {
		m := s.Inputs
		if dir == graph.RelWrote {
			m = s.Outputs
		}
		for _, k := range sortedIOKeys(m) {
			io := m[k]
			props := map[string]any{"firstAt": io.FirstAt, "datasetVersion": nilIfEmpty(io.Version),
				"producer": io.Producer}
			if io.LastAt != lastAt {
				props["lastAt"] = io.LastAt
			}
			if !slices.Equal(io.EventIDs, ids) {
				props["eventIds"] = toAny(io.EventIDs)
			}
			if io.Scan != "" { // ADR 0084 (scansnap.go)
				props["scanSnapshotId"], props["scanMatch"] = io.Scan, io.ScanMatch
				props["reportedVersion"] = nilIfEmpty(io.Reported)
			}
			if len(io.Facets) > 0 {
				b, _ := json.Marshal(io.Facets)
				props["facets"] = string(b)
			}
			if dir == graph.RelWrote {
				props["publication"] = io.Publication
				if io.Col != nil {
					props["columnLineage"] = encodeCols(io.Col)
				}
			}
			out = append(out, map[string]any{"run": s.Key, "ds": k, "dir": dir, "props": props})
		}
	}
	return out
}

// runIOLatest is the lastAt and the event ids the run's rows share: those of its latest-listed row (by lastAt, then
// READ before WROTE and dataset key). A RunEvent that lists no dataset (RUNNING) changes neither. nil when the run
// has no rows.
func runIOLatest(s *fold.RunState) (any, []string) {
	var best *fold.RunIO
	for _, m := range []map[string]*fold.RunIO{s.Inputs, s.Outputs} {
		for _, k := range sortedIOKeys(m) {
			if io := m[k]; best == nil || io.LastAt > best.LastAt {
				best = io
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	return best.LastAt, best.EventIDs
}

func sortedIOKeys(m map[string]*fold.RunIO) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
