// The explorer page: sign-in, search, the view's controls, the graph and the details panel. The view lives in the
// URL (view.ts); the graph is the merge of the view's walk and of every expansion (model.ts).
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import * as api from "./api";
import { GraphView, LINE_COLOURS, type Selection } from "./GraphView";
import { Panel } from "./Panel";
import {
  GAP_WORDS, PERMISSIONS_FILTERED_TEXT, emptyGraph, mergePage, scene, trace, tracedFields, type Direction, type Graph,
  type LineStyle, type More,
} from "./model";
import { MAX_DEPTH, parseView, toQuery, type StartRef, type View } from "./view";

function SignIn({ onIn }: { onIn: () => void }) {
  const [tok, setTok] = useState("");
  const [err, setErr] = useState("");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    api.setToken(tok);
    try {
      await api.gql("{ __typename }", {});
      onIn();
    } catch (x) {
      api.clearToken();
      setErr((x as Error).message);
    }
  };
  return (
    <main className="signin">
      <h1>Headwater lineage explorer</h1>
      <form onSubmit={submit}>
        <label htmlFor="token">API token or OIDC bearer</label>
        <input id="token" type="password" autoComplete="off" value={tok} onChange={(e) => setTok(e.target.value)} required />
        <button type="submit">Sign in</button>
        {err && <p role="alert" className="error">{err}</p>}
        <p className="muted">Kept in this tab&apos;s session storage only; every request sends it as a bearer token.</p>
      </form>
    </main>
  );
}

function Search({ go }: { go: (s: StartRef) => void }) {
  const [q, setQ] = useState("");
  const [hits, setHits] = useState<api.SearchHit[] | null>(null);
  const [more, setMore] = useState(false);
  const [err, setErr] = useState("");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setErr("");
    try {
      const r = await api.search(q);
      setHits(r.nodes);
      setMore(r.hasNextPage);
    } catch (x) { setErr((x as Error).message); }
  };
  return (
    <div className="search">
      <form onSubmit={submit} role="search">
        <label htmlFor="q" className="sr-only">Search datasets and jobs</label>
        <input id="q" placeholder="Search a dataset or job" value={q} onChange={(e) => setQ(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      {err && <p role="alert" className="error">{err}</p>}
      {hits && (
        <ul className="hits" aria-label="Search results">
          {hits.length === 0 && <li className="muted">nothing you may see matches</li>}
          {hits.map((h) => (
            <li key={h.id}><button className="link" onClick={() => { setHits(null); go({ kind: h.__typename === "Job" ? "job" : "dataset", namespace: h.namespace, name: h.name }); }}>
              <span className="kind">{h.__typename === "Job" ? "job" : "dataset"}</span> {h.name} <span className="muted">{h.namespace}</span></button></li>
          ))}
          {more && <li className="muted">more results: refine the search</li>}
        </ul>
      )}
    </div>
  );
}

/** The arguments of the walk an origin key stands for, to continue it with its cursor. */
interface Walk { start: StartRef; depth: number; direction: Direction }

const toLocalInput = (iso?: string) => (iso ? iso.slice(0, 16) : "");
const STYLE_NAMES: [LineStyle, string][] = [["identity", "identity"], ["transformation", "transformation"], ["aggregation", "aggregation"], ["indirect", "indirect"]];

export function App() {
  const [signedIn, setSignedIn] = useState(() => api.getToken() !== "");
  const [view, setView] = useState<View>(() => parseView(window.location.search));
  const [graph, setGraph] = useState<Graph>(emptyGraph());
  const [selection, setSelection] = useState<Selection>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const walks = useRef(new Map<string, Walk>());

  useEffect(() => {
    const pop = () => setView(parseView(window.location.search));
    window.addEventListener("popstate", pop);
    return () => window.removeEventListener("popstate", pop);
  }, []);

  const update = useCallback((v: View) => {
    const q = toQuery(v);
    if (q !== window.location.search) window.history.pushState(null, "", `${window.location.pathname}${q}`);
    setView(v);
  }, []);

  const fail = (e: unknown) => {
    const x = e as api.ApiError;
    if (x.code === "UNAUTHENTICATED") { api.clearToken(); setSignedIn(false); }
    setError(x.code === "NOT_FOUND" ? `Not found (or hidden from you)${view.asOf ? " at this asOf" : ""}: ${x.message}` : x.message);
  };

  // The view's walks (one per direction, each with its own node budget so a hub downstream does not starve the
  // upstream side): reload whenever the view changes.
  useEffect(() => {
    if (!signedIn || !view.start) return;
    let live = true;
    const start = view.start;
    const dirs: Direction[] = view.direction === "BOTH" ? ["UPSTREAM", "DOWNSTREAM"] : [view.direction];
    setBusy(true); setError(""); setSelection(undefined);
    walks.current = new Map(dirs.map((d) => [`view:${d}`, { start, depth: view.depth, direction: d }]));
    Promise.all(dirs.map((d) => api.lineage(start, view, view.depth, d))).then(
      (pages) => { if (live) setGraph(pages.reduce((g, p, i) => mergePage(g, p, { key: `view:${dirs[i]}`, direction: dirs[i] }), emptyGraph())); },
      (e) => { if (live) { setGraph(emptyGraph()); fail(e); } },
    ).finally(() => live && setBusy(false));
    return () => { live = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [signedIn, toQuery(view)]);

  const refOf = useCallback((id: string): StartRef | undefined => {
    const n = graph.nodes.get(id);
    if (!n) return undefined;
    if (n.__typename === "Dataset") return { kind: "dataset", namespace: n.namespace, name: n.name };
    if (n.__typename === "Field") return { kind: "field", namespace: n.dataset.namespace, name: n.dataset.name, field: n.path };
    if (n.__typename === "Job") return { kind: "job", namespace: n.namespace, name: n.name };
    return undefined; // a restricted placeholder is never a start
  }, [graph]);

  const run = useCallback(async (key: string, w: Walk, expands?: string, after?: string) => {
    walks.current.set(key, w);
    setBusy(true); setError("");
    try {
      const p = await api.lineage(w.start, view, w.depth, w.direction, after);
      setGraph((g) => mergePage(g, p, { key, direction: w.direction, expands }));
    } catch (e) { fail(e); } finally { setBusy(false); }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [view]);

  // One hop both ways, each direction its own walk (and its own "+ more").
  const expand = useCallback((id: string) => {
    const ref = refOf(id);
    if (!ref) return;
    for (const d of ["UPSTREAM", "DOWNSTREAM"] as Direction[]) void run(`x:${d}:${id}`, { start: ref, depth: 1, direction: d }, id);
  }, [refOf, run]);

  const more = useCallback((m: More) => {
    const w = walks.current.get(m.key);
    if (w) void run(m.key, w, m.key.startsWith("x:") ? m.node : undefined, m.cursor);
  }, [run]);

  const select = useCallback((s: Selection) => {
    setSelection(s);
    if (s.kind === "box" && !graph.expanded.has(s.id)) expand(s.id);
    if (s.kind === "field" && !graph.expanded.has(s.id)) expand(s.id);
  }, [graph, expand]);

  const { boxes, lines } = useMemo(() => scene(graph, view.granularity, undefined, { evidence: [], transformations: view.transformations }),
    [graph, view.granularity, view.transformations]);
  const startBox = useMemo(() => {
    if (!view.start) return undefined;
    return boxes.find((b) => b.namespace === view.start!.namespace && b.name === view.start!.name)?.id
      ?? boxes.find((b) => b.name === view.start!.name)?.id;
  }, [boxes, view.start]);
  const marked = useMemo(() => boxes.map((b) => (b.id === startBox ? { ...b, start: true } : b)), [boxes, startBox]);
  const tracedIds = useMemo(() => (selection?.kind === "field" ? trace(lines, selection.id) : new Set<string>()), [lines, selection]);
  const tracedList = useMemo(() => tracedFields(graph, lines, tracedIds), [graph, lines, tracedIds]);
  const tracedFieldIds = useMemo(() => {
    const s = new Set<string>();
    for (const l of lines) if (tracedIds.has(l.id)) { if (l.sourceField) s.add(l.sourceField); if (l.targetField) s.add(l.targetField); }
    return s;
  }, [lines, tracedIds]);
  const otherGaps = graph.gaps.filter((g) => g.kind !== "TRUNCATED");

  if (!signedIn) return <SignIn onIn={() => setSignedIn(true)} />;
  // A job start has no column level (the API walks columns from a field or a dataset).
  const go = (s: StartRef) => update({ ...view, start: s, granularity: s.kind === "job" ? "DATASET" : view.granularity });
  const jobStart = view.start?.kind === "job";
  const toggle = <T,>(xs: T[], x: T) => (xs.includes(x) ? xs.filter((y) => y !== x) : [...xs, x]);

  return (
    <div className="app" onKeyDown={(e) => { if (e.key === "Escape") setSelection(undefined); }}>
      <header>
        <h1>Headwater lineage</h1>
        <Search go={go} />
        <button className="link" onClick={() => { api.clearToken(); setSignedIn(false); }}>Sign out</button>
      </header>
      <nav className="controls" aria-label="View">
        <label>Direction <select value={view.direction} onChange={(e) => update({ ...view, direction: e.target.value as Direction })}>
          <option value="UPSTREAM">upstream</option><option value="DOWNSTREAM">downstream</option><option value="BOTH">both</option></select></label>
        <label>Depth <input type="number" min={1} max={MAX_DEPTH} value={view.depth}
          onChange={(e) => update({ ...view, depth: Math.max(1, Math.min(MAX_DEPTH, Number(e.target.value) || 1)) })} /></label>
        <fieldset className="level"><legend className="sr-only">Granularity</legend>
          <label><input type="radio" name="level" checked={view.granularity === "DATASET"} onChange={() => update({ ...view, granularity: "DATASET" })} /> Datasets</label>
          <label title={jobStart ? "column lineage starts at a dataset or a field" : undefined}><input type="radio" name="level" disabled={jobStart}
            checked={view.granularity === "FIELD"} onChange={() => update({ ...view, granularity: "FIELD" })} /> Columns</label>
        </fieldset>
        <label>As of (UTC) <input type="datetime-local" aria-label="As of (UTC)" value={toLocalInput(view.asOf)}
          onChange={(e) => update({ ...view, asOf: e.target.value ? new Date(`${e.target.value}:00Z`).toISOString() : undefined })} /></label>
        {view.asOf && <button onClick={() => update({ ...view, asOf: undefined })}>Now</button>}
        <fieldset><legend className="sr-only">Evidence</legend>
          {["OBSERVED", "DECLARED"].map((k) => (
            <label key={k}><input type="checkbox" checked={view.evidence.length === 0 || view.evidence.includes(k)}
              onChange={() => { const cur = view.evidence.length ? view.evidence : ["OBSERVED", "DECLARED"]; const next = toggle(cur, k); update({ ...view, evidence: next.length === 2 ? [] : next }); }} /> {k.toLowerCase()}</label>
          ))}
          <label><input type="checkbox" checked={view.includeAttempted} onChange={() => update({ ...view, includeAttempted: !view.includeAttempted })} /> attempted outputs</label>
        </fieldset>
        {view.granularity === "FIELD" && (
          <fieldset className="legend" aria-label="Transformations shown">
            {STYLE_NAMES.map(([s, name]) => (
              <label key={s} style={{ color: LINE_COLOURS[s] }}><input type="checkbox" checked={view.transformations.length === 0 || view.transformations.includes(s)}
                onChange={() => { const cur = view.transformations.length ? view.transformations : STYLE_NAMES.map((x) => x[0]); const next = toggle(cur, s); update({ ...view, transformations: next.length === 4 ? [] : next }); }} /> {name}</label>
            ))}
            <span className="muted">dotted: masked · dashed: indirect, declared, stale, restricted</span>
          </fieldset>
        )}
        <button onClick={() => void navigator.clipboard?.writeText(window.location.href)} title="Copy this view's URL">Copy link</button>
      </nav>
      <div className="status" aria-live="polite">
        {busy && <span>loading…</span>}
        {error && <span role="alert" className="error">{error}</span>}
        {graph.coverage && <span className="coverage muted">Coverage: {graph.coverage}</span>}
        {graph.permissionsFiltered && <p className="filtered" data-testid="permissions-filtered">{PERMISSIONS_FILTERED_TEXT}</p>}
        {otherGaps.length > 0 && (
          <details className="gaps"><summary>{otherGaps.length} gap{otherGaps.length > 1 ? "s" : ""} in this answer</summary>
            <ul>{otherGaps.map((g, i) => <li key={i}><strong>{GAP_WORDS[g.kind] ?? g.kind}</strong>: {g.message}</li>)}</ul></details>
        )}
      </div>
      <main className="body">
        {view.start ? (
          <GraphView boxes={marked} lines={lines} actions={{ select, expand, more }} selection={selection}
            expanded={graph.expanded} traced={tracedIds} tracedFields={tracedFieldIds} />
        ) : (
          <div className="empty"><p>Search a dataset or a job to see its lineage.</p></div>
        )}
        <aside className="panel" aria-label="Details">
          <Panel selection={selection} graph={graph} asOf={view.asOf} select={setSelection} tracedFields={tracedList}
            focus={(namespace, name) => go({ kind: "dataset", namespace, name })} />
        </aside>
      </main>
    </div>
  );
}

