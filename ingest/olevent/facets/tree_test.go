package facets

import (
	"reflect"
	"testing"

	fastjson "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/olevent/jsontree"
)

// readFacet reads plain facets from the tree exactly as goccy/go-json reads their bytes, and declines (so the
// bytes are unmarshalled) whenever a facet leaves the plain case.
func TestReadFacetIsGoccyOnPlainFacets(t *testing.T) {
	plain := []struct {
		src string
		v   func() any
	}{
		{`{"fields":[{"name":"a","type":"int","fields":[{"name":"b"}]},null],"x":{"deep":[1]}}`, func() any { return new(wireSchema) }},
		{`{"run":{"runId":"r"},"job":{"namespace":"n","name":"j"},"root":{"run":null,"job":{"name":"k"}}}`, func() any { return new(wireParent) }},
		{`{"entries":[]}`, func() any { return new(wireJobLineage) }},
		{`{"entries":null}`, func() any { return new(wireJobLineage) }},
		{`{"fields":{"a":{"inputFields":[{"namespace":"n","name":"t","field":"f","transformations":[{"type":"DIRECT","masking":true}]}]}}}`, func() any { return new(wireColumnLineage) }},
		{`{"datasetVersion":12345678901234567890}`, func() any { return new(wireVersion) }},
		{`{"nominalStartTime":"2026-01-01T00:00:00Z","nominalEndTime":null}`, func() any { return new(wireNominal) }},
	}
	for _, c := range plain {
		d, ok := jsontree.Parse([]byte(c.src), jsontree.Limits{MaxDepth: 64, MaxString: 1 << 20})
		if !ok {
			t.Fatalf("parse %s", c.src)
		}
		got, want := c.v(), c.v()
		if !readFacet(d, d.Root(), got) {
			t.Errorf("%s: declined a plain facet", c.src)
			continue
		}
		if err := fastjson.Unmarshal([]byte(c.src), want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tree %+v, goccy %+v", c.src, got, want)
		}
	}
	for _, src := range []string{`{"Fields":[]}`, `{"fields":"x"}`, `{"fields":[{"name":1}]}`, `{"fields":[1]}`, `{"fields":[{"NAME":"a"}]}`} {
		d, _ := jsontree.Parse([]byte(src), jsontree.Limits{MaxDepth: 64, MaxString: 1 << 20})
		if readFacet(d, d.Root(), new(wireSchema)) {
			t.Errorf("%s: read from the tree, want the bytes unmarshalled", src)
		}
	}
}
