package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// ErrPrefixInUse means data already exists under the world's namespaces; the loader never mixes runs.
var ErrPrefixInUse = errors.New("namespace prefix already has data")

// Loader writes one world's history into Neo4j.
type Loader struct {
	store    *graph.Store
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	keys     keys
	eids     elementIDs  // filled after the node phases
	hubIndex map[int]int // dataset id -> index among the world's hubs
}

// Result is what a load wrote and what Neo4j holds afterwards under the prefix.
type Result struct {
	Prefix     string        `json:"prefix"`
	Phases     []PhaseResult `json:"phases"`
	Rows       int64         `json:"rows"`
	Elapsed    time.Duration `json:"elapsedNs"`
	RowsPerSec float64       `json:"rowsPerSec"`
	Counts     Counts        `json:"counts"`
}

// NewLoader validates the config. now is the clock used to time phases.
func NewLoader(store *graph.Store, cfg Config, log *slog.Logger, now func() time.Time) (*Loader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hubs := map[int]int{}
	for i, h := range cfg.World.Hubs {
		hubs[h] = i
	}
	return &Loader{store: store, cfg: cfg, log: log, now: now, keys: newKeys(cfg), hubIndex: hubs}, nil
}

// Load writes every phase in dependency order and reads the counts back.
func (l *Loader) Load(ctx context.Context) (Result, error) {
	prefix := l.cfg.World.Config.Prefix
	res := Result{Prefix: prefix}
	existing, err := ReadCounts(ctx, l.store, prefix)
	if err != nil {
		return res, err
	}
	if existing.Datasets > 0 || existing.Jobs > 0 {
		return res, fmt.Errorf("%w: %q has %d datasets and %d jobs", ErrPrefixInUse, prefix, existing.Datasets, existing.Jobs)
	}
	start := l.now()
	phases := []struct {
		name string
		p    lanedProducer
	}{
		{"datasets", anyLane(l.datasets)}, {"jobs", anyLane(l.jobs)}, {"fields", anyLane(l.fields)},
		{"lineage-edges", anyLane(l.edges)}, {"column-lineage", anyLane(l.columns)}, {PhaseRuns, anyLane(l.runs)},
		{PhaseHubReads, l.hubReads},
	}
	for _, ph := range phases {
		if ph.name == PhaseRuns {
			if l.eids, err = l.readElementIDs(ctx); err != nil {
				return res, err
			}
		}
		pr, err := l.runPhase(ctx, ph.name, ph.p)
		res.Phases = append(res.Phases, pr)
		res.Rows += pr.Rows
		if err != nil {
			return res, err
		}
	}
	res.Elapsed = l.now().Sub(start)
	if s := res.Elapsed.Seconds(); s > 0 {
		res.RowsPerSec = float64(res.Rows) / s
	}
	res.Counts, err = ReadCounts(ctx, l.store, prefix)
	return res, err
}

// keys caches the graph keys and times every phase needs.
type keys struct {
	dataset []string // by dataset id
	created []int64  // dataset createdAt (and field history start)
	job     []string // by job id
	jobVer  []string
	start   int64 // start of the history (ms)
	end     int64 // end of the history (ms)
}

func newKeys(c Config) keys {
	w := c.World
	end := graph.Millis(c.End)
	k := keys{start: end - int64(c.HistoryDays)*dayMs, end: end}
	r := rand.New(rand.NewPCG(w.Config.Seed, streamCreated))
	for _, d := range w.Datasets {
		// keys hash the namespace's key form, as the projector does (ADR 0026)
		k.dataset = append(k.dataset, graph.DatasetKey(d.Env, normalize.KeyNamespace(d.Namespace), firstName(d)))
		off := int64(0)
		if d.Layer > 0 {
			off = r.Int64N(int64(c.HistoryDays) * dayMs / 2)
		}
		k.created = append(k.created, k.start+off)
	}
	for _, j := range w.Jobs {
		jk := graph.JobKey(normalize.KeyNamespace(j.Namespace), j.Name)
		k.job = append(k.job, jk)
		k.jobVer = append(k.jobVer, graph.JobVersionKey(jk, definitionHash(j)))
	}
	return k
}

const (
	dayMs           = int64(24 * time.Hour / time.Millisecond)
	streamCreated   = 101
	streamEdges     = 102
	streamRunDetail = 103
	renamedEvery    = 97 // one dataset in this many was renamed once in its history
)

// firstName is the identity that first created the dataset: renamed datasets had a legacy name.
func firstName(d gen.Dataset) string {
	if d.ID%renamedEvery == 1 {
		return d.Name + "_legacy"
	}
	return d.Name
}

func sortRows(rows []map[string]any, key string) {
	if key == "" {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i][key].(string) < rows[j][key].(string) })
}
