// The explorer's graph model: lineage pages (the public GraphQL `lineage` answers) merged into one graph, with
// what the page draws derived from it. Pure: no I/O, no DOM, no React; tested in model.test.ts.

export type Direction = "UPSTREAM" | "DOWNSTREAM" | "BOTH";
export type Granularity = "DATASET" | "FIELD";

export interface DatasetNode { __typename: "Dataset"; id: string; namespace: string; name: string; currentName?: string }
export interface FieldNode {
  __typename: "Field"; id: string; path: string; type?: string | null;
  dataset: { id: string; namespace: string; name: string };
}
export interface RestrictedNode { __typename: "RestrictedNode"; id: string; neighbourOf: string; direction: Direction }
export interface JobNode { __typename: "Job"; id: string; namespace: string; name: string }
export type AnswerNode = DatasetNode | FieldNode | RestrictedNode | JobNode;

export interface Evidence {
  kind: "OBSERVED" | "DECLARED"; producer?: string | null; source?: string | null; eventIds?: string[];
  runId?: string | null; runState?: string | null; jobVersion?: string | null; observedAt: string;
  publication?: string | null; derivation?: string | null;
}
export interface Transformation { type: "DIRECT" | "INDIRECT"; subtype?: string | null; masking: boolean; description?: string | null }
export interface Interval { validFrom: string; validTo?: string | null; publication?: string | null }
export interface Edge {
  id: string; from: string; to: string; job?: { id: string; namespace: string; name: string } | null;
  validFrom: string; validTo?: string | null; intervals?: Interval[]; lastObservedAt?: string | null; stale: boolean;
  evidence: Evidence[]; transformations: Transformation[];
}
export interface Gap { kind: string; message: string; nodes: string[]; edges: string[]; stopReasons?: string[] | null }
export interface FanOutMarker { node: string; direction: Direction; shown: number }
export interface LineagePage {
  nodes: AnswerNode[]; edges: Edge[]; truncated: boolean; cursor?: string | null; fanOutMarkers: FanOutMarker[];
  gaps: Gap[]; permissionsFiltered: boolean; asOf: string;
  /** How much of the page the inventory vouches for (null when the trust signals are not configured). */
  coverage?: { label: string } | null;
}

/**
 * Where a page came from: the key of its walk, the walk's direction, and the node it expands (an expansion of a
 * node one hop) or undefined for the view's walk from its start (then the page's first node is the start).
 */
export interface PageOrigin { key: string; direction: Direction; expands?: string }

/** A walk that can continue: the node it hangs on (its start), its direction, why it stopped, and its cursor. */
export interface More { key: string; node: string; direction: Direction; cursor: string; reasons: string[] }

export interface Graph {
  nodes: Map<string, AnswerNode>;
  edges: Map<string, Edge>;
  gaps: Gap[];
  /** Walks that stopped at a budget, by origin key: "+ more" continues them. */
  more: Map<string, More>;
  /** Nodes expanded one hop (both directions) at least once. */
  expanded: Set<string>;
  permissionsFiltered: boolean;
  asOf?: string;
  /** The latest page's coverage sentence. */
  coverage?: string;
  /** Nodes with more neighbours than one page shows (the API's fan-out markers): how many it showed. */
  fanOut: Map<string, FanOutMarker>;
}

export function emptyGraph(): Graph {
  return { nodes: new Map(), edges: new Map(), gaps: [], more: new Map(), expanded: new Set(), permissionsFiltered: false,
    fanOut: new Map() };
}

const gapKey = (g: Gap) => `${g.kind}|${g.message}|${g.nodes.join(",")}|${g.edges.join(",")}`;

/**
 * Merges one lineage page into the graph (a new graph; the argument is not changed). Nodes and edges are keyed by
 * their ids, so a node reached by two walks is drawn once. A truncated page leaves a "+ more" for its origin; the
 * page that continues it (or a complete one) removes it. permissionsFiltered is sticky: once any page says so,
 * the view says so.
 */
export function mergePage(g: Graph, page: LineagePage, origin: PageOrigin): Graph {
  const nodes = new Map(g.nodes);
  for (const n of page.nodes) nodes.set(n.id, n);
  const edges = new Map(g.edges);
  for (const e of page.edges) edges.set(e.id, e);
  const seen = new Set(g.gaps.map(gapKey));
  const gaps = [...g.gaps];
  for (const gp of page.gaps) {
    if (gp.kind === "TRUNCATED") continue; // said by the "+ more" of its walk
    if (!seen.has(gapKey(gp))) { seen.add(gapKey(gp)); gaps.push(gp); }
  }
  const more = new Map(g.more);
  more.delete(origin.key);
  if (page.truncated && page.cursor) {
    const reasons = page.gaps.filter((x) => x.kind === "TRUNCATED").flatMap((x) => x.stopReasons ?? []);
    const node = origin.expands ?? g.more.get(origin.key)?.node ?? page.nodes[0]?.id ?? "";
    more.set(origin.key, { key: origin.key, node, direction: origin.direction, cursor: page.cursor, reasons });
  }
  const expanded = new Set(g.expanded);
  if (origin.expands) expanded.add(origin.expands);
  const fanOut = new Map(g.fanOut);
  for (const m of page.fanOutMarkers) {
    const k = `${m.node}|${m.direction}`;
    fanOut.set(k, { ...m, shown: (fanOut.get(k)?.shown ?? 0) + m.shown });
  }
  return { fanOut, nodes, edges, gaps, more, expanded, permissionsFiltered: g.permissionsFiltered || page.permissionsFiltered,
    asOf: g.asOf ?? page.asOf, coverage: page.coverage?.label ?? g.coverage };
}

/** A box the page draws: a dataset (with its fields at column level), or a restricted placeholder. */
export interface Box {
  id: string;
  kind: "dataset" | "job" | "restricted";
  namespace?: string;
  name?: string;
  /** Field rows, in path order (column level only). */
  fields: { id: string; path: string; type?: string | null }[];
  /** Gap kinds that name this box (or one of its fields), for badges. */
  badges: string[];
  start: boolean;
  /** Walks hanging on this box that stopped at a budget ("+ more", one per walk). */
  more: More[];
}

/** A line the page draws between two boxes (dataset level) or two field rows (column level). */
export interface Line {
  id: string;
  source: string; // box id
  target: string; // box id
  sourceField?: string;
  targetField?: string;
  edge?: Edge; // absent for the line to a restricted placeholder
  style: LineStyle;
  label: string;
}

export type LineStyle = "identity" | "transformation" | "aggregation" | "indirect" | "dataset" | "declared" | "attempted" | "restricted";

/** The colour class of a column edge: its strongest DIRECT subtype, else INDIRECT. */
export function transformationStyle(ts: Transformation[]): LineStyle {
  const direct = ts.filter((t) => t.type === "DIRECT").map((t) => (t.subtype ?? "").toUpperCase());
  if (direct.includes("AGGREGATION")) return "aggregation";
  if (direct.includes("TRANSFORMATION")) return "transformation";
  if (direct.length > 0) return "identity";
  return "indirect";
}

export const isMasked = (e: Edge) => e.transformations.some((t) => t.masking);

/** Only declared evidence, never observed by a run. */
export const isDeclaredOnly = (e: Edge) => e.evidence.length > 0 && e.evidence.every((x) => x.kind === "DECLARED");

/** Every observed record is of an attempt (a failed or aborted run, a withheld output). */
export const isAttempted = (e: Edge) => {
  const obs = e.evidence.filter((x) => x.kind === "OBSERVED");
  return obs.length > 0 && obs.every((x) => x.publication && x.publication !== "PUBLISHED");
};

function lineStyle(e: Edge, granularity: Granularity): LineStyle {
  if (isAttempted(e)) return "attempted";
  if (granularity === "FIELD" && e.transformations.length > 0) return transformationStyle(e.transformations);
  if (isDeclaredOnly(e)) return "declared";
  return "dataset";
}

/** Days between two instants, rounded down. */
export function daysBetween(from: string, to: string): number {
  return Math.floor((Date.parse(to) - Date.parse(from)) / 86_400_000);
}

function lineLabel(e: Edge, granularity: Granularity, asOf?: string): string {
  const parts: string[] = [];
  if (granularity === "DATASET") parts.push(e.job ? e.job.name : "job hidden");
  if (granularity === "FIELD") {
    const t = e.transformations.map((x) => (x.subtype ? x.subtype.toLowerCase() : x.type.toLowerCase()));
    if (t.length) parts.push(t.join(", "));
  }
  if (isMasked(e)) parts.push("masked");
  if (isDeclaredOnly(e)) parts.push("declared only");
  if (e.stale) {
    parts.push(e.lastObservedAt && asOf ? `stale: last observed ${daysBetween(e.lastObservedAt, asOf)} days ago` : "stale");
  }
  return parts.join(" · ");
}

/** Which edges the filters keep: evidence kinds (empty = all) and transformation styles (empty = all). */
export interface Filters { evidence: string[]; transformations: LineStyle[] }

function keepEdge(e: Edge, f: Filters, granularity: Granularity): boolean {
  if (f.evidence.length > 0 && !e.evidence.some((x) => f.evidence.includes(x.kind))) return false;
  if (granularity === "FIELD" && f.transformations.length > 0 && e.transformations.length > 0 &&
      !f.transformations.includes(transformationStyle(e.transformations))) return false;
  return true;
}

/** The dataset id a node belongs to (itself for a dataset; its dataset for a field). */
export function boxOf(g: Graph, id: string): string | undefined {
  const n = g.nodes.get(id);
  if (!n) return undefined;
  if (n.__typename === "Field") return n.dataset.id;
  return n.id;
}

/**
 * What the page draws at a granularity: boxes and lines. At column level fields sit in their dataset's box
 * (a field's dataset box exists even when the answer did not list the dataset itself); a restricted placeholder
 * is its own box with a line to the node it stands beside.
 */
export function scene(g: Graph, granularity: Granularity, startId: string | undefined, filters: Filters): { boxes: Box[]; lines: Line[] } {
  const boxes = new Map<string, Box>();
  const box = (id: string, kind: Box["kind"], namespace?: string, name?: string): Box => {
    let b = boxes.get(id);
    if (!b) {
      b = { id, kind, namespace, name, fields: [], badges: [], start: false, more: [] };
      boxes.set(id, b);
    }
    return b;
  };
  for (const n of g.nodes.values()) {
    if (n.__typename === "Dataset") box(n.id, "dataset", n.namespace, n.name);
    if (n.__typename === "Field") {
      const b = box(n.dataset.id, "dataset", n.dataset.namespace, n.dataset.name);
      if (granularity === "FIELD") b.fields.push({ id: n.id, path: n.path, type: n.type });
    }
    if (n.__typename === "RestrictedNode") box(n.id, "restricted");
    if (n.__typename === "Job") box(n.id, "job", n.namespace, n.name); // a job start: its inputs and outputs
  }
  for (const b of boxes.values()) b.fields.sort((a, c) => a.path.localeCompare(c.path));
  if (startId) {
    const s = boxOf(g, startId);
    if (s && boxes.has(s)) boxes.get(s)!.start = true;
  }
  for (const gp of g.gaps) {
    for (const id of gp.nodes) {
      const b = boxes.get(boxOf(g, id) ?? "");
      if (b && !b.badges.includes(gp.kind)) b.badges.push(gp.kind);
    }
  }
  for (const m of g.more.values()) {
    const b = boxes.get(boxOf(g, m.node) ?? "");
    if (b) b.more.push(m);
  }
  for (const m of g.fanOut.values()) {
    const b = boxes.get(boxOf(g, m.node) ?? "");
    const word = `${m.shown} ${m.direction === "UPSTREAM" ? "upstream" : "downstream"} shown, more exist`;
    if (b && !b.badges.includes(word)) b.badges.push(word);
  }
  const lines: Line[] = [];
  for (const e of g.edges.values()) {
    if (!keepEdge(e, filters, granularity)) continue;
    const s = boxOf(g, e.from), t = boxOf(g, e.to);
    if (!s || !t || !boxes.has(s) || !boxes.has(t)) continue;
    const field = granularity === "FIELD";
    lines.push({ id: e.id, source: s, target: t, sourceField: field && e.from !== s ? e.from : undefined,
      targetField: field && e.to !== t ? e.to : undefined, edge: e, style: lineStyle(e, granularity),
      label: lineLabel(e, granularity, g.asOf) });
  }
  for (const n of g.nodes.values()) {
    if (n.__typename !== "RestrictedNode") continue;
    const near = boxOf(g, n.neighbourOf);
    if (!near || !boxes.has(near)) continue;
    const nearField = granularity === "FIELD" && near !== n.neighbourOf ? n.neighbourOf : undefined;
    const up = n.direction === "UPSTREAM";
    lines.push({ id: `restricted:${n.id}`, source: up ? n.id : near, target: up ? near : n.id,
      sourceField: up ? undefined : nearField, targetField: up ? nearField : undefined, style: "restricted", label: "" });
  }
  return { boxes: [...boxes.values()], lines };
}

/**
 * The lines on a path through a field (or box): everything reachable upstream and downstream of it along lines,
 * following field ids at column level. Used to highlight "where does this come from, where does it go".
 */
export function trace(lines: Line[], from: string): Set<string> {
  const key = (l: Line, end: "s" | "t") => (end === "s" ? l.sourceField ?? l.source : l.targetField ?? l.target);
  const out = new Set<string>();
  for (const dir of ["up", "down"] as const) {
    const todo = [from];
    const seen = new Set(todo);
    while (todo.length) {
      const cur = todo.pop()!;
      for (const l of lines) {
        const [near, far] = dir === "up" ? [key(l, "t"), key(l, "s")] : [key(l, "s"), key(l, "t")];
        if (near !== cur) continue;
        out.add(l.id);
        if (!seen.has(far)) { seen.add(far); todo.push(far); }
      }
    }
  }
  return out;
}

/** The fields a trace reaches (the ends of its lines), as "dataset.path" labels, for people and tests. */
export function tracedFields(g: Graph, lines: Line[], ids: Set<string>): string[] {
  const out = new Set<string>();
  for (const l of lines) {
    if (!ids.has(l.id)) continue;
    for (const f of [l.sourceField, l.targetField]) {
      const n = f ? g.nodes.get(f) : undefined;
      if (n?.__typename === "Field") out.add(`${n.dataset.name}.${n.path}`);
    }
  }
  return [...out].sort();
}

/** The words the page says about a permission-filtered answer. */
export const PERMISSIONS_FILTERED_TEXT =
  "Filtered by your permissions: you do not hold a grant on everything, so parts of this lineage may be hidden " +
  "from you. Hidden neighbours show as restricted boxes (when the server is set to redact) and hidden jobs as " +
  "\u201cjob hidden\u201d.";

/** Human words for gap kinds. */
export const GAP_WORDS: Record<string, string> = {
  TRUNCATED: "more to load",
  DECLARED_ONLY: "declared only",
  STALE_EDGE: "stale",
  NO_COLUMN_LINEAGE: "no column lineage",
  JOB_NOT_REPORTING: "job not reporting",
  UNRESOLVED_IDENTITY: "unresolved identity",
  RUN_WITHOUT_TERMINAL: "run without end",
  PRODUCER_STALE: "producer quiet",
};

/** How a schema changed between two instants: fields added, gone, and those whose type changed ("a: int → bigint"). */
export function schemaChanges(then: { path: string; type?: string | null }[], now: { path: string; type?: string | null }[]) {
  const before = new Map(then.map((f) => [f.path, f.type ?? ""]));
  const after = new Map(now.map((f) => [f.path, f.type ?? ""]));
  return {
    added: [...after.keys()].filter((p) => !before.has(p)).sort(),
    gone: [...before.keys()].filter((p) => !after.has(p)).sort(),
    retyped: [...after.entries()].filter(([p, t]) => before.has(p) && before.get(p) !== t).map(([p, t]) => `${p}: ${before.get(p)} → ${t}`).sort(),
  };
}
