// The view: what one explorer URL shows (start node, direction, depth, granularity, asOf, filters, page size).
// Every view is a shareable URL: parseView(toQuery(v)) gives v back. Pure; tested in view.test.ts.
import type { Direction, Granularity, LineStyle } from "./model";

export interface StartRef { kind: "dataset" | "job" | "field"; namespace: string; name: string; field?: string }

export interface View {
  start?: StartRef;
  direction: Direction;
  depth: number;
  granularity: Granularity;
  /** RFC 3339 instant, or undefined for now. */
  asOf?: string;
  /** Evidence kinds kept (empty: all). */
  evidence: string[];
  includeAttempted: boolean;
  /** Column-edge styles kept at column level (empty: all). */
  transformations: LineStyle[];
  /** maxNodes of each walk and expansion: a node with more neighbours gets "+ more". */
  page: number;
}

export const DEFAULT_VIEW: View = { direction: "BOTH", depth: 2, granularity: "DATASET", evidence: [], includeAttempted: false,
  transformations: [], page: 25 };

/** Bounds of the numbers a URL may set (the server caps depth at 20 hops per page and maxNodes at 5,000). */
export const MAX_DEPTH = 20;
export const MAX_PAGE = 500;

const DIRECTIONS: Direction[] = ["UPSTREAM", "DOWNSTREAM", "BOTH"];
const STYLES: LineStyle[] = ["identity", "transformation", "aggregation", "indirect"];

function int(s: string | null, def: number, min: number, max: number): number {
  const n = s === null ? NaN : Number.parseInt(s, 10);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : def;
}

function list(s: string | null): string[] {
  return s ? s.split(",").filter(Boolean) : [];
}

/** The view a query string (location.search) names; anything invalid falls back to the default. */
export function parseView(search: string): View {
  const q = new URLSearchParams(search);
  const v: View = { ...DEFAULT_VIEW, evidence: [], transformations: [] };
  const ns = q.get("ns"), name = q.get("name");
  if (ns && name) {
    const field = q.get("field") ?? undefined;
    const kind = q.get("kind") === "job" ? "job" : field ? "field" : "dataset";
    v.start = { kind, namespace: ns, name, ...(kind === "field" ? { field } : {}) };
  }
  const dir = q.get("dir") as Direction | null;
  if (dir && DIRECTIONS.includes(dir)) v.direction = dir;
  v.depth = int(q.get("depth"), DEFAULT_VIEW.depth, 1, MAX_DEPTH);
  if (q.get("level") === "column") v.granularity = "FIELD";
  const asOf = q.get("asOf");
  if (asOf && !Number.isNaN(Date.parse(asOf))) v.asOf = new Date(asOf).toISOString();
  v.evidence = list(q.get("evidence")).filter((e) => e === "OBSERVED" || e === "DECLARED");
  v.includeAttempted = q.get("attempted") === "1";
  v.transformations = list(q.get("tx")).filter((t): t is LineStyle => STYLES.includes(t as LineStyle));
  v.page = int(q.get("page"), DEFAULT_VIEW.page, 1, MAX_PAGE);
  return v;
}

/** The query string of a view (defaults left out, so URLs stay short). */
export function toQuery(v: View): string {
  const q = new URLSearchParams();
  if (v.start) {
    if (v.start.kind === "job") q.set("kind", "job");
    q.set("ns", v.start.namespace);
    q.set("name", v.start.name);
    if (v.start.kind === "field" && v.start.field) q.set("field", v.start.field);
  }
  if (v.direction !== DEFAULT_VIEW.direction) q.set("dir", v.direction);
  if (v.depth !== DEFAULT_VIEW.depth) q.set("depth", String(v.depth));
  if (v.granularity === "FIELD") q.set("level", "column");
  if (v.asOf) q.set("asOf", v.asOf);
  if (v.evidence.length) q.set("evidence", v.evidence.join(","));
  if (v.includeAttempted) q.set("attempted", "1");
  if (v.transformations.length) q.set("tx", v.transformations.join(","));
  if (v.page !== DEFAULT_VIEW.page) q.set("page", String(v.page));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The GraphQL NodeRef of a start. */
export function nodeRef(s: StartRef): Record<string, unknown> {
  if (s.kind === "job") return { job: { namespace: s.namespace, name: s.name } };
  if (s.kind === "field") return { field: { namespace: s.namespace, name: s.name, field: s.field } };
  return { dataset: { namespace: s.namespace, name: s.name } };
}

/** A key naming a start (the walk it begins), stable across renders. */
export const startKey = (s: StartRef) => `${s.kind}|${s.namespace}|${s.name}|${s.field ?? ""}`;
