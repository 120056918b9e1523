package auditkafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/internal/testenv"
)

// auditFixture writes n records alternating between two principals through the real KafkaAuditor and returns a
// reader of the same topic.
func auditFixture(t *testing.T, n int) (*KafkaAuditReader, []string) {
	t.Helper()
	kc := testenv.KafkaConfig(t)
	topic := "t." + testenv.Token(4) + ".audit"
	aud, err := NewKafkaAuditor(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = aud.Close() })
	r, err := NewKafkaAuditReader(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	var ids []string
	for i := range n {
		rec := audit.AuditRecord{Time: time.Now().UTC(), Principal: fmt.Sprintf("p%d", i%2), Operation: "lineage",
			Decision: audit.DecisionAllow, RequestID: fmt.Sprintf("r%02d", i)}
		if err := aud.Audit(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{rec.RequestID}, ids...) // newest first
	}
	return r, ids
}

func requestIDs(p audit.AuditPage) []string {
	var out []string
	for _, e := range p.Entries {
		out = append(out, e.RequestID)
	}
	return out
}

func TestKafkaAuditReaderBudgetTruncatesAndContinues(t *testing.T) {
	r, want := auditFixture(t, 9)
	r.maxScan = 4
	var got []string
	q := audit.AuditQuery{Limit: 50}
	for range 10 {
		p, err := r.ReadAudit(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if p.Scanned > 4 {
			t.Fatalf("scanned %d records, budget 4", p.Scanned)
		}
		if p.More && !p.Truncated {
			t.Fatalf("a page of limit 50 stopped early without being truncated: %+v", p)
		}
		got = append(got, requestIDs(p)...)
		if !p.More {
			break
		}
		q.Before = p.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records over truncated pages:\n got %v\nwant %v", got, want)
	}
}

func TestKafkaAuditReaderFiltersAndLimits(t *testing.T) {
	r, _ := auditFixture(t, 6)
	p, err := r.ReadAudit(t.Context(), audit.AuditQuery{Limit: 2, Principal: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(requestIDs(p)) != "[r05 r03]" || !p.More || p.Truncated {
		t.Errorf("first page of p1: %v more=%v truncated=%v", requestIDs(p), p.More, p.Truncated)
	}
	p, err = r.ReadAudit(t.Context(), audit.AuditQuery{Limit: 2, Principal: "p1", Before: p.Next})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(requestIDs(p)) != "[r01]" || p.More {
		t.Errorf("second page of p1: %v more=%v", requestIDs(p), p.More)
	}
	if p, err := r.ReadAudit(t.Context(), audit.AuditQuery{Limit: 5, Since: time.Now().Add(time.Hour)}); err != nil || len(p.Entries) != 0 {
		t.Errorf("since the future: %v, %v", requestIDs(p), err)
	}
	if _, err := r.ReadAudit(t.Context(), audit.AuditQuery{Limit: audit.MaxAuditPage + 1}); err == nil {
		t.Error("limit above MaxAuditPage accepted")
	}
}

func TestKafkaAuditReaderDeadlineTruncates(t *testing.T) {
	r, want := auditFixture(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	p, err := r.ReadAudit(ctx, audit.AuditQuery{Limit: 10})
	if err != nil || !p.Truncated || !p.More || len(p.Entries) != 0 {
		t.Fatalf("read past its deadline: %+v, %v", p, err)
	}
	p, err = r.ReadAudit(t.Context(), audit.AuditQuery{Limit: 10, Before: p.Next})
	if err != nil || fmt.Sprint(requestIDs(p)) != fmt.Sprint(want) {
		t.Errorf("continued after the deadline: %v, %v; want %v", requestIDs(p), err, want)
	}
}
