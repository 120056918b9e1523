package graph

import "context"

// DatasetRow is a dataset node as read, named by the identity valid at the read's asOf.
type DatasetRow struct {
	Key         string
	Namespace   string // identity valid at asOf
	Name        string
	Env         string
	CurrentNS   string // identity now
	CurrentName string
	CreatedAt   int64
	DroppedAt   int64
	Description string
	Owners      string // JSON
	Tags        []string
	UpdatedAt   int64
}

// NameBinding is one DatasetName bound to a dataset.
type NameBinding struct {
	Namespace string
	Name      string
	Env       string
	Kind      string // PRIMARY, RENAMED, SYMLINK, ALIAS
	ValidFrom int64
	ValidTo   int64
}

const datasetProjection = `d{.key, .namespace, .name, .env, .createdAt, .droppedAt, .description, .owners, .tags, .updatedAt}`

func datasetRowOf(p Props, at Props) DatasetRow {
	r := DatasetRow{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"), Env: p.Str("env"),
		CurrentNS: p.Str("namespace"), CurrentName: p.Str("name"), CreatedAt: p.Int("createdAt"),
		DroppedAt: p.Int("droppedAt"), Description: p.Str("description"), Owners: p.Str("owners"),
		Tags: p.Strs("tags"), UpdatedAt: p.Int("updatedAt")}
	if at != nil && at.Str("name") != "" {
		r.Namespace, r.Name, r.Env = at.Str("namespace"), at.Str("name"), at.Str("env")
	}
	return r
}

// DatasetsByKeys reads datasets by key, each named as at asOf. Missing keys are absent from the map.
func (s *Store) DatasetsByKeys(ctx context.Context, keys []string, asOf int64) (map[string]DatasetRow, error) {
	recs, err := s.readRecords(ctx, `UNWIND $keys AS k MATCH (d:Dataset {key: k})
RETURN `+datasetProjection+` AS d, `+nameAt("d")+` AS at`, map[string]any{"keys": anyList(keys), "t": asOf})
	if err != nil {
		return nil, err
	}
	out := make(map[string]DatasetRow, len(recs))
	for _, r := range recs {
		row := datasetRowOf(Props(r).Sub("d"), Props(r).Sub("at"))
		out[row.Key] = row
	}
	return out, nil
}

// ResolveDatasetName finds the dataset a name denotes at asOf. A name valid at asOf (its own, a symlink or an
// alias) wins; otherwise the most recent closed binding (an old name after a RENAME) answers, and binding says
// which name matched so the caller can report the rename. found is false when no dataset ever had the name.
func (s *Store) ResolveDatasetName(ctx context.Context, ident string, asOf int64) (row DatasetRow, binding NameBinding, found bool, err error) {
	recs, err := s.readRecords(ctx, `MATCH (nm:DatasetName {ident: $ident})-[r:NAMES]->(d:Dataset)
WITH nm, r, d, (r.validFrom <= $t AND $t < r.validTo) AS current
ORDER BY current DESC, CASE r.kind WHEN 'PRIMARY' THEN 0 WHEN 'RENAMED' THEN 1 ELSE 2 END, r.validTo DESC
LIMIT 1
RETURN `+datasetProjection+` AS d, `+nameAt("d")+` AS at, nm{.namespace, .name, .env} AS nm, r{.kind, .validFrom, .validTo} AS r, current`,
		map[string]any{"ident": ident, "t": asOf})
	if err != nil || len(recs) == 0 {
		return DatasetRow{}, NameBinding{}, false, err
	}
	p := Props(recs[0])
	nm, rel := p.Sub("nm"), p.Sub("r")
	binding = NameBinding{Namespace: nm.Str("namespace"), Name: nm.Str("name"), Env: nm.Str("env"),
		Kind: rel.Str("kind"), ValidFrom: rel.Int("validFrom"), ValidTo: rel.Int("validTo")}
	return datasetRowOf(p.Sub("d"), p.Sub("at")), binding, true, nil
}

// DatasetNames lists every name ever bound to the dataset.
func (s *Store) DatasetNames(ctx context.Context, datasetKey string) ([]NameBinding, error) {
	recs, err := s.readRecords(ctx, `MATCH (nm:DatasetName)-[r:NAMES]->(:Dataset {key: $k})
RETURN nm.namespace AS ns, nm.name AS name, nm.env AS env, r.kind AS kind, r.validFrom AS vf, r.validTo AS vt
ORDER BY vf, ns, name`, map[string]any{"k": datasetKey})
	if err != nil {
		return nil, err
	}
	out := make([]NameBinding, len(recs))
	for i, r := range recs {
		p := Props(r)
		out[i] = NameBinding{Namespace: p.Str("ns"), Name: p.Str("name"), Env: p.Str("env"), Kind: p.Str("kind"),
			ValidFrom: p.Int("vf"), ValidTo: p.Int("vt")}
	}
	return out, nil
}

// DatasetVersionRow is one version of a dataset.
type DatasetVersionRow struct {
	Key, Version, Lifecycle string
	FirstSeenAt             int64
}

// DatasetVersions lists versions of a dataset, newest first, from offset.
func (s *Store) DatasetVersions(ctx context.Context, datasetKey string, offset, limit int) ([]DatasetVersionRow, error) {
	recs, err := s.readRecords(ctx, `MATCH (v:DatasetVersion)-[:VERSION_OF]->(:Dataset {key: $k})
RETURN v.key AS key, v.version AS version, v.lifecycle AS lifecycle, v.firstSeenAt AS fs
ORDER BY fs DESC, key SKIP $off LIMIT $lim`, map[string]any{"k": datasetKey, "off": offset, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]DatasetVersionRow, len(recs))
	for i, r := range recs {
		p := Props(r)
		out[i] = DatasetVersionRow{Key: p.Str("key"), Version: p.Str("version"), Lifecycle: p.Str("lifecycle"),
			FirstSeenAt: p.Int("fs")}
	}
	return out, nil
}

// LastWriter returns the run that most recently wrote the dataset ("" when none).
func (s *Store) LastWriter(ctx context.Context, datasetKey string) (string, error) {
	recs, err := s.readRecords(ctx, `MATCH (r:Run)-[w:WROTE]->(:Dataset {key: $k})
RETURN r.key AS key ORDER BY w.lastAt DESC, key LIMIT 1`, map[string]any{"k": datasetKey})
	if err != nil || len(recs) == 0 {
		return "", err
	}
	return Props(recs[0]).Str("key"), nil
}

func anyList(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
