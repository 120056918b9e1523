package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/gen"
)

func (l *Loader) chunk(cypher, sortBy string, emit func(batch) error) *chunker {
	return &chunker{cypher: cypher, limit: l.cfg.BatchRows / 3, emit: emit, sortBy: sortBy}
}

// datasets: Dataset + DatasetName + NAMES (PRIMARY, and RENAMED for the legacy name of renamed datasets).
func (l *Loader) datasets(emit func(batch) error) error {
	c := l.chunk(cypherDatasets, "", emit)
	for _, d := range l.cfg.World.Datasets {
		created := l.keys.created[d.ID]
		row := map[string]any{"key": l.keys.dataset[d.ID], "ns": d.Namespace, "name": d.Name, "env": d.Env,
			"ident": graph.DatasetIdent(d.Env, d.Namespace, d.Name), "created": created, "updated": l.keys.end,
			"desc": "", "primaryFrom": created, "old": []any{}, "tags": l.tagsOf(d.Tags), "tagProps": l.tagPropsOf(d.Tags, created)}
		if old := firstName(d); old != d.Name {
			until := created + (l.keys.end-created)/2
			row["primaryFrom"] = until
			row["old"] = []any{map[string]any{"ident": graph.DatasetIdent(d.Env, d.Namespace, old), "name": old, "until": until}}
		}
		if err := c.add(row); err != nil {
			return err
		}
	}
	return c.flush()
}

// jobs: Job + one JobVersion each.
func (l *Loader) jobs(emit func(batch) error) error {
	c := l.chunk(cypherJobs, "", emit)
	for _, j := range l.cfg.World.Jobs {
		pt := "BATCH"
		if j.Streaming {
			pt = "STREAMING"
		}
		loc := ""
		if j.SourceLocation != "" {
			b, _ := json.Marshal(map[string]string{"type": "git", "url": j.SourceLocation})
			loc = string(b)
		}
		first := l.keys.start
		for _, o := range j.Outputs {
			first = max(first, l.keys.created[o])
		}
		row := map[string]any{"key": l.keys.job[j.ID], "ns": j.Namespace, "name": j.Name, "pt": pt,
			"jt": j.JobType, "integration": j.Integration, "first": first, "last": l.keys.end,
			"jv": l.keys.jobVer[j.ID], "hash": definitionHash(j), "sql": j.SQL, "loc": loc,
			"ev": l.jobEvidence(j), "stamps": jobStamps(map[string]string{"processingType": pt, "jobType": j.JobType,
				"integration": j.Integration}, l.keys.end)}
		if err := c.add(row); err != nil {
			return err
		}
	}
	return c.flush()
}

func definitionHash(j gen.Job) string {
	h := sha256.Sum256([]byte(j.SQL + "\x1f" + j.SourceLocation))
	return hex.EncodeToString(h[:12])
}

// fields: Field + HAS_FIELD, one history per column starting when the dataset was created. A nested column's
// struct parent is a field of its own (type struct), as the projector stores a schema facet's nested fields. The
// fields of a dataset no job writes are observed on read (ADR 0018: only its readers report its schema).
func (l *Loader) fields(emit func(batch) error) error {
	c := l.chunk(cypherFields, "", emit)
	written := map[int]bool{}
	for _, j := range l.cfg.World.Jobs {
		for _, o := range j.Outputs {
			written[o] = true
		}
	}
	for _, d := range l.cfg.World.Datasets {
		for _, f := range withParents(d.Fields) {
			row := map[string]any{"ds": l.keys.dataset[d.ID], "key": l.fieldKey(d.ID, f.Path), "path": f.Path,
				"type": f.Type, "from": l.keys.created[d.ID], "read": !written[d.ID]}
			if err := c.add(row); err != nil {
				return err
			}
		}
	}
	return c.flush()
}

// withParents adds, before its first member, each struct parent of a nested path ("payload" of "payload.source")
// that is not a column itself.
func withParents(fields []gen.Field) []gen.Field {
	have := map[string]bool{}
	for _, f := range fields {
		have[f.Path] = true
	}
	out := make([]gen.Field, 0, len(fields))
	for _, f := range fields {
		for i := range len(f.Path) {
			if f.Path[i] == '.' && !have[f.Path[:i]] {
				have[f.Path[:i]] = true
				out = append(out, gen.Field{Path: f.Path[:i], Type: "struct"})
			}
		}
		out = append(out, f)
	}
	return out
}

func (l *Loader) fieldKey(ds int, path string) string {
	return graph.FieldKey(l.keys.dataset[ds], path, l.keys.created[ds])
}

// jobStamps are the inline metadata stamps (stampT_<field>, stampE_<field>) of the non-empty fields, as the
// projector keeps them (projection version 4): stamped at t by no event (digest 0), so any event after t wins.
func jobStamps(fields map[string]string, t int64) map[string]any {
	out := map[string]any{}
	for f, v := range fields {
		if v != "" {
			out["stampT_"+f], out["stampE_"+f] = t, int64(0)
		}
	}
	return out
}

// tagsOf is a dataset's tags as the loader writes them: none unless Config.PIITags.
func (l *Loader) tagsOf(tags []string) []any {
	if !l.cfg.PIITags {
		tags = nil
	}
	out := make([]any, len(tags))
	for i, t := range tags {
		out[i] = t
	}
	return out
}

// tagPropsOf are the tag history properties projection version 6 writes for a dataset whose tags facet set tags
// at created (ingest/project/tags.go): each tag in force from then on, no source, no event (the loader writes
// none). None unless Config.PIITags, as the projector writes none without a tags facet.
func (l *Loader) tagPropsOf(tags []string, created int64) map[string]any {
	if !l.cfg.PIITags || len(tags) == 0 {
		return map[string]any{}
	}
	names := slices.Clone(tags)
	slices.Sort(names)
	names = slices.Compact(names)
	h := make([]graph.TagInterval, len(names))
	out := make([]any, len(names))
	for i, n := range names {
		h[i] = graph.TagInterval{Name: n, ValidFrom: created, ValidTo: graph.OpenEnd}
		out[i] = n
	}
	b, _ := json.Marshal(h)
	return map[string]any{"tagHistory": string(b), "tagNames": out}
}
