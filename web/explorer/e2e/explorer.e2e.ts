// The explorer in headless Chromium (Debian's, driven by playwright-core; no browser download) against the real
// stack with the demo lineage (world.mjs): sign in, search, expand a hub with paging, open an edge's evidence,
// follow revenue back to orders.amount at column level, move asOf before a rename, and a narrow principal that
// sees restricted boxes and no hidden name anywhere in the DOM. A screenshot of every step goes to HW_ARTIFACTS.
//
// Environment (set by e2e/explorer_test.go): HW_API (http://host:port), HW_PREFIX (the world's namespaces),
// HW_PRODUCER_TOKEN, HW_ANALYST_TOKEN (VIEW_LINEAGE and VIEW_SQL on everything), HW_NARROW_TOKEN (DESCRIBE and
// VIEW_LINEAGE on the warehouse, dbt and bi namespaces only; the server redacts), HW_CHROMIUM, HW_ARTIFACTS.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { FORECAST, HUB_REPORTS, LEGACY, namespaces, reportName, send, waitProjected } from "./world.mjs";
import { lowContrast } from "./contrast";

const env = (k: string) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set (see e2e/explorer_test.go)`); return v; };
const api = env("HW_API"), prefix = env("HW_PREFIX");
const artifacts = process.env.HW_ARTIFACTS ?? path.resolve("e2e-artifacts");
const ns = namespaces(prefix);
const explore = (q = "") => `${api}/explore/${q}`;
const viewOf = (name: string, extra: Record<string, string> = {}) => `?${new URLSearchParams({ ns: ns.warehouse, name, ...extra })}`;

let browser: Browser;
let page: Page;
let step = 0;
const shot = async (p: Page, name: string) => {
  step++;
  await p.screenshot({ path: path.join(artifacts, `${String(step).padStart(2, "0")}-${name}.png`) });
};
const box = (p: Page, name: string) => p.locator(`[data-testid=dataset-box][data-name="${name}"]`);
const settle = async (p: Page) => {
  await p.waitForFunction(() => !document.body.innerText.includes("loading…"), undefined, { timeout: 60_000 });
  await p.waitForTimeout(400); // the layout's fitView
};

async function signIn(p: Page, token: string, q = "") {
  await p.goto(explore(q));
  await p.fill("#token", token);
  await p.click("button[type=submit]");
  await p.waitForSelector("text=Headwater lineage", { timeout: 30_000 });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  await send(api, env("HW_PRODUCER_TOKEN"), prefix);
  await waitProjected(api, env("HW_ANALYST_TOKEN"), prefix);
  browser = await chromium.launch({ executablePath: env("HW_CHROMIUM"), args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => { throw e; });
});

afterAll(async () => { await browser?.close(); });

describe("the lineage explorer", () => {
  it("signs in with a pasted token kept in session storage only", async () => {
    await page.goto(explore());
    await shot(page, "sign-in");
    await page.fill("#token", "hw_0123456789abcdef_not-a-token");
    await page.click("button[type=submit]");
    await expect.poll(() => page.locator("[role=alert]").innerText()).toContain("refused");
    await signIn(page, env("HW_ANALYST_TOKEN"));
    expect(await page.evaluate(() => sessionStorage.getItem("headwater.explorer.token"))).toBe(env("HW_ANALYST_TOKEN"));
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(page.url()).not.toContain(env("HW_ANALYST_TOKEN"));
  });

  it("searches a dataset and draws its lineage left to right", async () => {
    await page.fill("#q", reportName(prefix, 1));
    await page.click("form[role=search] button[type=submit]");
    const hit = page.locator(".hits button", { hasText: reportName(prefix, 1) });
    await hit.click();
    await box(page, "analytics.public.revenue").waitFor({ timeout: 60_000 });
    await settle(page);
    const rev = await box(page, "analytics.public.revenue").boundingBox();
    const rep = await box(page, reportName(prefix, 1)).boundingBox();
    const clean = await box(page, "analytics.public.orders_clean").boundingBox();
    expect(clean!.x).toBeLessThan(rev!.x); // upstream on the left
    expect(rev!.x).toBeLessThan(rep!.x);
    expect(page.url()).toContain(encodeURIComponent(reportName(prefix, 1)));
    await shot(page, "search");
  });

  it("expands a hub one hop with paging", async () => {
    await box(page, "analytics.public.revenue").locator("button.expand").click();
    const more = box(page, "analytics.public.revenue").locator("[data-testid=more]", { hasText: "downstream" });
    await more.waitFor({ timeout: 60_000 });
    await settle(page);
    const reports = () => page.locator(`[data-testid=dataset-box][data-name^="analytics.reports.${prefix}_revenue_"]`).count();
    const first = await reports();
    expect(first).toBeGreaterThan(1);
    expect(first).toBeLessThan(HUB_REPORTS);
    await shot(page, "hub-first-page");
    await more.dispatchEvent("click");
    await expect.poll(reports, { timeout: 60_000 }).toBe(HUB_REPORTS);
    await settle(page);
    expect(await box(page, "analytics.public.revenue").locator("[data-testid=more]", { hasText: "downstream" }).count()).toBe(0);
    await shot(page, "hub-all");
  });

  it("opens an edge's evidence: run, producer, SQL", async () => {
    await page.locator("[data-testid=edge-label]", { hasText: "analytics.marts.revenue" }).first().dispatchEvent("click");
    const panel = page.locator("[aria-label='Edge evidence']");
    await panel.waitFor();
    await expect.poll(() => panel.innerText(), { timeout: 30_000 }).toContain("sum(amount)");
    const text = await panel.innerText();
    expect(text).toContain("analytics.public.orders_clean");
    expect(text).toMatch(/observed .*run [0-9a-f-]{36} \(complete\)/);
    expect(text).toContain("demo-dbt".replace("demo", prefix));
    await shot(page, "edge-evidence");
    // and the run behind it: what it read and wrote
    await panel.locator("button.link").first().click();
    const run = page.locator("[aria-label='Run details']");
    await expect.poll(() => run.innerText(), { timeout: 30_000 }).toContain("Wrote");
    expect(await run.innerText()).toContain("analytics.public.revenue");
  });

  it("draws gaps on the graph and filters by evidence", async () => {
    await page.goto(explore(viewOf("analytics.public.revenue", { dir: "DOWNSTREAM", depth: "1", page: "100" })));
    await box(page, FORECAST).waitFor({ timeout: 60_000 });
    await settle(page);
    const label = (t: string | RegExp) => page.locator("[data-testid=edge-label]", { hasText: t });
    expect(await label("revenue_forecast · declared only").count()).toBe(1);
    expect(await label(/legacy_export · stale: last observed 3 days ago/).count()).toBe(1);
    expect(await box(page, FORECAST).locator(".badge").allInnerTexts()).toContain("declared only");
    expect(await box(page, LEGACY).locator(".badge").allInnerTexts()).toContain("stale");
    await page.locator("summary", { hasText: "gaps in this answer" }).click();
    expect(await page.locator(".gaps").innerText()).toContain("declared only: no run has reported this edge");
    await shot(page, "gaps");
    await page.getByRole("checkbox", { name: "declared" }).uncheck();
    await expect.poll(() => box(page, FORECAST).count(), { timeout: 60_000 }).toBe(0);
    await box(page, LEGACY).waitFor({ timeout: 60_000 });
    expect(page.url()).toContain("evidence=OBSERVED");
  });

  it("switches to column level and follows revenue back to orders.amount", async () => {
    await page.goto(explore(viewOf("analytics.public.revenue", { dir: "UPSTREAM", depth: "3" })));
    await box(page, "analytics.public.revenue").waitFor({ timeout: 60_000 });
    await page.getByRole("radio", { name: "Columns" }).check();
    await page.locator("[data-testid=field-row][data-field='analytics.public.revenue.revenue']").waitFor({ timeout: 60_000 });
    await settle(page);
    expect(page.url()).toContain("level=column");
    await page.locator("[data-testid=field-row][data-field='analytics.public.revenue.revenue']").dispatchEvent("click");
    const traced = page.locator("[data-testid=traced]");
    await expect.poll(() => traced.innerText(), { timeout: 30_000 }).toContain("shop.public.orders.amount");
    const path_ = (await traced.innerText()).split("\n");
    expect(path_).toEqual(expect.arrayContaining(["analytics.public.orders_clean.amount", "raw/orders.amount", "shop.public.orders.amount"]));
    expect(path_).not.toContain("analytics.public.orders_clean.order_day"); // revenue does not come from order_day
    expect(await page.locator("[data-testid=edge-label].style-aggregation").count()).toBeGreaterThan(0);
    // what the narrow principal must not see is on the analyst's page (so its check below is not vacuous)
    const dom = await page.content();
    for (const h of ["raw/orders", ns.lake, "shop.public.orders", ns.ordersDb.replace(":5432", "")]) expect(dom).toContain(h);
    await settle(page);
    await shot(page, "column-level");
  });

  it("moves asOf before the rename and shows the old name", async () => {
    const before = new Date(Date.now() - 60 * 60_000).toISOString().slice(0, 16);
    await page.getByLabel("As of (UTC)").fill(before);
    await box(page, "analytics.public.stg_orders").waitFor({ timeout: 60_000 });
    await settle(page);
    expect(await box(page, "analytics.public.orders_clean").count()).toBe(0);
    expect(page.url()).toContain("asOf=");
    // its panel: the current name, and how the schema changed since (the clean-up run added customer_hash)
    await box(page, "analytics.public.stg_orders").dispatchEvent("click");
    const changes = page.locator("[data-testid=schema-changes]");
    await changes.waitFor({ timeout: 30_000 });
    expect(await changes.innerText()).toContain("added: customer_hash");
    expect(await page.locator("[aria-label='Dataset details']").innerText()).toContain("analytics.public.orders_clean");
    await shot(page, "as-of-before-rename");
    await page.getByRole("button", { name: "Now" }).click();
    await box(page, "analytics.public.orders_clean").waitFor({ timeout: 60_000 });
  });

  it("is usable from the keyboard, with readable contrast at 1280x800", async () => {
    await page.getByRole("radio", { name: "Datasets" }).check();
    await box(page, "analytics.public.revenue").waitFor({ timeout: 60_000 });
    await settle(page);
    const node = page.locator(".react-flow__node", { has: box(page, "analytics.public.revenue") });
    await node.focus();
    await page.keyboard.press("Enter");
    await page.locator("[aria-label='Dataset details']").waitFor();
    expect(await page.locator("[aria-label='Dataset details'] h2").innerText()).toBe("analytics.public.revenue");
    await page.locator("[aria-label='Dataset details'] dl").waitFor({ timeout: 30_000 });
    expect(await page.evaluate(lowContrast)).toEqual([]);
    // the check sees low contrast when there is some
    await page.evaluate(() => { const p = document.createElement("p"); p.id = "probe"; p.textContent = "pale"; p.style.color = "#bbbbbb"; document.body.append(p); });
    expect(await page.evaluate(lowContrast)).toEqual([expect.stringContaining('"pale"')]);
    await page.evaluate(() => document.getElementById("probe")!.remove());
  });

  it("shows a narrow principal restricted boxes and no hidden name", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const narrow = await ctx.newPage();
    await signIn(narrow, env("HW_NARROW_TOKEN"), viewOf("analytics.public.revenue", { dir: "UPSTREAM", depth: "3" }));
    await narrow.locator("[data-testid=restricted-box]").first().waitFor({ timeout: 60_000 });
    await settle(narrow);
    expect(await narrow.locator("[data-testid=permissions-filtered]").innerText()).toContain("Filtered by your permissions");
    expect(await box(narrow, "analytics.public.orders_clean").count()).toBe(1);
    // the dataset panel, the column level and a search add no hidden name either
    await box(narrow, "analytics.public.orders_clean").dispatchEvent("click");
    await narrow.locator("[aria-label='Dataset details'] dl").waitFor({ timeout: 30_000 });
    await narrow.getByRole("radio", { name: "Columns" }).check();
    await narrow.locator("[data-testid=field-row]").first().waitFor({ timeout: 60_000 });
    await settle(narrow);
    await shot(narrow, "narrow-principal");
    await narrow.fill("#q", "orders");
    await narrow.click("form[role=search] button[type=submit]");
    await narrow.locator(".hits").waitFor();
    const hidden = ["raw/orders", ns.lake, ns.spark, ns.airflow, ns.ordersDb.replace(":5432", ""), "clean_orders", "shop.public.orders", "extract_orders"];
    const dom = await narrow.content();
    for (const h of hidden) expect(dom, `the DOM names ${h}`).not.toContain(h);
    // a job from search: a job box between what it read and wrote; its SQL withheld (no VIEW_SQL)
    await narrow.fill("#q", "analytics.marts.revenue");
    await narrow.click("form[role=search] button[type=submit]");
    await narrow.locator(".hits button", { hasText: "job" }).first().click();
    await narrow.locator(".box.job").waitFor({ timeout: 60_000 });
    await narrow.locator(".react-flow__node", { has: narrow.locator(".box.job") }).click();
    const job = narrow.locator("[aria-label='Job details']");
    await expect.poll(() => job.innerText(), { timeout: 30_000 }).toContain("SQL withheld");
    expect(await job.innerText()).not.toContain("sum(amount)");
    expect(await narrow.getByRole("radio", { name: "Columns" }).isDisabled()).toBe(true);
    await settle(narrow);
    await shot(narrow, "narrow-job");
    const dom2 = await narrow.content();
    for (const h of hidden) expect(dom2, `the DOM names ${h}`).not.toContain(h);
    await ctx.close();
  });
});
