// The explorer's client of Headwater's public GraphQL API (/graphql). Every request carries the bearer the user
// pasted, kept in sessionStorage only (gone when the tab closes; never in the URL, never in localStorage).
import type { LineagePage } from "./model";
import { nodeRef, type StartRef, type View } from "./view";

const TOKEN_KEY = "headwater.explorer.token";

export const getToken = () => sessionStorage.getItem(TOKEN_KEY) ?? "";
export const setToken = (t: string) => sessionStorage.setItem(TOKEN_KEY, t.trim());
export const clearToken = () => sessionStorage.removeItem(TOKEN_KEY);

/** A refusal or an error answer, with the API's `extensions.code` when it gave one. */
export class ApiError extends Error {
  constructor(message: string, readonly code: string) { super(message); }
}

/** The GraphQL endpoint: /graphql on the origin that served the page. */
const endpoint = () => new URL("../graphql", new URL(".", window.location.href)).toString();

export async function gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await fetch(endpoint(), {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${getToken()}` },
    body: JSON.stringify({ query, variables }),
  });
  if (res.status === 401) throw new ApiError("The token was refused: sign in again.", "UNAUTHENTICATED");
  const body = await res.json().catch(() => ({}));
  if (body.errors?.length) {
    const e = body.errors[0];
    throw new ApiError(e.message ?? "error", e.extensions?.code ?? "ERROR");
  }
  if (!res.ok || !body.data) throw new ApiError(`HTTP ${res.status}`, "ERROR");
  return body.data as T;
}

const NODE = `id __typename
  ... on Dataset { namespace name }
  ... on Job { namespace name }
  ... on Field { path type dataset { id namespace name } }
  ... on RestrictedNode { neighbourOf direction }`;

const LINEAGE = `query Lineage($start: NodeRef!, $direction: Direction!, $depth: Int!, $granularity: Granularity,
    $asOf: Time, $evidence: [EvidenceKind!], $includeAttempted: Boolean, $maxNodes: Int, $after: String) {
  lineage(start: $start, direction: $direction, depth: $depth, granularity: $granularity, asOf: $asOf,
          evidence: $evidence, includeAttempted: $includeAttempted, maxNodes: $maxNodes, after: $after) {
    truncated cursor permissionsFiltered asOf
    nodes { ${NODE} }
    edges { id from to job { id namespace name } validFrom validTo intervals { validFrom validTo publication }
      lastObservedAt stale
      evidence { kind producer source eventIds runId runState jobVersion observedAt publication derivation }
      transformations { type subtype masking description } }
    fanOutMarkers { node direction shown }
    gaps { kind message nodes edges stopReasons }
    coverage { label }
  }
}`;

/** One lineage page from start, with the view's arguments. */
export async function lineage(start: StartRef, v: View, depth: number, direction = v.direction, after?: string): Promise<LineagePage> {
  const d = await gql<{ lineage: LineagePage }>(LINEAGE, {
    start: nodeRef(start), direction, depth, granularity: v.granularity, asOf: v.asOf ?? null,
    evidence: v.evidence.length ? v.evidence : null, includeAttempted: v.includeAttempted, maxNodes: v.page,
    after: after ?? null,
  });
  return d.lineage;
}

export interface SearchHit { __typename: "Dataset" | "Job"; id: string; namespace: string; name: string }

export async function search(query: string): Promise<{ nodes: SearchHit[]; hasNextPage: boolean; permissionsFiltered: boolean }> {
  const d = await gql<{ search: { nodes: SearchHit[]; hasNextPage: boolean; permissionsFiltered: boolean } }>(
    `query Search($q: String!) { search(query: $q, first: 20) { hasNextPage permissionsFiltered
       nodes { __typename ... on Dataset { id namespace name } ... on Job { id namespace name } } } }`, { q: query });
  return d.search;
}

export interface DatasetDetail {
  id: string; namespace: string; name: string; currentNamespace: string; currentName: string; environment?: string | null;
  description?: string | null; createdAt?: string | null; droppedAt?: string | null;
  resolvedFrom?: { namespace: string; name: string; kind: string } | null;
  fields: { path: string; type?: string | null; validFrom: string; validTo?: string | null; observedOnRead: boolean; tags: { name: string }[] }[];
  /** The fields now, to say how the schema changed since the view's asOf. */
  current: { path: string; type?: string | null }[];
  aliases: { namespace: string; name: string; kind: string; validFrom?: string | null; validTo?: string | null }[];
  owners: { name: string; type?: string | null }[];
  tags: { name: string }[];
  versions: { nodes: { version: string; firstSeenAt?: string | null; operation?: string | null; committedAt?: string | null }[]; hasNextPage: boolean };
  lastWrittenBy?: RunSummary | null;
}

export interface RunSummary { id: string; runId: string; state: string; startedAt?: string | null; endedAt?: string | null; job: { namespace: string; name: string } }

export async function dataset(namespace: string, name: string, asOf?: string): Promise<DatasetDetail | null> {
  const d = await gql<{ dataset: DatasetDetail | null }>(`query Dataset($ns: String!, $name: String!, $asOf: Time, $now: Time) {
    dataset(namespace: $ns, name: $name, asOf: $asOf) {
      id namespace name currentNamespace currentName environment description createdAt droppedAt
      resolvedFrom { namespace name kind }
      fields { path type validFrom validTo observedOnRead tags { name } }
      current: fields(asOf: $now) { path type }
      aliases { namespace name kind validFrom validTo }
      owners { name type } tags { name }
      versions(first: 10) { nodes { version firstSeenAt operation committedAt } hasNextPage }
      lastWrittenBy { id runId state startedAt endedAt job { namespace name } }
    } }`, { ns: namespace, name, asOf: asOf ?? null, now: new Date().toISOString() });
  return d.dataset;
}

export interface JobDetail {
  id: string; namespace: string; name: string; jobType?: string | null; integration?: string | null;
  processingType?: string | null; lastSeenAt?: string | null;
  version?: { definitionHash: string; sql?: string | null; sqlWithheld: boolean; validFrom?: string | null } | null;
  runs: { nodes: RunSummary[]; hasNextPage: boolean };
}

export async function job(namespace: string, name: string, asOf?: string): Promise<JobDetail | null> {
  const d = await gql<{ job: JobDetail | null }>(`query Job($ns: String!, $name: String!, $asOf: Time) {
    job(namespace: $ns, name: $name, asOf: $asOf) { id namespace name jobType integration processingType lastSeenAt
      version { definitionHash sql sqlWithheld validFrom }
      runs(first: 5) { hasNextPage nodes { id runId state startedAt endedAt job { namespace name } } } } }`, { ns: namespace, name, asOf: asOf ?? null });
  return d.job;
}

export interface RunDetail extends RunSummary {
  conflictingStates: string[];
  events: { eventType?: string | null; eventTime: string; producer?: string | null }[];
  inputs: { dataset: { namespace: string; name: string }; publication: string; version?: string | null }[];
  outputs: { dataset: { namespace: string; name: string }; publication: string; version?: string | null }[];
}

export async function run(runId: string, jobRef?: { namespace: string; name: string }): Promise<RunDetail | null> {
  const d = await gql<{ run: RunDetail | null }>(`query Run($id: ID!, $job: JobRef) {
    run(id: $id, job: $job) { id runId state conflictingStates startedAt endedAt job { namespace name }
      events { eventType eventTime producer }
      inputs { dataset { namespace name } publication version }
      outputs { dataset { namespace name } publication version } } }`,
  { id: runId, job: jobRef ? { namespace: jobRef.namespace, name: jobRef.name } : null });
  return d.run;
}
