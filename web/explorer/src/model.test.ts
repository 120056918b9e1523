import { describe, expect, it } from "vitest";
import {
  emptyGraph, schemaChanges, isAttempted, isDeclaredOnly, mergePage, scene, trace, tracedFields, transformationStyle,
  type Edge, type LineagePage, type Transformation,
} from "./model";
import { elkGraph, boxHeight, HEADER, ROW } from "./layout";

const ds = (id: string, name: string) => ({ __typename: "Dataset" as const, id, namespace: "pg://wh", name });
const field = (id: string, dsId: string, dsName: string, path: string) =>
  ({ __typename: "Field" as const, id, path, type: "int", dataset: { id: dsId, namespace: "pg://wh", name: dsName } });
const tx = (type: "DIRECT" | "INDIRECT", subtype: string, masking = false): Transformation => ({ type, subtype, masking });
const edge = (id: string, from: string, to: string, over: Partial<Edge> = {}): Edge => ({
  id, from, to, job: { id: `j-${id}`, namespace: "jobs", name: `job_${id}` }, validFrom: "2026-11-01T00:00:00Z", stale: false,
  evidence: [{ kind: "OBSERVED", observedAt: "2026-11-01T00:00:00Z", publication: "PUBLISHED" }], transformations: [], ...over,
});
const page = (over: Partial<LineagePage>): LineagePage => ({
  nodes: [], edges: [], truncated: false, cursor: null, fanOutMarkers: [], gaps: [], permissionsFiltered: false,
  asOf: "2026-12-01T00:00:00Z", ...over,
});
const noFilters = { evidence: [], transformations: [] };

describe("mergePage", () => {
  it("keeps each node and edge once across pages and leaves the argument alone", () => {
    const g0 = emptyGraph();
    const g1 = mergePage(g0, page({ nodes: [ds("a", "A"), ds("b", "B")], edges: [edge("ab", "a", "b")] }), { key: "view:UPSTREAM", direction: "UPSTREAM" });
    const g2 = mergePage(g1, page({ nodes: [ds("b", "B"), ds("c", "C")], edges: [edge("ab", "a", "b"), edge("bc", "b", "c")] }), { key: "x:UPSTREAM:b", direction: "UPSTREAM", expands: "b" });
    expect(g0.nodes.size).toBe(0);
    expect([...g2.nodes.keys()].sort()).toEqual(["a", "b", "c"]);
    expect([...g2.edges.keys()].sort()).toEqual(["ab", "bc"]);
    expect(g2.expanded.has("b")).toBe(true);
  });

  it("leaves a + more on the walk's start for a truncated page, and the next page of that walk replaces it", () => {
    const trunc = { kind: "TRUNCATED", message: "node budget", nodes: [], edges: [], stopReasons: ["NODE_BUDGET"] };
    const g1 = mergePage(emptyGraph(), page({ nodes: [ds("hub", "H"), ds("r1", "R1")], truncated: true, cursor: "c1", gaps: [trunc] }),
      { key: "view:DOWNSTREAM", direction: "DOWNSTREAM" });
    expect(g1.more.get("view:DOWNSTREAM")).toEqual({ key: "view:DOWNSTREAM", node: "hub", direction: "DOWNSTREAM", cursor: "c1", reasons: ["NODE_BUDGET"] });
    expect(g1.gaps).toEqual([]); // TRUNCATED is said by the + more, not as a gap
    const g2 = mergePage(g1, page({ nodes: [ds("r2", "R2")], truncated: true, cursor: "c2", gaps: [trunc] }), { key: "view:DOWNSTREAM", direction: "DOWNSTREAM" });
    expect(g2.more.get("view:DOWNSTREAM")?.node).toBe("hub"); // the continuation's first node is not the start
    expect(g2.more.get("view:DOWNSTREAM")?.cursor).toBe("c2");
    const g3 = mergePage(g2, page({ nodes: [ds("r3", "R3")] }), { key: "view:DOWNSTREAM", direction: "DOWNSTREAM" });
    expect(g3.more.size).toBe(0);
    expect(g3.nodes.size).toBe(4);
  });

  it("says how many neighbours a fan-out marker showed, summed over pages, and nothing of the rest", () => {
    const m = { node: "hub", direction: "DOWNSTREAM" as const, shown: 200 };
    const g = mergePage(mergePage(emptyGraph(), page({ nodes: [ds("hub", "H")], fanOutMarkers: [m], truncated: true, cursor: "c" }),
      { key: "view:DOWNSTREAM", direction: "DOWNSTREAM" }), page({ fanOutMarkers: [m], truncated: true, cursor: "d" }), { key: "view:DOWNSTREAM", direction: "DOWNSTREAM" });
    expect(scene(g, "DATASET", undefined, noFilters).boxes[0].badges).toEqual(["400 downstream shown, more exist"]);
  });

  it("keeps permissionsFiltered once any page said it, and each gap once", () => {
    const gap = { kind: "STALE_EDGE", message: "stale", nodes: ["a"], edges: ["ab"] };
    const g = mergePage(mergePage(emptyGraph(), page({ permissionsFiltered: true, gaps: [gap] }), { key: "k1", direction: "BOTH" }),
      page({ permissionsFiltered: false, gaps: [gap] }), { key: "k2", direction: "BOTH" });
    expect(g.permissionsFiltered).toBe(true);
    expect(g.gaps).toHaveLength(1);
  });
});

describe("transformationStyle", () => {
  it.each([
    [[tx("DIRECT", "IDENTITY")], "identity"],
    [[tx("DIRECT", "TRANSFORMATION")], "transformation"],
    [[tx("DIRECT", "AGGREGATION")], "aggregation"],
    [[tx("DIRECT", "IDENTITY"), tx("INDIRECT", "GROUP_BY")], "identity"],
    [[tx("INDIRECT", "FILTER")], "indirect"],
    [[tx("DIRECT", "TRANSFORMATION"), tx("DIRECT", "AGGREGATION")], "aggregation"],
  ])("%j is %s", (ts, want) => expect(transformationStyle(ts as Transformation[])).toBe(want));

  it("tells declared-only and attempted edges", () => {
    expect(isDeclaredOnly(edge("e", "a", "b", { evidence: [{ kind: "DECLARED", observedAt: "2026-11-01T00:00:00Z" }] }))).toBe(true);
    expect(isDeclaredOnly(edge("e", "a", "b"))).toBe(false);
    expect(isAttempted(edge("e", "a", "b", { evidence: [{ kind: "OBSERVED", observedAt: "x", publication: "ATTEMPTED" }] }))).toBe(true);
    expect(isAttempted(edge("e", "a", "b"))).toBe(false);
  });
});

describe("scene", () => {
  // orders.amount -> clean.amount -> revenue.revenue (aggregation, masked on the first hop), clean.day -> revenue.day
  const g = mergePage(emptyGraph(), page({
    nodes: [ds("rev", "revenue"), field("rev.revenue", "rev", "revenue", "revenue"), field("rev.day", "rev", "revenue", "day"),
      field("cl.amount", "cl", "clean", "amount"), field("cl.day", "cl", "clean", "day"), field("or.amount", "or", "orders", "amount"),
      { __typename: "RestrictedNode", id: "r1", neighbourOf: "or.amount", direction: "UPSTREAM" }],
    edges: [
      edge("e1", "or.amount", "cl.amount", { transformations: [tx("DIRECT", "IDENTITY", true)] }),
      edge("e2", "cl.amount", "rev.revenue", { transformations: [tx("DIRECT", "AGGREGATION")] }),
      edge("e3", "cl.day", "rev.day", { transformations: [tx("DIRECT", "IDENTITY"), tx("INDIRECT", "GROUP_BY")], stale: true, lastObservedAt: "2026-10-22T00:00:00Z" }),
    ],
    gaps: [{ kind: "NO_COLUMN_LINEAGE", message: "none", nodes: ["cl.day"], edges: [] }],
  }), { key: "view:UPSTREAM", direction: "UPSTREAM" });

  it("puts fields in their dataset's box at column level, with a box for a dataset the answer did not list", () => {
    const { boxes } = scene(g, "FIELD", undefined, noFilters);
    const byId = new Map(boxes.map((b) => [b.id, b]));
    expect(byId.get("rev")?.fields.map((f) => f.path)).toEqual(["day", "revenue"]);
    expect(byId.get("cl")?.fields.map((f) => f.path)).toEqual(["amount", "day"]);
    expect(byId.get("or")?.name).toBe("orders");
    expect(byId.get("cl")?.badges).toEqual(["NO_COLUMN_LINEAGE"]);
    expect(byId.get("r1")?.kind).toBe("restricted");
    expect(byId.get("r1")?.name).toBeUndefined();
  });

  it("draws column lines between field rows, coloured by transformation, masked and stale said in the label", () => {
    const { lines } = scene(g, "FIELD", undefined, noFilters);
    const byId = new Map(lines.map((l) => [l.id, l]));
    expect(byId.get("e1")).toMatchObject({ source: "or", target: "cl", sourceField: "or.amount", targetField: "cl.amount", style: "identity", label: "identity · masked" });
    expect(byId.get("e2")?.style).toBe("aggregation");
    expect(byId.get("e3")?.label).toBe("identity, group_by · stale: last observed 40 days ago");
    expect(byId.get("restricted:r1")).toMatchObject({ source: "r1", target: "or", targetField: "or.amount", style: "restricted" });
  });

  it("draws dataset boxes without fields at dataset level, lines labelled by job", () => {
    const { boxes, lines } = scene(g, "DATASET", undefined, noFilters);
    expect(boxes.every((b) => b.fields.length === 0)).toBe(true);
    expect(lines.find((l) => l.id === "e2")).toMatchObject({ source: "cl", target: "rev", sourceField: undefined, label: "job_e2" });
  });

  it("draws a job start as a box between its inputs and outputs", () => {
    const j = mergePage(emptyGraph(), page({
      nodes: [{ __typename: "Job", id: "j", namespace: "dbt", name: "revenue_model" }, ds("in", "clean"), ds("out", "revenue")],
      edges: [edge("e1", "in", "j"), edge("e2", "j", "out")], coverage: { label: "1 of 2 datasets have an expected writer" },
    }), { key: "view:BOTH", direction: "BOTH" });
    const { boxes, lines } = scene(j, "DATASET", undefined, noFilters);
    expect(boxes.find((b) => b.id === "j")).toMatchObject({ kind: "job", name: "revenue_model" });
    expect(lines.map((l) => [l.source, l.target])).toEqual([["in", "j"], ["j", "out"]]);
    expect(j.coverage).toBe("1 of 2 datasets have an expected writer");
  });

  it("filters column lines by transformation kind", () => {
    const { lines } = scene(g, "FIELD", undefined, { evidence: [], transformations: ["aggregation"] });
    expect(lines.filter((l) => l.edge).map((l) => l.id)).toEqual(["e2"]);
  });

  it("traces a field back to where it comes from", () => {
    const { lines } = scene(g, "FIELD", undefined, noFilters);
    const ids = trace(lines, "rev.revenue");
    expect([...ids].sort()).toEqual(["e1", "e2", "restricted:r1"]);
    expect(tracedFields(g, lines, ids)).toEqual(["clean.amount", "orders.amount", "revenue.revenue"]);
  });

  it("lays fields out as fixed ports at their rows' heights", () => {
    const { boxes, lines } = scene(g, "FIELD", undefined, noFilters);
    const eg = elkGraph(boxes, lines);
    const rev = eg.children.find((c) => c.id === "rev")!;
    expect(rev.height).toBe(boxHeight(boxes.find((b) => b.id === "rev")!));
    expect(rev.ports).toContainEqual(expect.objectContaining({ id: "rev.revenue|in", x: 0, y: HEADER + ROW + ROW / 2 }));
    expect(eg.edges.find((e) => e.id === "e2")).toEqual({ id: "e2", sources: ["cl.amount|out"], targets: ["rev.revenue|in"] });
  });
});

describe("schemaChanges", () => {
  it("says what was added, what went and what changed type", () => {
    expect(schemaChanges([{ path: "id", type: "int" }, { path: "amount", type: "numeric" }, { path: "old" }],
      [{ path: "id", type: "bigint" }, { path: "amount", type: "numeric" }, { path: "customer_hash", type: "text" }]))
      .toEqual({ added: ["customer_hash"], gone: ["old"], retyped: ["id: int → bigint"] });
  });
});
