package catalogread

import (
	"context"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/graph"
)

const datasetProjection = `d{.key, .namespace, .name, .env, .createdAt, .droppedAt, .description, .owners, .tags, .tagHistory, .blockHistory, .updatedAt}`

func datasetRowOf(p graph.Props, at graph.Props) graph.DatasetRow {
	r := graph.DatasetRow{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"), Env: p.Str("env"),
		CurrentNS: p.Str("namespace"), CurrentName: p.Str("name"), CreatedAt: p.Int("createdAt"),
		DroppedAt: p.Int("droppedAt"), Description: p.Str("description"), Owners: p.Str("owners"),
		Tags: p.Strs("tags"), UpdatedAt: p.Int("updatedAt"),
		TagHistory: graph.ParseTagHistory(p.Str("tagHistory")), BlockHistory: graph.ParseBlockHistory(p.Str("blockHistory"))}
	if at != nil && at.Str("name") != "" {
		r.Namespace, r.Name, r.Env = at.Str("namespace"), at.Str("name"), at.Str("env")
	}
	return r
}

// DatasetsByKeys reads datasets by key, each named as at asOf. Missing keys are absent from the map.
func (s *Store) DatasetsByKeys(ctx context.Context, keys []string, asOf int64) (map[string]graph.DatasetRow, error) {
	recs, err := s.ReadRecords(ctx, `UNWIND $keys AS k MATCH (d:Dataset {key: k})
RETURN `+datasetProjection+` AS d, `+graph.NameAtCypher("d")+` AS at`, map[string]any{"keys": anyList(keys), "t": asOf})
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.DatasetRow, len(recs))
	for _, r := range recs {
		row := datasetRowOf(graph.Props(r).Sub("d"), graph.Props(r).Sub("at"))
		out[row.Key] = row
	}
	return out, nil
}

// ResolveDatasetName finds the dataset a name denotes at asOf. A name valid at asOf (its own, a symlink or an
// alias) wins; otherwise the most recent closed binding (an old name after a RENAME) answers, and binding says
// which name matched so the caller can report the rename. found is false when no dataset ever had the name.
func (s *Store) ResolveDatasetName(ctx context.Context, ident string, asOf int64) (row graph.DatasetRow, binding graph.NameBinding, found bool, err error) {
	recs, err := s.ReadRecords(ctx, `MATCH (nm:DatasetName {ident: $ident})-[r:NAMES]->(d:Dataset)
WITH nm, r, d, (r.validFrom <= $t AND $t < r.validTo) AS current
ORDER BY current DESC, CASE r.kind WHEN 'PRIMARY' THEN 0 WHEN 'RENAMED' THEN 1 ELSE 2 END, r.validTo DESC
LIMIT 1
RETURN `+datasetProjection+` AS d, `+graph.NameAtCypher("d")+` AS at, nm{.namespace, .name, .env} AS nm, r{.kind, .validFrom, .validTo} AS r, current`,
		map[string]any{"ident": ident, "t": asOf})
	if err != nil || len(recs) == 0 {
		return graph.DatasetRow{}, graph.NameBinding{}, false, err
	}
	p := graph.Props(recs[0])
	nm, rel := p.Sub("nm"), p.Sub("r")
	binding = graph.NameBinding{Namespace: nm.Str("namespace"), Name: nm.Str("name"), Env: nm.Str("env"),
		Kind: rel.Str("kind"), ValidFrom: rel.Int("validFrom"), ValidTo: rel.Int("validTo")}
	return datasetRowOf(p.Sub("d"), p.Sub("at")), binding, true, nil
}

// DatasetNames lists every name ever bound to the dataset.
func (s *Store) DatasetNames(ctx context.Context, datasetKey string) ([]graph.NameBinding, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (nm:DatasetName)-[r:NAMES]->(:Dataset {key: $k})
RETURN nm.namespace AS ns, nm.name AS name, nm.env AS env, r.kind AS kind, r.validFrom AS vf, r.validTo AS vt
ORDER BY vf, ns, name`, map[string]any{"k": datasetKey})
	if err != nil {
		return nil, err
	}
	out := make([]graph.NameBinding, len(recs))
	for i, r := range recs {
		p := graph.Props(r)
		out[i] = graph.NameBinding{Namespace: p.Str("ns"), Name: p.Str("name"), Env: p.Str("env"), Kind: p.Str("kind"),
			ValidFrom: p.Int("vf"), ValidTo: p.Int("vt")}
	}
	return out, nil
}

// DatasetVersions lists versions of a dataset, newest first, from offset.
func (s *Store) DatasetVersions(ctx context.Context, datasetKey string, offset, limit int) ([]graph.DatasetVersionRow, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (v:DatasetVersion)-[:VERSION_OF]->(:Dataset {key: $k})
RETURN v.key AS key, v.version AS version, v.lifecycle AS lifecycle, v.firstSeenAt AS fs,
  v.parentVersion AS parent, v.committedAt AS committed, v.operation AS op, v.summary AS summary
ORDER BY fs DESC, key SKIP $off LIMIT $lim`, map[string]any{"k": datasetKey, "off": offset, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]graph.DatasetVersionRow, len(recs))
	for i, r := range recs {
		p := graph.Props(r)
		out[i] = graph.DatasetVersionRow{Key: p.Str("key"), Version: p.Str("version"), Lifecycle: p.Str("lifecycle"),
			FirstSeenAt: p.Int("fs"), ParentVersion: p.Str("parent"), CommittedAt: p.Int("committed"), Operation: p.Str("op"),
			Summary: p.Str("summary")}
	}
	return out, nil
}

// LastWriter returns the run that most recently wrote the dataset ("" when none).
func (s *Store) LastWriter(ctx context.Context, datasetKey string) (string, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (r:Run)-[w:WROTE]->(:Dataset {key: $k})
RETURN r.key AS key ORDER BY coalesce(w.lastAt, r.ioLastAt) DESC, key LIMIT 1`, map[string]any{"k": datasetKey})
	if err != nil || len(recs) == 0 {
		return "", err
	}
	return graph.Props(recs[0]).Str("key"), nil
}

// VersionWriters returns the runs whose WROTE names the version (the run that produced an Iceberg snapshot),
// newest first, at most limit (through the index on WROTE.datasetVersion).
func (s *Store) VersionWriters(ctx context.Context, datasetKey, version string, limit int) ([]string, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (r:Run)-[:WROTE {datasetVersion: $v}]->(:Dataset {key: $k})
RETURN r.key AS key ORDER BY r.firstEventAt DESC, key LIMIT $lim`, map[string]any{"k": datasetKey, "v": version, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = graph.Props(r).Str("key")
	}
	return out, nil
}

func anyList(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// TaggedScan is one bounded step of the scan for tagged datasets: the datasets of the page carrying the class,
// how many datasets the page read and the last key read (the next page starts after it).
type TaggedScan struct {
	Rows    []graph.DatasetRow
	Scanned int
	Last    string
}

// TaggedDatasets reads the next page of at most scan datasets by key after `after`, and returns those carrying a
// tag of class (lower case) or of a class below it (a stored tag `[field:]key[=value]`, its key compared lower
// case) in force at asOf (Dataset.tagHistory; projection version 6), each named as at asOf: the origins of a graph-wide piiFlow (the caller checks permissions). Without an
// index on tags each page reads scan datasets, so the caller bounds the pages.
func (s *Store) TaggedDatasets(ctx context.Context, class, after string, scan int, asOf int64) (TaggedScan, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (p:Dataset) WHERE p.key > $after
WITH p ORDER BY p.key LIMIT $scan
WITH collect(p) AS page
CALL {
  WITH page
  UNWIND page AS d
  WITH d WHERE any(tag IN coalesce(d.tagNames, d.tags, [])
    WHERE toLower(last(split(split(tag, '=')[0], ':'))) = $class
       OR toLower(last(split(split(tag, '=')[0], ':'))) STARTS WITH $class + '.')
  RETURN collect({d: `+datasetProjection+`, at: `+graph.NameAtCypher("d")+`}) AS rows
}
RETURN rows, size(page) AS n, CASE WHEN size(page) = 0 THEN $after ELSE page[size(page) - 1].key END AS last`,
		map[string]any{"class": class, "after": after, "scan": scan, "t": asOf})
	if err != nil || len(recs) == 0 {
		return TaggedScan{}, err
	}
	p := graph.Props(recs[0])
	out := TaggedScan{Scanned: int(p.Int("n")), Last: p.Str("last")}
	for _, r := range p.List("rows") {
		row := datasetRowOf(r.Sub("d"), r.Sub("at"))
		if slices.ContainsFunc(row.TagsAt(asOf), func(tag string) bool { return tagOfClass(tag, class) }) {
			out.Rows = append(out.Rows, row) // tagNames holds every tag ever: keep those in force at asOf
		}
	}
	return out, nil
}

// tagOfClass is the scan's Cypher test in Go: the tag's key (lower case) is class or below it.
func tagOfClass(tag, class string) bool {
	key, _, _ := strings.Cut(tag, "=")
	if i := strings.LastIndex(key, ":"); i >= 0 {
		key = key[i+1:]
	}
	key = strings.ToLower(key)
	return key == class || strings.HasPrefix(key, class+".")
}
