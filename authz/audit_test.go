package authz

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

func TestRequestAuditBatchesOneRecord(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	a := NewRequestAudit(Principal{Subject: "alice", Kind: "user"}, "lineage", "req-1", func() time.Time { return now })
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

func TestKafkaAuditorWritesRecords(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	topic := "t." + testenv.Token(4) + ".audit"
	aud, err := NewKafkaAuditor(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer aud.Close()
	if err := EnsureAuditTopic(kc, topic); err != nil {
		t.Fatalf("ensure is idempotent: %v", err)
	}
	ctx := t.Context()
	empty := NewRequestAudit(Principal{Subject: "bob"}, "lineage", "req-0", time.Now)
	if err := empty.Flush(ctx, aud); err != nil {
		t.Fatal(err)
	}
	req := NewRequestAudit(Principal{Subject: "alice", Kind: "user"}, "lineage", "req-7", time.Now)
	req.Touched(ds("postgres://hr:5432", "people.salaries"))
	req.Touched(ds("postgres://hr:5432", "people.names"))
	if err := req.Flush(ctx, aud); err != nil {
		t.Fatal(err)
	}
	change := AuditRecord{Time: time.Now(), Principal: "admin", Operation: "grant", Decision: DecisionAllow, Epoch: 9,
		Changes: []Change{{Op: OpGrant, Grant: &Grant{Role: "r", Privilege: PrivDescribe, Effect: Allow, On: Root()}}}}
	if err := aud.Audit(ctx, change); err != nil {
		t.Fatal(err)
	}
	msgs := testenv.ReadTopic(t, kc, topic, 2, 20*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("read %d records, want exactly 2 (the empty request writes none)", len(msgs))
	}
	byOp := map[string]AuditRecord{}
	for _, m := range msgs {
		var r AuditRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatalf("record is not JSON: %v", err)
		}
		byOp[r.Operation] = r
	}
	if r := byOp["lineage"]; r.RequestID != "req-7" || len(r.Nodes) != 2 || r.Decision != DecisionAllow || !r.Nodes[0].Sensitive {
		t.Errorf("request record: %+v", r)
	}
	if r := byOp["grant"]; r.Epoch != 9 || len(r.Changes) != 1 || r.Changes[0].Grant.On.Kind != SecRoot {
		t.Errorf("grant record: %+v", r)
	}
}
