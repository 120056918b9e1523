package declare

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/internal/rules"
)

// fakeSubmitter stands in for the gateway (its own path is tested in ingest/gateway and e2e): it refuses every
// event with refuse, else accepts them.
type fakeSubmitter struct {
	refuse string
	got    int
}

func (f *fakeSubmitter) Submit(_ context.Context, events [][]byte) (gateway.Submission, error) {
	f.got += len(events)
	var sub gateway.Submission
	for i := range events {
		if f.refuse != "" {
			sub.Results = append(sub.Results, gateway.Result{Index: i, Status: "rejected",
				Error: &gateway.ErrorBody{Field: "job.namespace", Rule: f.refuse, Message: "no"}})
			continue
		}
		sub.Results = append(sub.Results, gateway.Result{Index: i, Status: "accepted", EventID: "id"})
	}
	sub.Accepted = f.refuse == ""
	return sub, nil
}

type auditLine struct {
	allowed bool
	reason  string
}

func serve(t *testing.T, sub Submitter, path string, body []byte, hdr map[string]string) (int, Answer, []auditLine) {
	t.Helper()
	var audited []auditLine
	rec := func(_ context.Context, _ authz.Principal, op string, allowed bool, reason string) error {
		if op != OpDeclareDbt {
			t.Fatalf("audit op %s", op)
		}
		audited = append(audited, auditLine{allowed, reason})
		return nil
	}
	mux := http.NewServeMux()
	NewHandler(sub, rec, nil).Register(mux)
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	var ans Answer
	_ = json.Unmarshal(w.Body.Bytes(), &ans)
	return w.Code, ans, audited
}

func manifestBytes(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../inventory/dbtmanifest/testdata/hw_producers.manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const okPath = "/api/v1/declare/dbt/hw_producers?jobNamespace=j&datasetNamespace=duckdb:///w.duckdb"

func TestDeclareEndpointAcceptsGzipAndAudits(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(manifestBytes(t))
	_ = zw.Close()
	sub := &fakeSubmitter{}
	code, ans, audited := serve(t, sub, okPath, gz.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	if code != http.StatusOK || !ans.Accepted || len(ans.EventIDs) != 5 || sub.got != 5 {
		t.Fatalf("%d %+v (submitted %d)", code, ans, sub.got)
	}
	if len(audited) != 1 || !audited[0].allowed || !strings.Contains(audited[0].reason, "5 jobs") {
		t.Fatalf("audit %+v", audited)
	}
}

func TestDeclareEndpointRefusals(t *testing.T) {
	m := manifestBytes(t)
	for _, c := range []struct {
		name, path, refuse string
		body               []byte
		hdr                map[string]string
		code               int
		msg                string
	}{
		{"produce permission", okPath, rules.ProducePermission, m, nil, http.StatusForbidden, "produce-permission"},
		{"invalid event", okPath, "invalid", m, nil, http.StatusBadRequest, "job.namespace: invalid"},
		{"project mismatch", "/api/v1/declare/dbt/other?jobNamespace=j&datasetNamespace=d", "", m, nil, http.StatusBadRequest, "project: the path names"},
		{"no dataset namespace", "/api/v1/declare/dbt/hw_producers?jobNamespace=j", "", m, nil, http.StatusBadRequest, "datasetNamespace: required"},
		{"not a manifest", okPath, "", []byte(`{"a":1}`), nil, http.StatusBadRequest, "metadata.dbt_schema_version"},
		{"bad gzip", okPath, "", m, map[string]string{"Content-Encoding": "gzip"}, http.StatusBadRequest, "not valid gzip"},
		{"br", okPath, "", m, map[string]string{"Content-Encoding": "br"}, http.StatusUnsupportedMediaType, "Content-Encoding"},
		{"too large", okPath, "", append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), int(MaxManifestBytes))...), '"', '}'),
			nil, http.StatusRequestEntityTooLarge, rules.MaxBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, ans, audited := serve(t, &fakeSubmitter{refuse: c.refuse}, c.path, c.body, c.hdr)
			if code != c.code || ans.Accepted || !strings.Contains(ans.Error, c.msg) {
				t.Fatalf("%d %+v, want %d %q", code, ans, c.code, c.msg)
			}
			if len(audited) != 1 || audited[0].allowed {
				t.Fatalf("a refusal is one DENY record: %+v", audited)
			}
		})
	}
}
