package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// migration is one versioned, idempotent schema step.
type migration struct {
	version    int
	statements []string
}

// migrations are applied in order; each statement is idempotent (IF NOT EXISTS), so a crash mid-way is safe.
// Append only: never edit a released migration.
var migrations = []migration{
	{1, []string{
		"CREATE CONSTRAINT dataset_key IF NOT EXISTS FOR (n:Dataset) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT dataset_name_ident IF NOT EXISTS FOR (n:DatasetName) REQUIRE n.ident IS UNIQUE",
		"CREATE CONSTRAINT job_key IF NOT EXISTS FOR (n:Job) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT job_version_key IF NOT EXISTS FOR (n:JobVersion) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT run_key IF NOT EXISTS FOR (n:Run) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT event_key IF NOT EXISTS FOR (n:Event) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT field_key IF NOT EXISTS FOR (n:Field) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT dataset_version_key IF NOT EXISTS FOR (n:DatasetVersion) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT unresolved_key IF NOT EXISTS FOR (n:UnresolvedIdentity) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT quarantined_key IF NOT EXISTS FOR (n:Quarantined) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT schema_version_id IF NOT EXISTS FOR (n:SchemaVersion) REQUIRE n.id IS UNIQUE",
		"CREATE INDEX dataset_ns_name IF NOT EXISTS FOR (n:Dataset) ON (n.namespace, n.name)",
		"CREATE INDEX job_ns_name IF NOT EXISTS FOR (n:Job) ON (n.namespace, n.name)",
		"CREATE INDEX run_job IF NOT EXISTS FOR (n:Run) ON (n.jobKey)",
		"CREATE INDEX field_dataset IF NOT EXISTS FOR (n:Field) ON (n.datasetKey, n.path)",
		"CREATE INDEX event_run IF NOT EXISTS FOR (n:Event) ON (n.runKey)",
		"CREATE TEXT INDEX dataset_name_text IF NOT EXISTS FOR (n:Dataset) ON (n.name)",
		"CREATE TEXT INDEX job_name_text IF NOT EXISTS FOR (n:Job) ON (n.name)",
	}},
	{2, []string{ // permissions (authz) and authentication (authn)
		"CREATE CONSTRAINT role_name IF NOT EXISTS FOR (n:Role) REQUIRE n.name IS UNIQUE",
		"CREATE CONSTRAINT grant_id IF NOT EXISTS FOR (n:Grant) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT role_binding_id IF NOT EXISTS FOR (n:RoleBinding) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT grant_epoch_id IF NOT EXISTS FOR (n:GrantEpoch) REQUIRE n.id IS UNIQUE",
		"CREATE INDEX grant_role IF NOT EXISTS FOR (n:Grant) ON (n.role)",
		"CREATE INDEX role_binding_subject IF NOT EXISTS FOR (n:RoleBinding) ON (n.subject)",
		"CREATE INDEX role_binding_role IF NOT EXISTS FOR (n:RoleBinding) ON (n.role)",
		"CREATE CONSTRAINT api_token_id IF NOT EXISTS FOR (n:ApiToken) REQUIRE n.id IS UNIQUE",
		"CREATE INDEX api_token_owner IF NOT EXISTS FOR (n:ApiToken) ON (n.owner)",
	}},
	{3, []string{ // the projector finds a job's runs after its checkpoint without scanning all of them
		"CREATE INDEX run_job_first_event IF NOT EXISTS FOR (n:Run) ON (n.jobKey, n.firstEventAt)",
	}},
	{4, []string{ // sealed chunks of a dataset's observation log (ingest/project/dslog.go)
		"CREATE CONSTRAINT dataset_log_chunk_key IF NOT EXISTS FOR (n:DatasetLogChunk) REQUIRE n.key IS UNIQUE",
		"CREATE INDEX dataset_log_chunk_dataset IF NOT EXISTS FOR (n:DatasetLogChunk) ON (n.datasetKey, n.to)",
	}},
	{5, []string{ // stored copies of job checkpoints, for late runs (ingest/project/checkpoint.go)
		"CREATE CONSTRAINT job_checkpoint_key IF NOT EXISTS FOR (n:JobCheckpoint) REQUIRE n.key IS UNIQUE",
		"CREATE INDEX job_checkpoint_job IF NOT EXISTS FOR (n:JobCheckpoint) ON (n.jobKey, n.at)",
	}},
	{6, []string{
		// case-insensitive search matches searchName CONTAINS (graph.Store.SearchAfter, ADR 0026)
		"CREATE TEXT INDEX dataset_search_name_text IF NOT EXISTS FOR (n:Dataset) ON (n.searchName)",
		"CREATE TEXT INDEX job_search_name_text IF NOT EXISTS FOR (n:Job) ON (n.searchName)",
		// the expected-job inventory and the trust signals' windowed reads (ADR 0031)
		"CREATE CONSTRAINT inventory_source_key IF NOT EXISTS FOR (n:InventorySource) REQUIRE n.key IS UNIQUE",
		"CREATE CONSTRAINT expected_job_key IF NOT EXISTS FOR (n:ExpectedJob) REQUIRE n.key IS UNIQUE",
		"CREATE INDEX expected_job_source IF NOT EXISTS FOR (n:ExpectedJob) ON (n.source)",
		"CREATE INDEX expected_job_namespace IF NOT EXISTS FOR (n:ExpectedJob) ON (n.namespace)",
		"CREATE CONSTRAINT coverage_sample_key IF NOT EXISTS FOR (n:CoverageSample) REQUIRE n.key IS UNIQUE",
		"CREATE INDEX coverage_sample_signal IF NOT EXISTS FOR (n:CoverageSample) ON (n.signal, n.at)",
		"CREATE INDEX event_received IF NOT EXISTS FOR (n:Event) ON (n.receivedAt)",
		"CREATE INDEX unresolved_last_seen IF NOT EXISTS FOR (n:UnresolvedIdentity) ON (n.lastSeenAt)",
		"CREATE INDEX quarantined_received IF NOT EXISTS FOR (n:Quarantined) ON (n.receivedAt)",
	}},
	{7, []string{ // the projector's per-partition replay points (ingest/project/dsfold.go, ADR 0036): one node each
		"CREATE CONSTRAINT projector_progress_partition IF NOT EXISTS FOR (n:ProjectorProgress) REQUIRE n.partition IS UNIQUE",
	}},
	{8, []string{ // the scoped trend points (trust/sampler, ADR 0043): one per scope, signal and sample
		"CREATE CONSTRAINT coverage_scope_sample_key IF NOT EXISTS FOR (n:CoverageScopeSample) REQUIRE n.key IS UNIQUE",
		"CREATE INDEX coverage_scope_sample_scope IF NOT EXISTS FOR (n:CoverageScopeSample) ON (n.scope, n.signal, n.at)",
		"CREATE INDEX coverage_scope_sample_at IF NOT EXISTS FOR (n:CoverageScopeSample) ON (n.at)",
	}},
	{9, []string{ // the scheduled catalog syncs' leases (ingest/icebergsync/schedule, ADR 0049): one per catalog, so
		// two processes' first MERGE of a catalog's lease cannot create two
		"CREATE CONSTRAINT catalog_sync_lease_catalog IF NOT EXISTS FOR (n:CatalogSyncLease) REQUIRE n.catalog IS UNIQUE",
		// and the runs that wrote a snapshot, found by its id (the UNREPORTED_WRITE gap, trust/truststore, ADR 0050)
		"CREATE INDEX wrote_dataset_version IF NOT EXISTS FOR ()-[w:WROTE]-() ON (w.datasetVersion)",
		// and the catalog commits of a window (the reported-writes coverage figure)
		"CREATE INDEX dataset_version_committed IF NOT EXISTS FOR (n:DatasetVersion) ON (n.committedAt)",
	}},
	{10, []string{ // the runs that read a snapshot, found by its id: a snapshot synced after them re-resolves their
		// column lineage through its schema (ingest/project/schemarefs.go, ADR 0065)
		"CREATE INDEX read_dataset_version IF NOT EXISTS FOR ()-[r:READ]-() ON (r.datasetVersion)",
	}},
}

// SchemaVersion is the newest schema version this binary knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// ErrSchemaTooNew means the database was migrated by a newer Headwater; this binary must not write to it.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// CurrentSchemaVersion reads the version recorded in the database (0 when never migrated).
func (s *Store) CurrentSchemaVersion(ctx context.Context) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.Driver,
		"OPTIONAL MATCH (v:SchemaVersion {id: 'headwater'}) RETURN coalesce(v.version, 0) AS v", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	v, _ := res.Records[0].Get("v")
	n, _ := v.(int64)
	return int(n), nil
}

// Migrate applies every migration newer than the database's version. It is idempotent.
// It returns the version before and after.
func (s *Store) Migrate(ctx context.Context) (from, to int, err error) {
	from, err = s.CurrentSchemaVersion(ctx)
	if err != nil {
		return 0, 0, err
	}
	if from > SchemaVersion() {
		return from, from, fmt.Errorf("%w: database at %d, binary knows %d", ErrSchemaTooNew, from, SchemaVersion())
	}
	to = from
	for _, m := range migrations {
		if m.version <= from {
			continue
		}
		for _, stmt := range m.statements {
			if _, err := neo4j.ExecuteQuery(ctx, s.Driver, stmt, nil, neo4j.EagerResultTransformer,
				neo4j.ExecuteQueryWithDatabase(s.Database)); err != nil {
				return from, to, fmt.Errorf("migration %d (%s): %w", m.version, stmt, err)
			}
		}
		if _, err := neo4j.ExecuteQuery(ctx, s.Driver,
			"MERGE (v:SchemaVersion {id: 'headwater'}) SET v.version = $v",
			map[string]any{"v": m.version}, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(s.Database)); err != nil {
			return from, to, fmt.Errorf("record schema version %d: %w", m.version, err)
		}
		to = m.version
	}
	return from, to, nil
}

// CheckSchema refuses a database migrated by a newer binary, and one never migrated.
func (s *Store) CheckSchema(ctx context.Context) error {
	v, err := s.CurrentSchemaVersion(ctx)
	if err != nil {
		return err
	}
	return compareSchema(v, SchemaVersion())
}

// ErrSchemaTooOld means the database needs `headwater migrate` before this binary can serve it.
var ErrSchemaTooOld = errors.New("database schema is older than this binary")

func compareSchema(db, binary int) error {
	switch {
	case db > binary:
		return fmt.Errorf("%w: database at %d, binary knows %d; upgrade headwater", ErrSchemaTooNew, db, binary)
	case db < binary:
		return fmt.Errorf("%w: database at %d, this binary needs %d; run `headwater migrate`", ErrSchemaTooOld, db, binary)
	}
	return nil
}
