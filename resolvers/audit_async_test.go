package resolvers

import (
	"context"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
)

// slowSink is an audit stream that takes delay to acknowledge each record (a loaded or distant Kafka).
type slowSink struct {
	delay time.Duration
	mem   memAudit
}

func (s *slowSink) Audit(ctx context.Context, r audit.AuditRecord) error {
	time.Sleep(s.delay)
	return s.mem.Audit(ctx, r)
}

// TestDenialAnswerDoesNotWaitForAudit (issue 13 item 11): the answer to a hidden root is sent before its denial
// record reaches the audit stream, so the time of an answer does not tell a hidden root from a missing one; the
// record still arrives. The audit stream here takes a second per record; the writer is the one authz.Setup wires
// for requests (authz.AsyncAuditor).
func TestDenialAnswerDoesNotWaitForAudit(t *testing.T) {
	const delay = time.Second
	sink := &slowSink{delay: delay}
	async := audit.NewAsyncAuditor(sink, audit.AsyncOptions{})
	t.Cleanup(func() { _, _ = async.Close(context.Background()) })
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit, auditor: async})
	q := `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name } }`
	for _, name := range []string{w.secrets[0], "sec.missing"} {
		t0 := time.Now()
		w.post(w.narrow, q, map[string]any{"ns": w.fx.NS, "n": name})
		if d := time.Since(t0); d >= delay/2 {
			t.Errorf("the answer for %s took %s: it waited for the audit stream (%s per record)", name, d, delay)
		}
	}
	deadline := time.Now().Add(5 * delay)
	for time.Now().Before(deadline) {
		for _, r := range sink.mem.all() {
			if r.Principal == w.narrow && r.Decision == audit.DecisionDeny {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the denial never reached the audit stream: %+v", sink.mem.all())
}
