package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// layerShares splits datasets into layers: 0 are sources (written by nobody we see), 1..4 are derived.
var layerShares = []float64{0.30, 0.25, 0.20, 0.15, 0.10}

// Field is one column; nested struct members have paths joined by ".".
type Field struct {
	Path string
	Type string
}

// Dataset is one dataset of the world, under its original identity (renames happen in the Stream).
type Dataset struct {
	ID        int
	Env       string
	Platform  string
	Namespace string
	Name      string
	Layer     int
	Hub       bool
	Fields    []Field
	// Tags are the dataset's tags as the graph stores them (`field:key=value`): the PII classes its owners put on
	// a source's personal columns (sourceTags); none on derived datasets, whose PII is what piiFlow derives.
	Tags []string
}

// Job is one job with its declared inputs and outputs and its producer's shape.
type Job struct {
	ID             int
	Env            string
	Integration    string
	Namespace      string
	Name           string
	JobType        string // TASK, JOB, MODEL, STREAMING
	Streaming      bool
	Inputs         []int  // dataset ids
	Outputs        []int  // dataset ids
	ColumnLineage  []bool // parallel to Outputs: this output carries a columnLineage facet
	ParentName     string // parent job name in ParentNS ("" when the job has no parent)
	ParentNS       string
	RootName       string
	RootNS         string
	Weight         float64 // relative runs per day
	SQL            string
	SourceLocation string
}

// World is the static shape of the generated lineage graph.
type World struct {
	Config     Config
	Datasets   []Dataset
	Jobs       []Job
	Hubs       []int // dataset ids
	byEnvLayer map[string][]int
}

// NewWorld builds the world for a validated config. It is deterministic in the config.
func NewWorld(c Config) (*World, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w := &World{Config: c, byEnvLayer: map[string][]int{}}
	r := newRand(c.Seed, streamWorld)
	w.buildDatasets(r)
	w.buildJobs(r)
	w.attachHubs(newRand(c.Seed, streamHubs))
	return w, nil
}

func envLayerKey(env string, layer int) string { return fmt.Sprintf("%s/%d", env, layer) }

func (w *World) buildDatasets(r *rand.Rand) {
	n := w.Config.Datasets
	w.Datasets = make([]Dataset, n)
	bound, layer := layerShares[0]*float64(n), 0
	for i := range n {
		for float64(i) >= bound && layer < len(layerShares)-1 {
			layer++
			bound += layerShares[layer] * float64(n)
		}
		env := EnvProd
		if r.Float64() < w.Config.StagingShare {
			env = EnvStaging
		}
		pl := platformFor(layer, r)
		w.Datasets[i] = Dataset{ID: i, Env: env, Platform: pl, Layer: layer,
			Namespace: datasetNamespace(w.Config.Prefix, pl, env, r.IntN(hostsPerPlatform)),
			Name:      datasetName(pl, layer, i, r), Fields: makeFields(pl, r)}
		w.Datasets[i].Tags = sourceTags(layer, w.Datasets[i].Fields)
		k := envLayerKey(env, layer)
		w.byEnvLayer[k] = append(w.byEnvLayer[k], i)
	}
}

func platformFor(layer int, r *rand.Rand) string {
	x := r.Float64()
	switch {
	case layer == 0 && x < 0.40:
		return PlatformPostgres
	case layer == 0 && x < 0.65:
		return PlatformKafka
	case layer == 0:
		return PlatformS3
	case layer <= 2 && x < 0.5:
		return PlatformS3
	case layer <= 2:
		return PlatformSnowflake
	case x < 0.8:
		return PlatformSnowflake
	default:
		return PlatformPostgres
	}
}

// buildJobs makes one job per one or two derived datasets of a layer, reading from lower layers of its env.
func (w *World) buildJobs(r *rand.Rand) {
	for layer := 1; layer < len(layerShares); layer++ {
		for _, env := range []string{EnvProd, EnvStaging} {
			outs := w.byEnvLayer[envLayerKey(env, layer)]
			for i := 0; i < len(outs); {
				k := 1
				if r.Float64() < 0.3 && i+1 < len(outs) {
					k = 2
				}
				w.addJob(env, layer, outs[i:i+k], r)
				i += k
			}
		}
	}
}

func (w *World) addJob(env string, layer int, outs []int, r *rand.Rand) {
	j := Job{ID: len(w.Jobs), Env: env, Outputs: append([]int(nil), outs...)}
	j.Inputs = w.pickInputs(env, layer, 1+r.IntN(4), r)
	j.Integration = integrationFor(layer, r)
	if r.Float64() < w.Config.StreamingShare {
		if topic, ok := w.pickPlatform(env, PlatformKafka, r); ok {
			j.Integration, j.Streaming = IntegrationFlink, true
			j.Inputs = append([]int{topic}, j.Inputs...)
		}
	}
	for range j.Outputs {
		j.ColumnLineage = append(j.ColumnLineage, r.Float64() < w.Config.ColumnShare)
	}
	j.Weight = frequencyFor(j.Streaming, r)
	w.nameJob(&j, r)
	w.Jobs = append(w.Jobs, j)
}

func (w *World) pickInputs(env string, layer, n int, r *rand.Rand) []int {
	seen := map[int]bool{}
	var ins []int
	for tries := 0; len(ins) < n && tries < 4*n; tries++ {
		from := layer - 1
		if r.Float64() < 0.3 {
			from = r.IntN(layer)
		}
		cands := w.byEnvLayer[envLayerKey(env, from)]
		if len(cands) == 0 {
			continue
		}
		id := pick(r, cands)
		if !seen[id] {
			seen[id] = true
			ins = append(ins, id)
		}
	}
	return ins
}

func (w *World) pickPlatform(env, platform string, r *rand.Rand) (int, bool) {
	cands := w.byEnvLayer[envLayerKey(env, 0)]
	for range 32 {
		if len(cands) == 0 {
			break
		}
		id := pick(r, cands)
		if w.Datasets[id].Platform == platform {
			return id, true
		}
	}
	return 0, false
}

func integrationFor(layer int, r *rand.Rand) string {
	x := r.Float64()
	switch {
	case layer == 1 && x < 0.45, layer >= 2 && layer <= 3 && x < 0.30, layer == 4 && x < 0.4:
		return IntegrationSpark
	case layer == 1 && x < 0.70, layer >= 2 && layer <= 3 && x < 0.50, layer == 4:
		return IntegrationAirflow
	default:
		return IntegrationDBT
	}
}

// frequencyFor draws how many runs a day the job has, relative to the others (daily, 4x, hourly, 15 min).
func frequencyFor(streaming bool, r *rand.Rand) float64 {
	x := r.Float64()
	switch {
	case streaming:
		return 24 // one RUNNING snapshot batch an hour
	case x < 0.55:
		return 1
	case x < 0.75:
		return 4
	case x < 0.95:
		return 24
	default:
		return 96
	}
}

// attachHubs chooses hub datasets among prod sources and gives each HubConsumers+ consumer jobs.
func (w *World) attachHubs(r *rand.Rand) {
	sources := w.byEnvLayer[envLayerKey(EnvProd, 0)]
	var eligible []int
	for _, j := range w.Jobs {
		if j.Env == EnvProd {
			eligible = append(eligible, j.ID)
		}
	}
	for h := 0; h < w.Config.HubCount() && h < len(sources); h++ {
		hub := sources[r.IntN(len(sources))]
		if w.Datasets[hub].Hub {
			continue
		}
		w.Datasets[hub].Hub = true
		w.Hubs = append(w.Hubs, hub)
		want := min(len(eligible), w.Config.HubConsumers+r.IntN(w.Config.HubConsumers/10+1))
		for i := range want { // partial Fisher-Yates
			k := i + r.IntN(len(eligible)-i)
			eligible[i], eligible[k] = eligible[k], eligible[i]
			j := &w.Jobs[eligible[i]]
			if !contains(j.Inputs, hub) {
				j.Inputs = append(j.Inputs, hub)
			}
		}
	}
}

func contains(xs []int, x int) bool {
	return slices.Contains(xs, x)
}

// Consumers counts, per dataset id, the jobs that read it (computed from the world, nothing written).
func (w *World) Consumers() map[int]int {
	out := map[int]int{}
	for _, j := range w.Jobs {
		for _, in := range j.Inputs {
			out[in]++
		}
	}
	return out
}

// Leaves returns datasets nobody reads (the last layer mostly): ordinary roots for downstream-poor queries.
func (w *World) Leaves() []int {
	cons := w.Consumers()
	var out []int
	for _, d := range w.Datasets {
		if cons[d.ID] == 0 && d.Layer > 0 {
			out = append(out, d.ID)
		}
	}
	return out
}
