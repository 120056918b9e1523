package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/auditkafka"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/authz/policyfile"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/resolvers"
)

// authzConfig is the permission configuration (grant policy, policy file, audit stream).
type authzConfig struct {
	PolicyFile         string        `help:"YAML policy file applied at start (roles, grants, bindings, sensitive namespaces and tags, hidden-neighbour mode); empty: grants only through the API." default:"" env:"HEADWATER_AUTHZ_POLICY_FILE" yaml:"policyFile"`
	PolicySource       string        `help:"Tag of what the policy file creates; a sync removes only items carrying it. Change only to run several independent policy files." default:"file" env:"HEADWATER_AUTHZ_POLICY_SOURCE" yaml:"policySource"`
	AuditTopic         string        `help:"Kafka topic of the append-only audit stream." default:"headwater.audit" env:"HEADWATER_AUTHZ_AUDIT_TOPIC" yaml:"auditTopic"`
	EpochCheckInterval time.Duration `help:"How often a replica reads the grant epoch. A grant change made through this server applies to its next query; one made on another replica applies here within this interval. 0 reads the epoch on every query." default:"1s" env:"HEADWATER_AUTHZ_EPOCH_CHECK_INTERVAL" yaml:"epochCheckInterval"`
	RedactKey          string        `help:"Secret (at least 32 bytes, the same on every replica) keying REDACT placeholder ids; required when the policy file sets hiddenNeighbours: REDACT." default:"" env:"HEADWATER_AUTHZ_REDACT_KEY" yaml:"redactKey" secret:"true"`
}

// maxEpochCheckInterval bounds how stale a replica's grants may be.
const maxEpochCheckInterval = time.Minute

// Validate reports the first invalid setting by name.
func (c authzConfig) Validate() error {
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

// The composition: each consumer declares the narrow interface it needs; these are the implementations wired here.
var (
	_ authz.Policy             = (*grantpolicy.GrantPolicy)(nil) // lineage: scope, batched checks, settings
	_ producecheck.Policy      = (*grantpolicy.GrantPolicy)(nil) // gateway and consumer: PRODUCE
	_ apitoken.ManageChecker   = (*grantpolicy.GrantPolicy)(nil) // API tokens: MANAGE_GRANTS on ROOT
	_ manage.ChangeStore       = (*grantstore.GrantStore)(nil)
	_ resolvers.AuditReader    = (*auditkafka.KafkaAuditReader)(nil)
	_ audit.Auditor            = (*auditkafka.KafkaAuditor)(nil)
	_ grantpolicy.NameResolver = grantstore.GraphNames{}
)

// permServices are the wired permission services.
type permServices struct {
	Store   *grantstore.GrantStore
	Policy  *grantpolicy.GrantPolicy
	Manager *manage.Manager
	Auditor *auditkafka.KafkaAuditor
	// RequestAuditor writes the per-request records (sensitive reads, denials) asynchronously through Auditor,
	// so an answer never waits for the audit stream; grant changes stay synchronous (Manager, token admin).
	RequestAuditor *audit.AsyncAuditor
	// Redactor makes REDACT placeholder ids; nil unless a redact key is configured.
	Redactor *authz.Redactor
}

// auditDrainTimeout bounds how long Close waits for queued request audit records to reach the audit stream.
const auditDrainTimeout = 10 * time.Second

// Close drains the request audit queue, then closes the audit producer.
func (c *permServices) Close() error {
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

// permDeps are what the permission services need from the rest of the process.
type permDeps struct {
	Store         *graph.Store
	Kafka         kafkaio.Config
	Canonicalizer grant.Canonicalizer // normalize.Normalizer; nil takes securables as given
	EnvironmentOf grantpolicy.EnvironmentOf
	Registerer    prometheus.Registerer
	Log           *slog.Logger
	Clock         func() time.Time
}

// permissions wires the grant model over this pipeline's store and normaliser.
func (p *pipeline) permissions(ctx context.Context, c authzConfig, kc kafkaio.Config, log *slog.Logger,
	reg prometheus.Registerer) (*permServices, error) {
	return setupPermissions(ctx, c, permDeps{Store: p.store, Kafka: kc, Canonicalizer: p.norm,
		EnvironmentOf: p.norm.Environment, Registerer: reg, Log: log, Clock: time.Now})
}

// setupPermissions composes the permission services: it reads the policy file (if any), creates the audit topic
// and producer, loads the grants, and applies the policy file idempotently.
func setupPermissions(ctx context.Context, c authzConfig, d permDeps) (*permServices, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	pf, settings, err := readPolicyFile(c)
	if err != nil {
		return nil, err
	}
	red, err := redactor(c, settings)
	if err != nil {
		return nil, err
	}
	aud, err := auditkafka.NewKafkaAuditor(d.Kafka, c.AuditTopic)
	if err != nil {
		return nil, err
	}
	comp, err := grantServices(ctx, c, d, settings, aud)
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
	comp.RequestAuditor = audit.NewAsyncAuditor(aud, audit.AsyncOptions{Log: d.Log, Registerer: d.Registerer})
	return comp, nil
}

// readPolicyFile loads the configured policy file (nil when none) and the settings it declares.
func readPolicyFile(c authzConfig) (*policyfile.PolicyFile, authz.Settings, error) {
	if c.PolicyFile == "" {
		return nil, authz.Settings{}, nil
	}
	f, err := policyfile.LoadPolicyFile(c.PolicyFile)
	if err != nil {
		return nil, authz.Settings{}, err
	}
	f.Source = c.PolicySource
	return &f, f.Settings(), nil
}

// redactor is the REDACT placeholder-id maker: required when the settings say REDACT, nil without a key.
func redactor(c authzConfig, settings authz.Settings) (*authz.Redactor, error) {
	if c.RedactKey == "" && settings.HiddenNeighbours != authz.HiddenRedact {
		return nil, nil
	}
	r, err := authz.NewRedactor(c.RedactKey)
	if err != nil {
		return nil, fmt.Errorf("authz.redact-key: %w", err)
	}
	return r, nil
}

// grantServices composes the grant store, the policy over it (names resolved in the graph) and the manager.
func grantServices(ctx context.Context, c authzConfig, d permDeps, settings authz.Settings, aud *auditkafka.KafkaAuditor) (*permServices, error) {
	var metrics *grantpolicy.PolicyMetrics
	if d.Registerer != nil {
		metrics = grantpolicy.NewPolicyMetrics(d.Registerer)
	}
	store := grantstore.NewGrantStore(d.Store, d.Clock)
	pol, err := grantpolicy.NewGrantPolicy(ctx, store, grantpolicy.PolicyOptions{Settings: settings, EnvironmentOf: d.EnvironmentOf,
		Names: grantstore.GraphNames{Store: d.Store}, EpochCheckInterval: c.EpochCheckInterval, Clock: d.Clock, Log: d.Log,
		Metrics: metrics})
	if err != nil {
		return nil, err
	}
	return &permServices{Store: store, Policy: pol, Auditor: aud,
		Manager: manage.NewManager(store, pol, aud, d.Canonicalizer, d.Clock)}, nil
}
