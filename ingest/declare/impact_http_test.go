package declare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/rules"
)

// unreachedReader fails the test: refusals are decided before the graph is read.
type unreachedReader struct{ t *testing.T }

func (u unreachedReader) ReadRecords(context.Context, string, map[string]any) ([]map[string]any, error) {
	u.t.Fatal("the graph was read for a request that should have been refused first")
	return nil, nil
}

// Every bad impact request is refused before anything is read, with the field and the rule.
func TestImpactEndpointRefusals(t *testing.T) {
	m := manifestBytes(t)
	const ok = "/api/v1/declare/dbt/hw_producers/impact?jobNamespace=j&datasetNamespace=duckdb:///w.duckdb"
	for _, c := range []struct {
		name, path string
		body       []byte
		hdr        map[string]string
		code       int
		msg        string
	}{
		{"project mismatch", "/api/v1/declare/dbt/other/impact?jobNamespace=j&datasetNamespace=d", m, nil, http.StatusBadRequest, "project: the path names"},
		{"no job namespace", "/api/v1/declare/dbt/hw_producers/impact?datasetNamespace=d", m, nil, http.StatusBadRequest, "jobNamespace: required"},
		{"no dataset namespace", "/api/v1/declare/dbt/hw_producers/impact?jobNamespace=j", m, nil, http.StatusBadRequest, "datasetNamespace: required"},
		{"bad renamed", ok + "&renamed=a", m, nil, http.StatusBadRequest, `renamed[0]: must be old=new`},
		{"renamed twice", ok + "&renamed=a=b&renamed=a=c", m, nil, http.StatusBadRequest, "renamed[1]: model.hw_producers.a is renamed twice"},
		{"too many renamed", ok + strings.Repeat("&renamed=a=b", MaxRenamed+1), m, nil, http.StatusBadRequest, "renamed: at most"},
		{"not a manifest", ok, []byte(`{"a":1}`), nil, http.StatusBadRequest, "metadata.dbt_schema_version"},
		{"bad gzip", ok, m, map[string]string{"Content-Encoding": "gzip"}, http.StatusBadRequest, "not valid gzip"},
		{"too large", ok, append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), int(MaxManifestBytes))...), '"', '}'),
			nil, http.StatusRequestEntityTooLarge, rules.MaxBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			mux := http.NewServeMux()
			NewImpactService(unreachedReader{t}, nil, nil, nil, nil, time.Now, nil).Register(mux)
			req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(c.body))
			for k, v := range c.hdr {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			var ans Answer
			_ = json.Unmarshal(w.Body.Bytes(), &ans)
			if w.Code != c.code || !strings.Contains(ans.Error, c.msg) {
				t.Fatalf("%d %s, want %d %q", w.Code, w.Body.Bytes(), c.code, c.msg)
			}
		})
	}
}

// A candidate id answers only its uploader, and nothing after the TTL.
func TestReleaseImpactUnknownCandidate(t *testing.T) {
	s := NewImpactService(unreachedReader{t}, nil, nil, nil, nil, time.Now, nil)
	if _, err := s.ReleaseImpact(context.Background(), "cand_nope"); err == nil || !strings.Contains(err.Error(), "no such candidate") {
		t.Fatalf("%v", err)
	}
}

type emptyGraph struct{}

func (emptyGraph) ReadRecords(context.Context, string, map[string]any) ([]map[string]any, error) {
	return nil, nil
}

// An uploaded candidate is kept for its uploader for CandidateTTL: another principal, or the uploader after the
// TTL, gets NOT_FOUND; the report compares against the graph at the query (here: nothing declared, all added).
func TestCandidateKeptForItsUploader(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	assess := func(_ context.Context, project, _ string, diff *api.ReleaseDiff, _ map[string]string, _ map[string]api.AffectedExposure) (*api.ReleaseImpact, error) {
		return &api.ReleaseImpact{Project: project, Diff: diff}, nil
	}
	s := NewImpactService(emptyGraph{}, nil, assess, nil, nil, clock, nil)
	mux := http.NewServeMux()
	s.Register(mux)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/declare/dbt/hw_producers/impact?jobNamespace=j&datasetNamespace=d", bytes.NewReader(manifestBytes(t)))
	alice := authz.WithPrincipal(req.Context(), authz.Principal{Subject: "alice"})
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req.WithContext(alice))
	var rep api.ReleaseImpact
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil || w.Code != http.StatusOK || rep.Candidate == "" || len(rep.Diff.Added) != 5 {
		t.Fatalf("%d %s", w.Code, w.Body.Bytes())
	}
	if r, err := s.ReleaseImpact(alice, rep.Candidate); err != nil || len(r.Diff.Added) != 5 || !r.ExpiresAt.Equal(now.Add(CandidateTTL)) {
		t.Fatalf("the uploader: %+v %v", r, err)
	}
	bob := authz.WithPrincipal(context.Background(), authz.Principal{Subject: "bob"})
	if _, err := s.ReleaseImpact(bob, rep.Candidate); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("another principal: %v", err)
	}
	now = now.Add(CandidateTTL)
	if _, err := s.ReleaseImpact(alice, rep.Candidate); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("after the TTL: %v", err)
	}
}
