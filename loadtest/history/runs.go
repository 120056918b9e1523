package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/gen"
)

func producerOf(j gen.Job) string { return gen.ProducerURI(j.Integration) }

// runIDFor is a reproducible run id under the world's prefix and seed.
func runIDFor(c gen.Config, job int, at int64) string {
	return gen.UUIDOf(c.Prefix, strconv.FormatUint(c.Seed, 10), "run", strconv.Itoa(job), strconv.FormatInt(at, 10))
}

// elementIDs maps node keys to Neo4j element ids for the runs phase (read once after the nodes exist).
type elementIDs struct {
	dataset []string // by dataset id
	job     []string // by job id
}

func (l *Loader) readElementIDs(ctx context.Context) (elementIDs, error) {
	ds, err := l.elementIDsOf(ctx, graph.LabelDataset, l.keys.dataset)
	if err != nil {
		return elementIDs{}, err
	}
	jobs, err := l.elementIDsOf(ctx, graph.LabelJob, l.keys.job)
	return elementIDs{dataset: ds, job: jobs}, err
}

func (l *Loader) elementIDsOf(ctx context.Context, label string, keys []string) ([]string, error) {
	res, err := neo4j.ExecuteQuery(ctx, l.store.Driver,
		"UNWIND range(0, size($keys)-1) AS i MATCH (n:"+label+" {key: $keys[i]}) RETURN i, elementId(n) AS id",
		map[string]any{"keys": keys}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(l.store.Database))
	if err != nil {
		return nil, fmt.Errorf("element ids of %s: %w", label, err)
	}
	out := make([]string, len(keys))
	for _, r := range res.Records {
		out[r.Values[0].(int64)] = r.Values[1].(string)
	}
	for i, id := range out {
		if id == "" {
			return nil, fmt.Errorf("element ids of %s: key %s not found", label, keys[i])
		}
	}
	return out, nil
}

// Phase names that scale with the number of runs.
const (
	PhaseRuns     = "runs"
	PhaseHubReads = "hub-reads"
)

// eachRun draws the run-detail window deterministically (the runs and hub-reads phases draw the same runs).
func (l *Loader) eachRun(f func(row map[string]any) error) error {
	w := l.cfg.World
	cum := make([]float64, len(w.Jobs))
	total := 0.0
	for i, j := range w.Jobs {
		total += j.Weight
		cum[i] = total
	}
	r := rand.New(rand.NewPCG(w.Config.Seed^hashPrefix(w.Config.Prefix), streamRunDetail))
	for d := l.cfg.RunDays; d > 0; d-- {
		dayStart := l.keys.end - int64(d)*dayMs
		for range w.Config.RunsPerDay {
			i := min(sort.SearchFloat64s(cum, r.Float64()*total), len(cum)-1)
			if err := f(l.runRow(r, w.Jobs[i], dayStart+r.Int64N(dayMs))); err != nil {
				return err
			}
		}
	}
	return nil
}

// runs: RunDays x RunsPerDay runs (jobs drawn by their frequency weight) with OF_JOB, READ of non-hub inputs
// and WROTE, one statement per chunk of runs, chunks spread over all writers.
func (l *Loader) runs(emit func(batch) error) error {
	perTx := max(1, l.cfg.BatchRows/rowsPerRunEstimate)
	var pending []map[string]any
	err := l.eachRun(func(row map[string]any) error {
		delete(row, "hubReads")
		pending = append(pending, row)
		if len(pending) >= perTx {
			b := batch{{cypher: cypherRuns, rows: pending}}
			pending = nil
			return emit(b)
		}
		return nil
	})
	if err != nil || len(pending) == 0 {
		return err
	}
	return emit(batch{{cypher: cypherRuns, rows: pending}})
}

// hubReads: the READs of the same runs to hub datasets, batched per hub, each hub on its own lane.
func (l *Loader) hubReads(emit func(int, batch) error) error {
	pending := map[int][]map[string]any{}
	flush := func(hub int) error {
		rows := pending[hub]
		delete(pending, hub)
		return emit(hub, batch{{cypher: cypherHubReads, rows: rows}})
	}
	err := l.eachRun(func(row map[string]any) error {
		for _, hr := range row["hubReads"].([]hubRead) {
			pending[hr.hub] = append(pending[hr.hub], map[string]any{"run": row["key"], "ds": hr.eid, "s": row["s"], "last": row["last"]})
			if len(pending[hr.hub]) >= l.cfg.BatchRows {
				if err := flush(hr.hub); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	hubs := make([]int, 0, len(pending))
	for h := range pending {
		hubs = append(hubs, h)
	}
	sort.Ints(hubs)
	for _, h := range hubs {
		if err := flush(h); err != nil {
			return err
		}
	}
	return nil
}

// hubRead is one READ of a run to a hub: the hub's index among the world's hubs (its lane) and element id.
type hubRead struct {
	hub int
	eid string
}

func hashPrefix(p string) uint64 {
	h := uint64(1469598103934665603)
	for i := 0; i < len(p); i++ {
		h = (h ^ uint64(p[i])) * 1099511628211
	}
	return h
}

func (l *Loader) runRow(r *rand.Rand, j gen.Job, start int64) map[string]any {
	c := l.cfg.World.Config
	id := gen.UUIDOf(c.Prefix, strconv.FormatUint(c.Seed, 10), "detail", strconv.FormatUint(r.Uint64(), 16))
	end := start + 60_000 + r.Int64N(30*60_000)
	state, pub, errMsg := "COMPLETE", graph.PubPublished, ""
	switch x := r.Float64(); {
	case j.Streaming:
		state, pub, end = "RUNNING", graph.PubPending, 0
	case x < c.FailShare:
		state, pub, errMsg = "FAIL", graph.PubAttempted, "task exited with status 1"
	case x < c.FailShare+c.AbortShare:
		state, pub, errMsg = "ABORT", graph.PubAttempted, "aborted by operator"
	}
	row := map[string]any{"key": id, "job": l.eids.job[j.ID], "jobKey": l.keys.job[j.ID], "state": state,
		"s": start, "e": nullable(end), "n": start - start%dayMs, "p": nil, "root": nil, "err": nullable(errMsg),
		"last": max(start, end), "pt": processingType(j), "pub": pub,
		"writes": l.datasetEIDs(j.Outputs)}
	row["reads"], row["hubReads"] = l.splitReads(j.Inputs)
	if j.ParentName != "" {
		row["p"] = gen.UUIDOf(c.Prefix, j.ParentNS, j.ParentName, strconv.FormatInt(start/dayMs, 10))
		row["root"] = gen.UUIDOf(c.Prefix, j.RootNS, j.RootName, strconv.FormatInt(start/dayMs, 10))
	}
	return row
}

// splitReads separates a run's inputs into ordinary datasets (written with the run) and hubs (hub-reads phase).
func (l *Loader) splitReads(ids []int) ([]string, []hubRead) {
	var reads []string
	var hubs []hubRead
	for _, id := range ids {
		if h, ok := l.hubIndex[id]; ok {
			hubs = append(hubs, hubRead{hub: h, eid: l.eids.dataset[id]})
			continue
		}
		reads = append(reads, l.eids.dataset[id])
	}
	return reads, hubs
}

func (l *Loader) datasetEIDs(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = l.eids.dataset[id]
	}
	return out
}

func processingType(j gen.Job) string {
	if j.Streaming {
		return "STREAMING"
	}
	return "BATCH"
}

// nullable turns zero values into null so the property is not set.
func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}
