package icebergsync

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// GraphState reads what earlier syncs left in the graph (ADR 0041): every Dataset a uuid identifier of the
// catalog names, with its current name, dropped state, the metadata location of its latest headwater_iceberg
// facet, its recorded versions and the sync's own tags in force (ADR 0075). It only reads; the projector writes what the sync publishes.
type GraphState struct {
	Store *graph.Store
}

// Known implements StateReader.
func (g GraphState) Known(ctx context.Context, cat Catalog) (map[string]Known, error) {
	// The table's name in the catalog's namespace: the node's own when the catalog named it first, else its
	// current name there (a node an engine made first under another name, e.g. Spark's location, carries the
	// catalog name as a symlink: it is the same table, ADR 0041).
	recs, err := g.Store.ReadRecords(ctx, `MATCH (n:DatasetName {namespace: $uns})-[:NAMES]->(d:Dataset)
		RETURN n.name AS uuid, CASE WHEN d.namespace = $cns THEN d.name ELSE
		    head([(c:DatasetName {namespace: $cns})-[r:NAMES]->(d) WHERE r.kind IN ['PRIMARY', 'SYMLINK'] AND r.validTo = $open
		      | c.name]) END AS name, d.namespace AS ownNamespace, d.name AS ownName,
		  d.droppedAt IS NOT NULL AS dropped, d.facets AS facets,
		  [(v:DatasetVersion)-[:VERSION_OF]->(d) | v.version] AS versions,
		  [(v:DatasetVersion)-[:VERSION_OF]->(d) WHERE v.schemaId IS NOT NULL | v.version] AS withSchema,
		  d.icebergSchemas AS schemas, d.tagHistory AS tagHistory`,
		map[string]any{"uns": cat.UUIDNamespace(), "cns": cat.Namespace, "open": graph.OpenEnd})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Known, len(recs))
	for _, r := range recs {
		p := graph.Props(r)
		loc, owner, table := fromFacets(p.Str("facets"))
		k := Known{UUID: strings.ToLower(p.Str("uuid")), Name: p.Str("name"), Dropped: p.Bool("dropped"),
			MetadataLocation: loc, Owner: owner, Versions: map[string]bool{}}
		if k.Name == "" {
			// No name in the catalog's namespace: a table the sync names by its location (its catalog name is a
			// metadata table's, ADR 0087), known by its uuid alone; its catalog name is the one the sync last sent.
			// Without one it is no table of this catalog.
			if table == "" {
				continue
			}
			k.Name, k.RefNamespace, k.RefName = table, p.Str("ownNamespace"), p.Str("ownName")
		}
		for _, v := range p.Strs("versions") {
			k.Versions[v] = true
		}
		k.VersionSchemas, k.Schemas = map[string]bool{}, map[string]bool{}
		for _, v := range p.Strs("withSchema") {
			k.VersionSchemas[v] = true
		}
		var schemas map[string]json.RawMessage
		if json.Unmarshal([]byte(p.Str("schemas")), &schemas) == nil {
			for id := range schemas {
				k.Schemas[id] = true
			}
		}
		var entries map[string]olevent.Tag // the latest tags facet's entries by name (structured), read when needed
		for _, iv := range graph.ParseTagHistory(p.Str("tagHistory")) {
			switch {
			case iv.ValidTo != graph.OpenEnd:
			case iv.Source == TagSource:
				k.CatalogTags = append(k.CatalogTags, iv.Name)
			default:
				if entries == nil {
					entries = tagEntries(p.Str("facets"))
				}
				k.OtherTags = append(k.OtherTags, otherTag(iv, entries))
			}
		}
		sort.Strings(k.CatalogTags)
		sort.Slice(k.OtherTags, func(i, j int) bool { return k.OtherTags[i].Name() < k.OtherTags[j].Name() })
		out[k.UUID] = k
	}
	return out, nil
}

// fromFacets reads headwater_iceberg.metadataLocation and .table and the first ownership owner from a Dataset's
// facets JSON ("" when absent).
func fromFacets(facets string) (metadataLocation, owner, table string) {
	var m struct {
		Iceberg struct {
			MetadataLocation string `json:"metadataLocation"`
			Table            string `json:"table"`
		} `json:"headwater_iceberg"`
		Ownership struct {
			Owners []struct {
				Name string `json:"name"`
			} `json:"owners"`
		} `json:"ownership"`
	}
	if json.Unmarshal([]byte(facets), &m) != nil {
		return "", "", ""
	}
	if len(m.Ownership.Owners) > 0 {
		owner = m.Ownership.Owners[0].Name
	}
	return m.Iceberg.MetadataLocation, owner, m.Iceberg.Table
}

// tagEntries are the entries of the latest tags facet in a Dataset's facets JSON, by rendered name.
func tagEntries(facets string) map[string]olevent.Tag {
	var m struct {
		Tags struct {
			Tags []struct {
				Key    string `json:"key"`
				Value  string `json:"value"`
				Source string `json:"source"`
				Field  string `json:"field"`
			} `json:"tags"`
		} `json:"tags"`
	}
	out := map[string]olevent.Tag{}
	if json.Unmarshal([]byte(facets), &m) == nil {
		for _, e := range m.Tags.Tags {
			t := olevent.Tag{Key: e.Key, Value: e.Value, Source: e.Source, Field: e.Field}
			out[t.Name()] = t
		}
	}
	return out
}

// otherTag is another source's tag in force (iv) as a facet entry: from the latest tags facet where it lists it,
// else read back from the rendered name as the governance mutations read it (the first ':' ends the field, the
// first '=' the key); the source is the interval's.
func otherTag(iv graph.TagInterval, entries map[string]olevent.Tag) olevent.Tag {
	t, ok := entries[iv.Name]
	if !ok {
		n := iv.Name
		if i := strings.IndexByte(n, ':'); i >= 0 && !strings.Contains(n[:i], "=") {
			t.Field, n = n[:i], n[i+1:]
		}
		t.Key, t.Value, _ = strings.Cut(n, "=")
	}
	t.Source = iv.Source
	return t
}
