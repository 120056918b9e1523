package auditkafka

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/internal/testenv"
)

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
	empty := audit.NewRequestAudit(authz.Principal{Subject: "bob"}, "lineage", "req-0", time.Now)
	if err := empty.Flush(ctx, aud); err != nil {
		t.Fatal(err)
	}
	req := audit.NewRequestAudit(authz.Principal{Subject: "alice", Kind: "user"}, "lineage", "req-7", time.Now)
	req.Touched(ds("postgres://hr:5432", "people.salaries"))
	req.Touched(ds("postgres://hr:5432", "people.names"))
	if err := req.Flush(ctx, aud); err != nil {
		t.Fatal(err)
	}
	change := audit.AuditRecord{Time: time.Now(), Principal: "admin", Operation: "grant", Decision: audit.DecisionAllow, Epoch: 9,
		Changes: []grant.Change{{Op: grant.OpGrant, Grant: &grant.Grant{Role: "r", Privilege: authz.PrivDescribe, Effect: grant.Allow, On: grant.Root()}}}}
	if err := aud.Audit(ctx, change); err != nil {
		t.Fatal(err)
	}
	msgs := testenv.ReadTopic(t, kc, topic, 2, 20*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("read %d records, want exactly 2 (the empty request writes none)", len(msgs))
	}
	byOp := map[string]audit.AuditRecord{}
	for _, m := range msgs {
		var r audit.AuditRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatalf("record is not JSON: %v", err)
		}
		byOp[r.Operation] = r
	}
	if r := byOp["lineage"]; r.RequestID != "req-7" || len(r.Nodes) != 2 || r.Decision != audit.DecisionAllow || !r.Nodes[0].Sensitive {
		t.Errorf("request record: %+v", r)
	}
	if r := byOp["grant"]; r.Epoch != 9 || len(r.Changes) != 1 || r.Changes[0].Grant.On.Kind != grant.SecRoot {
		t.Errorf("grant record: %+v", r)
	}
}

// TestAsyncAuditorDrainsToKafka: records queued through the asynchronous writer over the Kafka auditor are all
// in the audit topic after Close.
func TestAsyncAuditorDrainsToKafka(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	topic := "t." + testenv.Token(4) + ".audit"
	k, err := NewKafkaAuditor(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	a := audit.NewAsyncAuditor(k, audit.AsyncOptions{})
	const n = 50
	for i := range n {
		if err := a.Audit(t.Context(), audit.AuditRecord{Time: time.Now(), Principal: fmt.Sprint("p", i), Operation: "graphql",
			Decision: audit.DecisionDeny}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if lost, err := a.Close(ctx); err != nil || lost != 0 {
		t.Fatalf("close: %d lost, %v", lost, err)
	}
	msgs := testenv.ReadTopic(t, kc, topic, n, 20*time.Second)
	seen := map[string]bool{}
	for _, m := range msgs {
		var r audit.AuditRecord
		if err := json.Unmarshal(m.Value, &r); err != nil {
			t.Fatal(err)
		}
		seen[r.Principal] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct records in the topic, want %d", len(seen), n)
	}
}

func ds(ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindDataset, Key: "k:" + ns + name, Namespace: ns, Name: name}
}
