package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// Config is the permission configuration (grant policy, policy file, audit stream).
type Config struct {
	PolicyFile         string        `help:"YAML policy file applied at start (roles, grants, bindings, sensitive namespaces and tags, hidden-neighbour mode); empty: grants only through the API." default:"" env:"HEADWATER_AUTHZ_POLICY_FILE" yaml:"policyFile"`
	PolicySource       string        `help:"Tag of what the policy file creates; a sync removes only items carrying it. Change only to run several independent policy files." default:"file" env:"HEADWATER_AUTHZ_POLICY_SOURCE" yaml:"policySource"`
	AuditTopic         string        `help:"Kafka topic of the append-only audit stream." default:"headwater.audit" env:"HEADWATER_AUTHZ_AUDIT_TOPIC" yaml:"auditTopic"`
	EpochCheckInterval time.Duration `help:"How often a replica reads the grant epoch. A grant change made through this server applies to its next query; one made on another replica applies here within this interval. 0 reads the epoch on every query." default:"1s" env:"HEADWATER_AUTHZ_EPOCH_CHECK_INTERVAL" yaml:"epochCheckInterval"`
	RedactKey          string        `help:"Secret (at least 32 bytes, the same on every replica) keying REDACT placeholder ids; required when the policy file sets hiddenNeighbours: REDACT." default:"" env:"HEADWATER_AUTHZ_REDACT_KEY" yaml:"redactKey" secret:"true"`
}

// maxEpochCheckInterval bounds how stale a replica's grants may be.
const maxEpochCheckInterval = time.Minute

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	switch {
	case c.AuditTopic == "":
		return errors.New("authz.audit-topic: must not be empty")
	case c.PolicySource == "":
		return errors.New("authz.policy-source: must not be empty")
	case c.EpochCheckInterval < 0 || c.EpochCheckInterval > maxEpochCheckInterval:
		return fmt.Errorf("authz.epoch-check-interval: must be between 0 and %s", maxEpochCheckInterval)
	}
	return nil
}

// Components are the wired permission services.
type Components struct {
	Store   *GrantStore
	Policy  *GrantPolicy
	Manager *Manager
	Auditor *KafkaAuditor
	// RequestAuditor writes the per-request records (sensitive reads, denials) asynchronously through Auditor,
	// so an answer never waits for the audit stream; grant changes stay synchronous (Manager, token admin).
	RequestAuditor *AsyncAuditor
	// Redactor makes REDACT placeholder ids; nil unless a redact key is configured.
	Redactor *Redactor
}

// auditDrainTimeout bounds how long Close waits for queued request audit records to reach the audit stream.
const auditDrainTimeout = 10 * time.Second

// Close drains the request audit queue, then closes the audit producer.
func (c *Components) Close() error {
	if c.RequestAuditor != nil {
		ctx, cancel := context.WithTimeout(context.Background(), auditDrainTimeout)
		defer cancel()
		if lost, err := c.RequestAuditor.Close(ctx); err != nil {
			_ = c.Auditor.Close()
			return fmt.Errorf("audit queue not drained, %d records lost: %w", lost, err)
		}
	}
	return c.Auditor.Close()
}

// SetupDeps are what Setup needs from the rest of the process.
type SetupDeps struct {
	Store         *graph.Store
	Kafka         kafkaio.Config
	Canonicalizer Canonicalizer // normalize.Normalizer; nil takes securables as given
	EnvironmentOf EnvironmentOf
	Names         NameResolver // nil: GraphNames over Store
	Registerer    prometheus.Registerer
	Log           *slog.Logger
	Clock         func() time.Time
}

// Setup wires the permission services: it reads the policy file (if any), creates the audit topic and producer,
// loads the grants, and applies the policy file idempotently.
func Setup(ctx context.Context, c Config, d SetupDeps) (*Components, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var pf *PolicyFile
	settings := Settings{}
	if c.PolicyFile != "" {
		f, err := LoadPolicyFile(c.PolicyFile)
		if err != nil {
			return nil, err
		}
		f.Source = c.PolicySource
		pf, settings = &f, f.Settings()
	}
	var red *Redactor
	if c.RedactKey != "" || settings.HiddenNeighbours == HiddenRedact {
		r, err := NewRedactor(c.RedactKey)
		if err != nil {
			return nil, fmt.Errorf("authz.redact-key: %w", err)
		}
		red = r
	}
	aud, err := NewKafkaAuditor(d.Kafka, c.AuditTopic)
	if err != nil {
		return nil, err
	}
	comp, err := setupPolicy(ctx, c, d, settings, aud)
	if err != nil {
		_ = aud.Close()
		return nil, err
	}
	comp.Redactor = red
	if pf != nil {
		res, err := comp.Manager.SyncPolicyFile(ctx, *pf)
		if err != nil {
			_ = aud.Close()
			return nil, fmt.Errorf("apply policy file %s: %w", c.PolicyFile, err)
		}
		d.Log.Info("policy file applied", "path", c.PolicyFile, "changes", len(res.Changed), "epoch", res.Epoch)
	}
	comp.RequestAuditor = NewAsyncAuditor(aud, AsyncOptions{Log: d.Log, Registerer: d.Registerer})
	return comp, nil
}

func setupPolicy(ctx context.Context, c Config, d SetupDeps, settings Settings, aud *KafkaAuditor) (*Components, error) {
	names := d.Names
	if names == nil {
		names = GraphNames{Store: d.Store}
	}
	var metrics *PolicyMetrics
	if d.Registerer != nil {
		metrics = NewPolicyMetrics(d.Registerer)
	}
	store := NewGrantStore(d.Store, d.Clock)
	pol, err := NewGrantPolicy(ctx, store, PolicyOptions{Settings: settings, EnvironmentOf: d.EnvironmentOf,
		Names: names, EpochCheckInterval: c.EpochCheckInterval, Clock: d.Clock, Log: d.Log, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	return &Components{Store: store, Policy: pol, Auditor: aud,
		Manager: NewManager(store, pol, aud, d.Canonicalizer, d.Clock)}, nil
}
