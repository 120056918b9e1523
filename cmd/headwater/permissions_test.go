package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/internal/testenv"
)

// permFixture is one test's unique names over the shared Neo4j; the roles it lists are deleted at the end.
type permFixture struct {
	ctx     context.Context
	store   *grantstore.GrantStore
	prefix  string // unique prefix of role names and subjects
	ns      string // unique namespace
	created []string
}

func newPermFixture(t *testing.T) *permFixture {
	t.Helper()
	f := &permFixture{ctx: t.Context(), store: grantstore.NewGrantStore(testenv.Store(t), time.Now), prefix: testenv.Namespace(t)}
	f.ns = "postgres://" + f.prefix + ":5432"
	t.Cleanup(func() {
		var cs []grant.Change
		for _, r := range f.created {
			cs = append(cs, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: r}})
		}
		_, _ = f.store.Apply(context.Background(), "test-cleanup", cs)
	})
	return f
}

func (f *permFixture) role(n string) string { return f.prefix + "-" + n }

// envOfTest puts every namespace of the test in the default environment.
func envOfTest(string) string { return "default" }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// describe asks pol in one Check batch whether p may DESCRIBE each candidate.
func describe(ctx context.Context, pol authz.Policy, p authz.Principal, cands []authz.Candidate) ([]bool, error) {
	checks := make([]authz.Check, len(cands))
	for i, c := range cands {
		checks[i] = authz.Check{Priv: authz.PrivDescribe, Candidate: c}
	}
	return pol.Check(ctx, p, checks)
}

func TestSetupAppliesPolicyFileAndAudits(t *testing.T) {
	f := newPermFixture(t)
	kc := testenv.KafkaConfig(t)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	doc := "version: 1\nhiddenNeighbours: REDACT\nroles:\n  - name: " + f.role("viewers") + "\n    grants:\n" +
		"      - privileges: [DESCRIBE]\n        on: {namespace: \"" + f.ns + "\"}\n" +
		"bindings:\n  - role: " + f.role("viewers") + "\n    subjects: [" + f.prefix + "-viewer]\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f.created = append(f.created, f.role("viewers"))
	store := testenv.Store(t)
	c := authzConfig{PolicyFile: path, PolicySource: "file:" + f.prefix, AuditTopic: "t." + testenv.Token(4) + ".audit"}
	if _, err := setupPermissions(f.ctx, c, permDeps{Store: store, Kafka: kc, Log: discard(), Clock: time.Now}); err == nil {
		t.Fatal("REDACT without a redact key must be refused")
	}
	c.RedactKey = testenv.Token(16)
	comp, err := setupPermissions(f.ctx, c, permDeps{Store: store, Kafka: kc, EnvironmentOf: envOfTest,
		Registerer: prometheus.NewRegistry(), Log: discard(), Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	if comp.Policy.Settings().HiddenNeighbours != authz.HiddenRedact || comp.Redactor == nil {
		t.Error("settings from the policy file not in force")
	}
	viewer := authz.Principal{Subject: f.prefix + "-viewer"}
	ok, err := describe(f.ctx, comp.Policy, viewer, []authz.Candidate{{Kind: authz.KindDataset, Namespace: f.ns, Name: "x.y"}})
	if err != nil || !ok[0] {
		t.Errorf("file grant not in force: %v %v", ok, err)
	}
	msgs := testenv.ReadTopic(t, kc, c.AuditTopic, 1, 20*time.Second)
	if len(msgs) != 1 {
		t.Errorf("audit records after the first sync: %d, want 1", len(msgs))
	}
	// A restart with the same file changes nothing.
	again, err := setupPermissions(f.ctx, c, permDeps{Store: store, Kafka: kc, EnvironmentOf: envOfTest, Log: discard(), Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Policy.Evaluator().Epoch() < comp.Policy.Evaluator().Epoch() {
		t.Error("epoch went backwards")
	}
	if msgs := testenv.ReadTopic(t, kc, c.AuditTopic, 1, 20*time.Second); len(msgs) != 1 {
		t.Errorf("audit records after the second sync: %d, want still 1", len(msgs))
	}
	if err := (authzConfig{AuditTopic: "a", PolicySource: "file", EpochCheckInterval: time.Hour}).Validate(); err == nil {
		t.Error("an epoch check interval of an hour must be refused")
	}
}
