// The explorer's end-to-end world: the demo lineage (demo/events, the events `make demo` sends) in namespaces of
// its own, plus what the demo lacks for the browser test: a rename (orders_clean was stg_orders until 40 minutes
// ago; older runs wrote the old name), and a hub (30 report jobs read analytics.public.revenue and write
// analytics.reports.<prefix>_revenue_NN, names a search finds in a shared database). Sent through the
// public gateway with a producer token; `waitProjected` polls the public GraphQL API until all of it is visible.
//
//   node e2e/world.mjs <api> <producer-token> <prefix>    (send it; prints nothing on success)
import { readFileSync, readdirSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const demoEvents = path.join(here, "..", "..", "..", "demo", "events");

/** Hub size: the report jobs reading revenue. */
export const HUB_REPORTS = 30;

/** The namespaces of a world with this prefix. */
export function namespaces(prefix) {
  return {
    warehouse: `postgres://${prefix}-warehouse:5432`,
    ordersDb: `postgres://${prefix}-orders-db:5432`,
    lake: `s3://${prefix}-lake`,
    airflow: `${prefix}-airflow`,
    spark: `${prefix}-spark`,
    dbt: `${prefix}-dbt`,
    bi: `${prefix}-bi`,
  };
}

const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, ".000Z");

/** The demo's templates filled like scripts/demo.sh fills them, in the world's namespaces. */
function demoWorld(prefix, now) {
  const runs = { A: randomUUID(), B: randomUUID(), C: randomUUID(), D: randomUUID() };
  const times = [50, 45, 40, 30, 20, 10].map((m) => iso(now - m * 60_000));
  return readdirSync(demoEvents).sort().map((f) => {
    let s = readFileSync(path.join(demoEvents, f), "utf8");
    for (const [k, v] of Object.entries(runs)) s = s.replaceAll(`__RUN_${k}__`, v);
    times.forEach((t, i) => { s = s.replaceAll(`__T${i}__`, t); });
    s = s.replaceAll('"demo-airflow"', `"${prefix}-airflow"`).replaceAll('"demo-spark"', `"${prefix}-spark"`)
      .replaceAll('"demo-dbt"', `"${prefix}-dbt"`).replaceAll("s3://demo-lake", `s3://${prefix}-lake`)
      .replaceAll("postgres://warehouse:5432", `postgres://${prefix}-warehouse:5432`)
      .replaceAll("postgres://orders-db", `postgres://${prefix}-orders-db`)
      .replaceAll("postgres://Orders-DB:5432", `postgres://${prefix}-Orders-DB:5432`);
    return JSON.parse(s);
  });
}

const PRODUCER = "https://github.com/headwater-data/headwater/web/explorer/e2e";
const RUN_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent";
const facet = (schema, body) => ({ _producer: PRODUCER, _schemaURL: `https://openlineage.io/spec/facets/${schema}`, ...body });
const schema = (...fields) => facet("1-1-1/SchemaDatasetFacet.json", { fields: fields.map(([name, type]) => ({ name, type })) });
const colLineage = (fields) => facet("1-2-0/ColumnLineageDatasetFacet.json", { fields });
const input = (ns, name, field, type, subtype, extra = {}) =>
  ({ namespace: ns, name, field, transformations: [{ type, subtype, masking: false, ...extra }] });

function complete(job, at, inputs, outputs) {
  return { eventType: "COMPLETE", eventTime: iso(at), producer: PRODUCER, schemaURL: RUN_SCHEMA,
    run: { runId: randomUUID() }, job, inputs, outputs };
}

/** What the demo lacks: the old name of orders_clean with its older lineage, the rename, and the hub. */
function extras(prefix, now) {
  const ns = namespaces(prefix);
  const h = 3_600_000;
  const stg = { namespace: ns.warehouse, name: "analytics.public.stg_orders" };
  const events = [
    complete({ namespace: ns.spark, name: "clean_orders" }, now - 3 * h, [{ namespace: ns.lake, name: "raw/orders" }], [{ ...stg, facets: {
      schema: schema(["id", "bigint"], ["amount", "numeric"], ["order_day", "date"]),
      columnLineage: colLineage({
        id: { inputFields: [input(ns.lake, "raw/orders", "id", "DIRECT", "IDENTITY")] },
        amount: { inputFields: [input(ns.lake, "raw/orders", "amount", "DIRECT", "IDENTITY")] },
        order_day: { inputFields: [input(ns.lake, "raw/orders", "created_at", "DIRECT", "TRANSFORMATION", { description: "date(created_at)" })] } }) } }]),
    complete({ namespace: ns.dbt, name: "analytics.marts.revenue" }, now - 2.5 * h, [stg], [{ namespace: ns.warehouse, name: "analytics.public.revenue", facets: {
      schema: schema(["order_day", "date"], ["revenue", "numeric"]),
      columnLineage: colLineage({
        order_day: { inputFields: [input(ns.warehouse, stg.name, "order_day", "DIRECT", "IDENTITY")] },
        revenue: { inputFields: [input(ns.warehouse, stg.name, "amount", "DIRECT", "AGGREGATION", { description: "sum(amount)" })] } }) } }]),
    // The rename, 41 minutes ago (before the demo's clean-up run writes the new name).
    complete({ namespace: ns.spark, name: "rename_stg_orders" }, now - 41 * 60_000, [], [{ namespace: ns.warehouse, name: "analytics.public.orders_clean", facets: {
      lifecycleStateChange: facet("1-0-1/LifecycleStateChangeDatasetFacet.json", { lifecycleStateChange: "RENAME", previousIdentifier: stg }) } }]),
  ];
  // Two gaps for the page to draw: a forecast only declared (a JobEvent, no run), and an export last run 3 days ago.
  events.push({ eventTime: iso(now - 30 * 60_000), producer: PRODUCER, schemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/JobEvent",
    job: { namespace: ns.bi, name: "revenue_forecast" }, inputs: [{ namespace: ns.warehouse, name: "analytics.public.revenue" }],
    outputs: [{ namespace: ns.warehouse, name: FORECAST }] });
  events.push(complete({ namespace: ns.bi, name: "legacy_export" }, now - 3 * 24 * h, [{ namespace: ns.warehouse, name: "analytics.public.revenue" }],
    [{ namespace: ns.warehouse, name: LEGACY }]));
  for (let i = 1; i <= HUB_REPORTS; i++) {
    const n = String(i).padStart(2, "0");
    events.push(complete({ namespace: ns.bi, name: `report_${n}` }, now - 5 * 60_000 + i * 1000,
      [{ namespace: ns.warehouse, name: "analytics.public.revenue" }],
      [{ namespace: ns.warehouse, name: reportName(prefix, i), facets: { schema: schema(["order_day", "date"], ["revenue", "numeric"]) } }]));
  }
  return events;
}

/** The declared-only output and the stale one (downstream of revenue, beside the hub's reports). */
export const FORECAST = "analytics.public.revenue_forecast";
export const LEGACY = "analytics.exports.revenue_legacy";

/** The name of the i-th report the hub feeds (1-based). */
export const reportName = (prefix, i) => `analytics.reports.${prefix}_revenue_${String(i).padStart(2, "0")}`;

/** Every event of the world, each with its eventId set. */
export function world(prefix, now = Date.now()) {
  return [...extras(prefix, now), ...demoWorld(prefix, now)];
}

/** Sends the world through POST /api/v1/lineage/batch; throws unless every event was accepted. */
export async function send(api, token, prefix) {
  const events = world(prefix);
  const res = await fetch(`${api}/api/v1/lineage/batch`, { method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: JSON.stringify(events) });
  const body = await res.text();
  if (!res.ok) throw new Error(`batch: ${res.status} ${body.slice(0, 500)}`);
  return { events: events.length, answer: JSON.parse(body) };
}

/** Posts one GraphQL query with the token. */
export async function gql(api, token, query, variables) {
  const res = await fetch(`${api}/graphql`, { method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  return res.json();
}

/** Waits until the hub's reports and revenue's upstream are visible to the token (within timeoutMs). */
export async function waitProjected(api, token, prefix, timeoutMs = 120_000) {
  const ns = namespaces(prefix);
  const q = `query($ns: String!) {
    down: lineage(start: {dataset: {namespace: $ns, name: "analytics.public.revenue"}}, direction: DOWNSTREAM, depth: 1) { nodes { __typename } }
    up: lineage(start: {dataset: {namespace: $ns, name: "analytics.public.revenue"}}, direction: UPSTREAM, depth: 5) { nodes { __typename } } }`;
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await gql(api, token, q, { ns: ns.warehouse });
    const count = (k) => (last.data?.[k]?.nodes ?? []).filter((n) => n.__typename === "Dataset").length;
    if (count("down") >= HUB_REPORTS + 1 && count("up") >= 4) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`world not projected within ${timeoutMs} ms: ${JSON.stringify(last).slice(0, 500)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [api, token, prefix] = process.argv.slice(2);
  const r = await send(api, token, prefix);
  console.log(`sent ${r.events} events`);
}
