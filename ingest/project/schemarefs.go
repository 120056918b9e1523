package project

import (
	"slices"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// Column lineage through the snapshot's schema (projection version 7, docs/adr/0065): the catalog sync sends each
// Iceberg schema of a table once (schema id -> path -> field id), kept on the dataset's fold state and derived onto
// Dataset.icebergSchemas, and each snapshot's schema id (DatasetVersion.schemaId). A run's column-lineage reference
// to a dataset whose version it names is then resolved through that version's schema (fold.ResolveField).

// iceSchemas are a dataset's Iceberg schemas: schema id -> path -> field id (decimal text).
type iceSchemas map[string]map[string]string

// merge is the union of s and o (s is changed in place, or made). Iceberg never changes a schema once it has an
// id; should two events disagree on a path, the smaller field id wins, so the result does not depend on order.
func (s iceSchemas) merge(o iceSchemas) iceSchemas {
	for id, paths := range o {
		if s == nil {
			s = iceSchemas{}
		}
		m := s[id]
		if m == nil {
			m = make(map[string]string, len(paths))
			s[id] = m
		}
		for p, f := range paths {
			if old, ok := m[p]; !ok || f < old {
				m[p] = f
			}
		}
	}
	return s
}

// encode is Dataset.icebergSchemas: compact JSON with sorted keys.
func (s iceSchemas) encode() string {
	b, _ := json.Marshal(map[string]map[string]string(s)) // maps of strings always encode; goccy sorts keys
	return string(b)
}

func decodeIceSchemas(v any) iceSchemas {
	str, ok := v.(string)
	if !ok || str == "" {
		return nil
	}
	var s iceSchemas
	if json.Unmarshal([]byte(str), &s) != nil {
		return nil
	}
	return s
}

// queueSchemaDependents queues, to be folded in full, the jobs whose column references the batch's Iceberg
// schema information can re-resolve: the jobs of runs that named a version whose schema id arrives now (a snapshot
// synced after the run's event), and the jobs whose column edges touch a dataset whose schemas arrive now. Either
// order of arrival then gives the same edges; a repeated event queues again, which re-derives the same edges.
func (w *txWriter) queueSchemaDependents(out *dsWrites, keys []string, changes map[string]*dsChange) error {
	var versions, schemaDS []any
	for _, k := range keys {
		c := changes[k]
		for _, v := range c.versions {
			if v.Snapshot != nil && v.Snapshot.SchemaID != "" {
				versions = append(versions, map[string]any{"ds": k, "v": v.Version})
			}
		}
		if len(c.ice) > 0 {
			schemaDS = append(schemaDS, k)
		}
	}
	if len(versions) > 0 {
		rows, err := w.runAs("queueSchemaDependents:versions", `UNWIND $rows AS row
			CALL (row) {
				MATCH (r:Run)-[x:READ]->(d:Dataset) WHERE x.datasetVersion = row.v AND d.key = row.ds RETURN r
				UNION
				MATCH (r:Run)-[x:WROTE]->(d:Dataset) WHERE x.datasetVersion = row.v AND d.key = row.ds RETURN r
			}
			RETURN DISTINCT r.jobKey AS job`, map[string]any{"rows": versions})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if j, _ := r.Get("job"); asStr(j) != "" {
				out.jobs.addFull(asStr(j))
			}
		}
	}
	if len(schemaDS) > 0 {
		rows, err := w.runAs("queueSchemaDependents:schemas", `UNWIND $ds AS k
			MATCH (:Dataset {key: k})-[:HAS_FIELD]->(:Field)-[c:COLUMN_FEEDS]-(:Field) WHERE c.jobKey <> ''
			RETURN DISTINCT c.jobKey AS job`, map[string]any{"ds": schemaDS})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if j, _ := r.Get("job"); asStr(j) != "" {
				out.jobs.addFull(asStr(j))
			}
		}
	}
	return nil
}

// attachSchemas gives each run's READ and WROTE rows of a dataset in column lineage the schema of the version the
// row names (fold.IO.Schema), when that version is a snapshot with a recorded schema. The runs' IO slices are
// copied (the job cache may share them).
func (w *txWriter) attachSchemas(runs map[string][]fold.Run) error {
	var all []fold.Run
	for _, rs := range runs {
		all = append(all, rs...)
	}
	colDS := fold.ColumnDatasets(all)
	if len(colDS) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, k := range colDS {
		want[k] = true
	}
	pairs := map[string]bool{}
	for _, r := range all {
		for _, io := range r.IO {
			if want[io.DS] && io.Version != "" {
				pairs[graph.DatasetVersionKey(io.DS, io.Version)] = true
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	rows, err := w.runAs("attachSchemas", `UNWIND $keys AS k
		MATCH (v:DatasetVersion {key: k}) WHERE v.schemaId IS NOT NULL
		MATCH (d:Dataset {key: v.datasetKey}) WHERE d.icebergSchemas IS NOT NULL
		RETURN k, v.schemaId AS sid, d.key AS ds, d.icebergSchemas AS ice`, map[string]any{"keys": toAny(ordered.Keys(pairs))})
	if err != nil {
		return err
	}
	byDS := map[string]iceSchemas{}
	schemaOf := map[string]map[string]string{} // version key -> path -> field id
	for _, r := range rows {
		k, _ := r.Get("k")
		sid, _ := r.Get("sid")
		ds, _ := r.Get("ds")
		s, ok := byDS[asStr(ds)]
		if !ok {
			ice, _ := r.Get("ice")
			s = decodeIceSchemas(ice)
			byDS[asStr(ds)] = s
		}
		if m := s[asStr(sid)]; m != nil {
			schemaOf[asStr(k)] = m
		}
	}
	if len(schemaOf) == 0 {
		return nil
	}
	for j, rs := range runs {
		for i := range rs {
			ios := slices.Clone(rs[i].IO)
			for x := range ios {
				if ios[x].Version != "" {
					ios[x].Schema = schemaOf[graph.DatasetVersionKey(ios[x].DS, ios[x].Version)]
				}
			}
			rs[i].IO = ios
		}
		runs[j] = rs
	}
	return nil
}
