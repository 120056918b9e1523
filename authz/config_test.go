package authz

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/internal/testenv"
)

func TestSetupAppliesPolicyFileAndAudits(t *testing.T) {
	f := newFixture(t)
	kc := testenv.KafkaConfig(t)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	doc := "version: 1\nhiddenNeighbours: REDACT\nroles:\n  - name: " + f.role("viewers") + "\n    grants:\n" +
		"      - privileges: [DESCRIBE]\n        on: {namespace: \"" + f.ns + "\"}\n" +
		"bindings:\n  - role: " + f.role("viewers") + "\n    subjects: [" + f.prefix + "-viewer]\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f.created = append(f.created, f.role("viewers"))
	c := Config{PolicyFile: path, PolicySource: "file:" + f.prefix, AuditTopic: "t." + testenv.Token(4) + ".audit"}
	if _, err := Setup(f.ctx, c, SetupDeps{Store: f.store.store, Kafka: kc, Log: discard(), Clock: time.Now}); err == nil {
		t.Fatal("REDACT without a redact key must be refused")
	}
	c.RedactKey = testenv.Token(16)
	comp, err := Setup(f.ctx, c, SetupDeps{Store: f.store.store, Kafka: kc, EnvironmentOf: envOfTest,
		Registerer: prometheus.NewRegistry(), Log: discard(), Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	if comp.Policy.Settings().HiddenNeighbours != HiddenRedact || comp.Redactor == nil {
		t.Error("settings from the policy file not in force")
	}
	viewer := Principal{Subject: f.prefix + "-viewer"}
	ok, err := describe(f.ctx, comp.Policy, viewer, []Candidate{ds(f.ns, "x.y")})
	if err != nil || !ok[0] {
		t.Errorf("file grant not in force: %v %v", ok, err)
	}
	msgs := testenv.ReadTopic(t, kc, c.AuditTopic, 1, 20*time.Second)
	if len(msgs) != 1 {
		t.Errorf("audit records after the first sync: %d, want 1", len(msgs))
	}
	// A restart with the same file changes nothing.
	again, err := Setup(f.ctx, c, SetupDeps{Store: f.store.store, Kafka: kc, EnvironmentOf: envOfTest, Log: discard(), Clock: time.Now})
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
	if err := (Config{AuditTopic: "a", PolicySource: "file", EpochCheckInterval: time.Hour}).Validate(); err == nil {
		t.Error("an epoch check interval of an hour must be refused")
	}
}
