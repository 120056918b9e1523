package history

// Statements of the loader. Each takes $rows (one map per row), $open (graph.OpenEnd) and $nv (NormVersion).
// Rows are sorted by the key of the shared node they touch, so parallel transactions lock in one order.
const (
	cypherDatasets = `UNWIND $rows AS r
CREATE (d:Dataset {key: r.key, namespace: r.ns, name: r.name, searchName: toLower(r.name), env: r.env, createdAt: r.created,
  updatedAt: r.updated, description: r.desc, owners: '[]', tags: r.tags, facets: '{}', normVersion: $nv})
SET d += r.tagProps
CREATE (n:DatasetName {ident: r.ident, namespace: r.ns, name: r.name, env: r.env})
CREATE (n)-[:NAMES {kind: 'PRIMARY', validFrom: r.primaryFrom, validTo: $open}]->(d)
FOREACH (o IN r.old |
  CREATE (m:DatasetName {ident: o.ident, namespace: r.ns, name: o.name, env: r.env})
  CREATE (m)-[:NAMES {kind: 'RENAMED', validFrom: r.created, validTo: o.until}]->(d))`

	cypherJobs = `UNWIND $rows AS r
CREATE (j:Job {key: r.key, namespace: r.ns, name: r.name, searchName: toLower(r.name), processingType: r.pt, jobType: r.jt,
  integration: r.integration, description: '', firstSeenAt: r.first, lastSeenAt: r.last, normVersion: $nv})
SET j += r.ev, j += r.stamps
CREATE (v:JobVersion {key: r.jv, jobKey: r.key, definitionHash: r.hash, sql: r.sql, sourceCode: '',
  sourceCodeLocation: r.loc, validFrom: r.first, validTo: $open, normVersion: $nv})
CREATE (j)-[:HAS_VERSION]->(v)`

	cypherFields = `UNWIND $rows AS r
MATCH (d:Dataset {key: r.ds})
CREATE (f:Field {key: r.key, datasetKey: r.ds, path: r.path, type: r.type, description: '',
  validFrom: r.from, validTo: $open, observedOnRead: r.read, normVersion: $nv})
CREATE (d)-[:HAS_FIELD]->(f)`

	// An edge's latest evidence (r.ev) is written only when it differs from its job's (projection version 4,
	// docs/adr/0035-write-what-changed.md): the job carries it (cypherJobs, r.ev).
	edgeProps = `{kind: 'OBSERVED', froms: r.froms, tos: r.tos, pubs: r.pubs, validTo: r.validTo,
  firstObservedAt: r.first, normVersion: $nv}`

	cypherInputTo = `UNWIND $rows AS r
MATCH (d:Dataset {key: r.ds}) MATCH (j:Job {key: r.job})
CREATE (d)-[e:INPUT_TO ` + edgeProps + `]->(j)
SET e += r.ev`

	cypherOutputTo = `UNWIND $rows AS r
MATCH (d:Dataset {key: r.ds}) MATCH (j:Job {key: r.job})
CREATE (j)-[e:OUTPUT_TO ` + edgeProps + `]->(d)
SET e += r.ev`

	cypherColumnFeeds = `UNWIND $rows AS r
MATCH (a:Field {key: r.from}) MATCH (b:Field {key: r.to})
CREATE (a)-[c:COLUMN_FEEDS {jobKey: r.job, kind: 'OBSERVED', froms: r.froms, tos: r.tos, pubs: r.pubs,
  validTo: r.validTo, tTypes: r.tt, tSubtypes: r.ts, tMasking: r.tm, tDescriptions: r.td, normVersion: $nv}]->(b)
SET c += r.ev`

	cypherIndirectFeeds = `UNWIND $rows AS r
MATCH (a:Dataset {key: r.from}) MATCH (b:Dataset {key: r.to})
CREATE (a)-[:INDIRECT_FEEDS {jobKey: r.job, outputKey: r.to, subtypes: r.subtypes, froms: r.froms,
  tos: r.tos, pubs: r.pubs, validTo: r.validTo, normVersion: $nv}]->(b)`

	// cypherRuns creates a chunk of runs with everything hanging off them in one statement; jobs and datasets
	// are addressed by element id (looked up once per load), which saves an index seek per relationship.
	cypherRuns = `UNWIND $rows AS r
MATCH (j) WHERE elementId(j) = r.job
CREATE (x:Run {key: r.key, jobKey: r.jobKey, state: r.state, conflictingStates: [], startedAt: r.s,
  endedAt: r.e, nominalStartTime: r.n, parentRunId: r.p, rootRunId: r.root, errorMessage: r.err,
  facets: '{}', lastEventTime: r.last, ioLastAt: r.last, processingType: r.pt, normVersion: $nv})
CREATE (x)-[:OF_JOB]->(j)
WITH x, r
CALL (x, r) {
  UNWIND r.reads AS ds
  MATCH (d) WHERE elementId(d) = ds
  CREATE (x)-[:READ {firstAt: r.s, normVersion: $nv}]->(d)
}
CALL (x, r) {
  UNWIND r.writes AS ds
  MATCH (d) WHERE elementId(d) = ds
  CREATE (x)-[:WROTE {firstAt: r.s, publication: r.pub, normVersion: $nv}]->(d)
}`

	// cypherHubReads writes the READs of runs to hub datasets; every batch holds one hub's rows and one writer
	// owns each hub, so no two transactions contend for a hub node.
	cypherHubReads = `UNWIND $rows AS r
MATCH (x:Run {key: r.run})
MATCH (d) WHERE elementId(d) = r.ds
CREATE (x)-[:READ {firstAt: r.s, normVersion: $nv}]->(d)`
)
