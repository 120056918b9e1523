package graph

import "context"

// HopQuery asks for the lineage neighbours of a whole frontier in one read.
type HopQuery struct {
	Keys []string // frontier node keys (all of one kind)
	Down bool     // true: downstream (what the nodes feed); false: upstream
	AsOf int64    // epoch ms: an interval i counts when froms[i] <= AsOf < tos[i]
	Pubs []string // publication states that count (PUBLISHED; plus ATTEMPTED, PENDING with includeAttempted)
	// Limit, when positive, keeps per frontier node only the first Limit neighbours in key order (with every
	// relationship to them): the rest of a hub's neighbours are never projected. Dataset hops only.
	Limit int
}

// Rel is a temporal lineage relationship as stored (see docs/graph-model.md).
type Rel struct {
	Kind            string   `json:"k"`
	Froms           []int64  `json:"f"`
	Tos             []int64  `json:"t"`
	Pubs            []string `json:"p"`
	FirstObservedAt int64    `json:"fo,omitempty"`
	LastObservedAt  int64    `json:"lo,omitempty"`
	Producer        string   `json:"pr,omitempty"`
	EventIDs        []string `json:"e,omitempty"`
	JobVersion      string   `json:"jv,omitempty"`
	LastRunID       string   `json:"ri,omitempty"`
	LastRunState    string   `json:"rs,omitempty"`
	Derivation      string   `json:"d,omitempty"`
	// Column lineage only.
	JobKey        string   `json:"jk,omitempty"`
	TTypes        []string `json:"tt,omitempty"`
	TSubtypes     []string `json:"ts,omitempty"`
	TMasking      []bool   `json:"tm,omitempty"`
	TDescriptions []string `json:"td,omitempty"`
}

// NameRef is a dataset identity (the one valid at the hop's AsOf).
type NameRef struct {
	Namespace string `json:"ns"`
	Name      string `json:"n"`
	Env       string `json:"env,omitempty"`
}

// JobBrief is what a hop needs to know of the job between two datasets.
type JobBrief struct {
	Key         string `json:"key"`
	Namespace   string `json:"ns"`
	Name        string `json:"n"`
	FirstSeenAt int64  `json:"fs,omitempty"`
	LastSeenAt  int64  `json:"ls,omitempty"`
	Runs        int64  `json:"r,omitempty"`
}

// HopRow is one (source, neighbour, job) relationship pair found by a hop. For a dataset hop through a job,
// In is the INPUT_TO leg and Out the OUTPUT_TO leg whatever the direction; for DECLARED_FEEDS Job and In are nil
// and Out holds the relationship. For a job as start node only the leg touching the job is set. For a field hop
// Out holds the COLUMN_FEEDS relationship.
type HopRow struct {
	Src     string    `json:"s"`
	Dst     string    `json:"d"`
	Job     *JobBrief `json:"j,omitempty"`
	In      *Rel      `json:"in,omitempty"`
	Out     *Rel      `json:"out,omitempty"`
	DstName NameRef   `json:"dn"`
	// DstCurrent is the neighbour's current identity (for a field, its dataset's): permissions are checked under
	// it and under DstName when they differ.
	DstCurrent NameRef `json:"dc"`
	// Field hops only: the neighbour field's dataset and path.
	DstDataset string `json:"dd,omitempty"`
	DstPath    string `json:"dp,omitempty"`
}

// nameAt is a pattern comprehension giving the identity of dataset variable v valid at $t. A dataset with one
// name (its NAMES degree, read from the degree store in constant time) is named at $t as it is now, so the
// lookup runs only for renamed or aliased datasets: a hub's neighbours mostly cost a property read.
func nameAt(v string) string {
	return `CASE WHEN COUNT { (` + v + `)<-[:NAMES]-() } > 1 THEN coalesce([(nmAt:DatasetName)-[rAt:NAMES]->(` + v + `) WHERE rAt.kind IN ['PRIMARY','RENAMED'] AND rAt.validFrom <= $t AND $t < rAt.validTo | nmAt{.namespace, .name, .env}][0], ` + v + `{.namespace, .name, .env}) ELSE ` + v + `{.namespace, .name, .env} END`
}

// Only Run nodes have OF_JOB relationships, so the count leaves the label out: Neo4j then answers it from the
// relationship degree store (constant time) instead of visiting every run of the job (thousands for hourly jobs).
const jobBrief = `j{.key, .namespace, .name, .firstSeenAt, .lastSeenAt, runs: COUNT { (j)<-[:OF_JOB]-() }}`

func datasetHopCypher(down bool, limited bool) string {
	// INPUT_TO always ends at a Job and OUTPUT_TO at a Dataset: leaving the labels out of the pattern saves a label
	// check per relationship on hubs.
	through := `(s)-[a:INPUT_TO]->(j)-[b:OUTPUT_TO]->(n)`
	declared := `(s)-[c:DECLARED_FEEDS]->(n:Dataset)`
	if !down {
		through = `(s)<-[b:OUTPUT_TO]-(j)<-[a:INPUT_TO]-(n)`
		declared = `(s)<-[c:DECLARED_FEEDS]-(n:Dataset)`
	}
	throughWhere := `a.validTo > $t AND b.validTo > $t AND ` + inForceOf("a") + ` AND ` + inForceOf("b")
	declaredWhere := `c.validTo > $t AND ` + inForceOf("c")
	tail := `
RETURN k AS src, n.key AS dst, job, inRel, outRel, ` + nameAt("n") + ` AS dstName, n{.namespace, .name, .env} AS dstCurrent`
	if !limited {
		return `UNWIND $keys AS k
MATCH (s:Dataset {key: k})
CALL (s) {
  MATCH ` + through + `
  WHERE ` + throughWhere + `
  RETURN n, ` + jobBrief + ` AS job, properties(a) AS inRel, properties(b) AS outRel
  UNION ALL
  MATCH ` + declared + `
  WHERE ` + declaredWhere + `
  RETURN n, null AS job, null AS inRel, properties(c) AS outRel
}` + tail
	}
	// Limited: find the relationships in force, group them by neighbour, keep the first $limit neighbours in key
	// order, and only then project the relationships, jobs and names (the costly part for a hub).
	return `UNWIND $keys AS k
MATCH (s:Dataset {key: k})
CALL (s) {
  CALL (s) {
    MATCH ` + through + `
    WHERE ` + throughWhere + `
    RETURN n, j, a, b
    UNION ALL
    MATCH ` + declared + `
    WHERE ` + declaredWhere + `
    RETURN n, null AS j, null AS a, c AS b
  }
  WITH n, collect([j, a, b]) AS legs
  ORDER BY n.key
  LIMIT $limit
  UNWIND legs AS leg
  WITH n, leg[0] AS j, leg[1] AS a, leg[2] AS b
  RETURN n, CASE WHEN j IS NULL THEN null ELSE ` + jobBrief + ` END AS job,
    CASE WHEN a IS NULL THEN null ELSE properties(a) END AS inRel, properties(b) AS outRel
}` + tail
}

// DatasetHop reads the dataset neighbours of every frontier dataset, through jobs (both legs) and declared
// dataset-to-dataset lineage, keeping only relationships with an interval in force at AsOf whose publication
// counts. One query for the whole frontier.
func (s *Store) DatasetHop(ctx context.Context, q HopQuery) ([]HopRow, error) {
	recs, err := s.readRecords(ctx, datasetHopCypher(q.Down, q.Limit > 0), hopParams(q))
	if err != nil {
		return nil, err
	}
	return datasetRows(recs), nil
}

func datasetRows(recs []map[string]any) []HopRow {
	out := make([]HopRow, 0, len(recs))
	for _, r := range recs {
		p := Props(r)
		out = append(out, HopRow{Src: p.Str("src"), Dst: p.Str("dst"), Job: jobOf(p.Sub("job")),
			In: relOf(p.Sub("inRel")), Out: relOf(p.Sub("outRel")), DstName: nameOf(p.Sub("dstName")),
			DstCurrent: nameOf(p.Sub("dstCurrent"))})
	}
	return out
}

func jobHopCypher(down bool) string {
	leg := `(j)-[b:OUTPUT_TO]->(n:Dataset)`
	if !down {
		leg = `(j)<-[b:INPUT_TO]-(n:Dataset)`
	}
	return `UNWIND $keys AS k
MATCH (j:Job {key: k})
MATCH ` + leg + `
WHERE b.validTo > $t AND ` + inForceOf("b") + `
RETURN k AS src, n.key AS dst, ` + jobBrief + ` AS job, properties(b) AS rel, ` + nameAt("n") + ` AS dstName,
  n{.namespace, .name, .env} AS dstCurrent`
}

// JobHop reads the outputs (Down) or inputs of jobs: the first hop when a job is the start node.
func (s *Store) JobHop(ctx context.Context, q HopQuery) ([]HopRow, error) {
	recs, err := s.readRecords(ctx, jobHopCypher(q.Down), hopParams(q))
	if err != nil {
		return nil, err
	}
	out := make([]HopRow, 0, len(recs))
	for _, r := range recs {
		p := Props(r)
		row := HopRow{Src: p.Str("src"), Dst: p.Str("dst"), Job: jobOf(p.Sub("job")), DstName: nameOf(p.Sub("dstName")),
			DstCurrent: nameOf(p.Sub("dstCurrent"))}
		if q.Down {
			row.Out = relOf(p.Sub("rel"))
		} else {
			row.In = relOf(p.Sub("rel"))
		}
		out = append(out, row)
	}
	return out, nil
}

func hopParams(q HopQuery) map[string]any {
	keys := make([]any, len(q.Keys))
	for i, k := range q.Keys {
		keys[i] = k
	}
	pubs := make([]any, len(q.Pubs))
	for i, p := range q.Pubs {
		pubs[i] = p
	}
	return map[string]any{"keys": keys, "t": q.AsOf, "pubs": pubs, "limit": q.Limit}
}

func relOf(p Props) *Rel {
	if p == nil {
		return nil
	}
	return &Rel{Kind: p.Str("kind"), Froms: p.Ints("froms"), Tos: p.Ints("tos"), Pubs: p.Strs("pubs"),
		FirstObservedAt: p.Int("firstObservedAt"), LastObservedAt: p.Int("lastObservedAt"),
		Producer: p.Str("producer"), EventIDs: p.Strs("eventIds"), JobVersion: p.Str("jobVersion"),
		LastRunID: p.Str("lastRunId"), LastRunState: p.Str("lastRunState"), Derivation: p.Str("derivation"),
		JobKey: p.Str("jobKey"), TTypes: p.Strs("tTypes"), TSubtypes: p.Strs("tSubtypes"),
		TMasking: p.Bools("tMasking"), TDescriptions: p.Strs("tDescriptions")}
}

func jobOf(p Props) *JobBrief {
	if p == nil {
		return nil
	}
	return &JobBrief{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"),
		FirstSeenAt: p.Int("firstSeenAt"), LastSeenAt: p.Int("lastSeenAt"), Runs: p.Int("runs")}
}

func nameOf(p Props) NameRef {
	return NameRef{Namespace: p.Str("namespace"), Name: p.Str("name"), Env: p.Str("env")}
}
