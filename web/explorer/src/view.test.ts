import { describe, expect, it } from "vitest";
import { DEFAULT_VIEW, nodeRef, parseView, toQuery, type View } from "./view";

describe("view URLs", () => {
  it("round-trips every setting", () => {
    const v: View = { start: { kind: "field", namespace: "postgres://wh:5432", name: "analytics.public.revenue", field: "revenue" },
      direction: "UPSTREAM", depth: 5, granularity: "FIELD", asOf: "2026-11-30T10:00:00.000Z", evidence: ["DECLARED"],
      includeAttempted: true, transformations: ["aggregation", "indirect"], page: 10 };
    expect(parseView(toQuery(v))).toEqual(v);
  });

  it("keeps the default view's URL empty and a job start's kind", () => {
    expect(toQuery(DEFAULT_VIEW)).toBe("");
    const v = parseView("?kind=job&ns=demo-dbt&name=analytics.marts.revenue");
    expect(v.start).toEqual({ kind: "job", namespace: "demo-dbt", name: "analytics.marts.revenue" });
    expect(nodeRef(v.start!)).toEqual({ job: { namespace: "demo-dbt", name: "analytics.marts.revenue" } });
  });

  it("falls back to defaults and clamps what a hand-edited URL gets wrong", () => {
    const v = parseView("?ns=x&name=y&dir=SIDEWAYS&depth=99&asOf=yesterday&evidence=GUESSED,OBSERVED&page=0&tx=bogus");
    expect(v.asOf).toBeUndefined();
    expect(v).toMatchObject({ direction: "BOTH", depth: 20, evidence: ["OBSERVED"], page: 1, transformations: [] });
  });
});
