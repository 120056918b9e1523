package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/loadtest/compare"
)

func (fx *fixture) keyOf(ctx context.Context, t *testing.T, r compare.Root) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, fx.store.Driver, `MATCH (d:Dataset {namespace: $ns, name: $n}) RETURN d.key AS k`,
		map[string]any{"ns": r.Namespace, "n": r.Name}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(fx.store.Database))
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("key of %v: %v (%d records)", r, err, len(res.Records))
	}
	k, _ := res.Records[0].Get("k")
	return k.(string)
}

// stats say whether a fixture exercised what matters.
type stats struct{ filtered, deep, declared, paged int }

// checkCase compares the naive answer (when naive is set) and Headwater's with the reference for one case.
func (fx *fixture) checkCase(ctx context.Context, t *testing.T, hw *compare.Headwater, naive *compare.Naive, r compare.Root,
	key string, at time.Time, down bool, depth int, st *stats) {
	t.Helper()
	asOf := at.UnixMilli()
	want, far := fx.ref.walk(key, asOf, down, depth, false)
	if unfiltered, _ := fx.ref.walk(key, asOf, down, depth, true); !compare.Diff(want, unfiltered).Empty() {
		st.filtered++
	}
	if far >= 3 {
		st.deep++
	}
	for e := range want.Edges {
		if e.Job == "" {
			st.declared++
		}
	}
	if naive != nil {
		got, err := naive.Answer(ctx, r, down, depth, asOf)
		if err != nil {
			t.Fatalf("naive %v down=%v depth %d: %v", r, down, depth, err)
		}
		if m := compare.Diff(got, want); !m.Empty() {
			t.Errorf("naive %s down=%v depth %d asOf %s differs from the reference (\"headwater\" = naive here): %s",
				r.Name, down, depth, at, m)
		}
	}
	got, pages, err := hw.Answer(ctx, r, down, depth, at)
	if err != nil {
		t.Fatalf("headwater %v down=%v depth %d: %v", r, down, depth, err)
	}
	if pages > 1 {
		st.paged++
	}
	if m := compare.Diff(got, want); !m.Empty() {
		t.Errorf("headwater (maxNodes %d, %d pages) %s down=%v depth %d asOf %s differs from the reference (\"naive\" = the reference here): %s",
			hw.MaxNodes, pages, r.Name, down, depth, at, m)
	}
}

// TestNaiveAndHeadwaterEqualTheReference asks both methods every root, direction, depth 1..4 and three asOf
// instants (now, and two points in the past where some relationships were closed or not yet open), and checks
// each answer against the plain-Go reference walk. Headwater answers in one page (maxNodes 5000) here. It
// also checks the fixture is not trivial: the time and publication filter changes some answers, some walk
// goes three hops deep and declared edges are walked.
func TestNaiveAndHeadwaterEqualTheReference(t *testing.T) {
	fx := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hw, naive := fx.headwater(t, nil, 5000), fx.naive()
	var st stats
	for _, at := range []time.Time{fx.end, fx.end.Add(-100 * day), fx.end.Add(-200 * day)} {
		for _, r := range fx.roots() {
			key := fx.keyOf(ctx, t, r)
			for _, down := range []bool{true, false} {
				for depth := 1; depth <= 4; depth++ {
					fx.checkCase(ctx, t, hw, naive, r, key, at, down, depth, &st)
				}
			}
		}
	}
	t.Logf("filter mattered in %d cases, %d reached 3 hops, %d declared edges", st.filtered, st.deep, st.declared)
	if st.filtered == 0 || st.deep == 0 || st.declared == 0 {
		t.Errorf("fixture too easy: %+v", st)
	}
}

// TestHeadwaterPagedAnswersEqualTheReference follows cursors with small page budgets (maxNodes 4, 8 and 20: the
// fan-out budget min(FanOut, maxNodes-1) splits the hub's consumers over pages and the node budget stops
// pages mid-level). The union of the pages must equal the single-page answer (the reference).
func TestHeadwaterPagedAnswersEqualTheReference(t *testing.T) {
	fx := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var st stats
	roots := append(fx.roots(), fx.widest(6)...)
	for _, maxNodes := range []int{4, 8, 20} {
		hw := fx.headwater(t, nil, maxNodes)
		for _, r := range roots {
			key := fx.keyOf(ctx, t, r)
			for _, down := range []bool{true, false} {
				for depth := 2; depth <= 4; depth++ {
					fx.checkCase(ctx, t, hw, nil, r, key, fx.end, down, depth, &st)
				}
			}
		}
	}
	if st.paged == 0 {
		t.Errorf("no answer took more than one page: %+v", st)
	}
}

// dropLastEdge removes the last edge of every lineage page: a Headwater that loses an edge.
type dropLastEdge struct{ next http.RoundTripper }

func (d dropLastEdge) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err == nil {
		if data, ok := body["data"].(map[string]any); ok {
			if l, ok := data["lineage"].(map[string]any); ok {
				if edges, ok := l["edges"].([]any); ok && len(edges) > 0 {
					l["edges"] = edges[:len(edges)-1]
				}
			}
		}
		b, _ = json.Marshal(body)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// TestRunnerChecksAndDetectsMismatches runs the comparison end to end: with the real handler every case is
// checked and none differs; with a handler that loses one edge per page each case with edges is reported
// with exactly that edge missing on the Headwater side.
func TestRunnerChecksAndDetectsMismatches(t *testing.T) {
	fx := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := compare.Config{MaxDepth: 3, Reps: 1, NaiveTimeout: 30 * time.Second, HeadwaterTimeout: 30 * time.Second,
		MaxNodes: 5000, SkipAfterTimeout: true, Warmup: true, AsOf: fx.end}
	roots := fx.roots()

	good, err := compare.NewRunner(cfg, fx.headwater(t, nil, cfg.MaxNodes), fx.naive(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	samples := good.Run(ctx, roots, nil)
	res := compare.Summarise(cfg, roots, samples, time.Second)
	if res.Cases != len(roots)*2*cfg.MaxDepth || res.Checked != res.Cases || res.Mismatched != 0 {
		t.Fatalf("real handler: %d cases, %d checked, %d mismatched: %+v %v", res.Cases, res.Checked, res.Mismatched,
			res.Mismatches, res.ErrorExamples)
	}
	if res.HubRoots != 1 || len(res.Rows) == 0 {
		t.Errorf("summary: %d hub roots, %d rows", res.HubRoots, len(res.Rows))
	}

	lossy := fx.headwater(t, func(rt http.RoundTripper) http.RoundTripper { return dropLastEdge{rt} }, cfg.MaxNodes)
	bad, err := compare.NewRunner(cfg, lossy, fx.naive(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	withEdges := 0
	for i, s := range bad.Run(ctx, roots, nil) {
		if samples[i].Naive.Edges == 0 {
			if s.Mismatch != nil {
				t.Errorf("%v: mismatch without edges: %s", s.Case, s.Mismatch)
			}
			continue
		}
		withEdges++
		if s.Mismatch == nil || s.Mismatch.EdgesOnlyNaive != 1 || s.Mismatch.EdgesOnlyHeadwater != 0 {
			t.Errorf("%v: lost edge not reported exactly: %+v", s.Case, s.Mismatch)
		}
	}
	if withEdges == 0 {
		t.Fatal("no case had edges")
	}
}
