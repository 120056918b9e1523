package audit

import (
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/testenv"
)

func TestRequestAuditBatchesOneRecord(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	a := NewRequestAudit(authz.Principal{Subject: "alice", Kind: "user"}, "lineage", "req-1", func() time.Time { return now })
	if !a.Empty() {
		t.Fatal("new accumulator not empty")
	}
	hr := ds("postgres://hr:5432", "people.salaries")
	a.Touched(hr)
	a.Touched(hr) // the same node twice is one entry
	a.Touched(ds("postgres://hr:5432", "people.names"))
	a.Denied(ds("postgres://wh:5432", "secret.root"), "root not visible")
	r := a.Record()
	if len(r.Nodes) != 3 || r.Decision != DecisionDeny || r.Reason != "root not visible" || r.RequestID != "req-1" ||
		!r.Time.Equal(now) || r.Principal != "alice" {
		t.Errorf("record: %+v", r)
	}
	for range maxAuditNodes + 5 {
		a.Touched(ds("postgres://hr:5432", testenv.Token(6)))
	}
	if r := a.Record(); len(r.Nodes) != maxAuditNodes || r.NodesOmitted != 8 {
		t.Errorf("cap: %d nodes, %d omitted; want %d and 8", len(r.Nodes), r.NodesOmitted, maxAuditNodes)
	}
}

func ds(ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindDataset, Key: "k:" + ns + name, Namespace: ns, Name: name}
}
