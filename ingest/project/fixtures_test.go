package project

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
)

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// uniquify rewrites a fixture so its identities are this test's own: every namespace gets the test token
// (after "://" for URI namespaces), every UUID is mapped to a fresh one.
func uniquify(v any, tok string, ids map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "namespace" {
				if i := strings.Index(s, "://"); i >= 0 {
					x[k] = s[:i+3] + tok + "-" + s[i+3:]
				} else {
					x[k] = tok + "-" + s
				}
				continue
			}
			x[k] = uniquify(e, tok, ids)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = uniquify(e, tok, ids)
		}
		return x
	case string:
		if uuidRE.MatchString(x) {
			if ids[x] == "" {
				ids[x] = uuid.NewString()
			}
			return ids[x]
		}
	}
	return v
}

// TestFixturesThroughTheRealDecoderAndNormalizer projects the OpenLineage fixture events as the consumer would:
// decoded by ingest/olevent, canonicalised by ingest/normalize.
func TestFixturesThroughTheRealDecoderAndNormalizer(t *testing.T) {
	s := newScen(t)
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(s.store, norm, s.bump, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../olevent/decode/testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	tok := strings.ReplaceAll(s.ns, "-", "")
	ids := map[string]string{}
	var batch []Envelope
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		raw, _ = json.Marshal(uniquify(doc, tok, ids))
		ev, err := dec.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		olevent.ResolveID("", &ev)
		batch = append(batch, Envelope{Event: ev, ReceivedAt: time.Now(), Source: "replay"})
	}
	res, err := p.Apply(s.ctx, batch)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if res.Projected != len(files) {
		t.Fatalf("result %+v", res)
	}
	again, err := p.Apply(s.ctx, batch)
	if err != nil || again.Duplicates != len(files) {
		t.Fatalf("replay: %+v %v", again, err)
	}
	// the Spark fixture: symlinked input, withheld output with a version, masked column lineage.
	out := s.query(`MATCH (j:Job)-[e:OUTPUT_TO {kind: 'OBSERVED'}]->(d:Dataset) WHERE d.namespace = $ns
		RETURN d.name AS name, e.pubs AS pubs`, map[string]any{"ns": "s3://" + tok + "-lakehouse-prod"})
	if len(out) != 1 || out[0]["name"] != "warehouse/analytics.db/sessions" || out[0]["pubs"].([]any)[0] != graph.PubWithheld {
		t.Fatalf("spark output %v", out)
	}
	masked := s.query(`MATCH (:Dataset {namespace: $ns})-[:HAS_FIELD]->(b:Field {path: 'session_id'})
		<-[c:COLUMN_FEEDS]-(:Field {path: 'user_id'}) RETURN c.tMasking AS m`,
		map[string]any{"ns": "s3://" + tok + "-lakehouse-prod"})
	if len(masked) != 1 || masked[0]["m"].([]any)[0] != true {
		t.Fatalf("masked column edge %v", masked)
	}
	sym := s.query(`MATCH (n:DatasetName)-[:NAMES {kind: 'SYMLINK'}]->(d:Dataset) WHERE n.namespace STARTS WITH $ns
		RETURN d.name AS name`, map[string]any{"ns": "hive://" + tok})
	if len(sym) == 0 {
		t.Fatalf("symlink not bound")
	}
	wrote := s.query(`MATCH (:Run)-[w:WROTE]->(d:Dataset {namespace: $ns}) RETURN w.facets AS f, w.datasetVersion AS v`,
		map[string]any{"ns": "s3://" + tok + "-lakehouse-prod"})
	if len(wrote) != 1 || !strings.Contains(wrote[0]["f"].(string), "outputStatistics") || wrote[0]["v"] != "6183459274017452817" {
		t.Fatalf("run output detail %v", wrote)
	}
	if len(s.bump.keys) == 0 {
		t.Fatal("no generations bumped")
	}
}
