// The side panel: what the selected dataset, field, edge or run is, as the API lets the caller see it.
import { useEffect, useState, type ReactNode } from "react";
import * as api from "./api";
import type { Selection } from "./GraphView";
import { isDeclaredOnly, isMasked, schemaChanges, type Edge, type Graph } from "./model";

const when = (t?: string | null) => (t ? new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "—");

function useLoad<T>(f: () => Promise<T>, deps: unknown[]): { data?: T; error?: string } {
  const [s, setS] = useState<{ data?: T; error?: string }>({});
  useEffect(() => {
    let live = true;
    setS({});
    f().then((data) => live && setS({ data }), (e: Error) => live && setS({ error: e.message }));
    return () => { live = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return s;
}

const Row = ({ k, children }: { k: string; children: ReactNode }) => <><dt>{k}</dt><dd>{children}</dd></>;

function DatasetPanel({ ns, name, asOf, graph, id, select, focus }: { ns: string; name: string; asOf?: string; graph: Graph; id: string; select: (s: Selection) => void; focus: (ns: string, name: string) => void }) {
  const { data: d, error } = useLoad(() => api.dataset(ns, name, asOf), [ns, name, asOf]);
  const edges = [...graph.edges.values()].filter((e) => e.from === id || e.to === id);
  const nameOf = (nid: string) => { const n = graph.nodes.get(nid); return n && "name" in n ? n.name : "restricted"; };
  return (
    <section aria-label="Dataset details">
      <h2>{name}</h2>
      <p className="muted">{ns}</p>
      <button onClick={() => focus(ns, name)}>Show the lineage of this dataset</button>
      {error && <p role="alert" className="error">{error}</p>}
      {d && (
        <>
          <dl>
            {(d.currentName !== d.name || d.currentNamespace !== d.namespace) && <Row k="Current name">{d.currentNamespace} {d.currentName}</Row>}
            {d.resolvedFrom && <Row k="Found as">{d.resolvedFrom.name} ({d.resolvedFrom.kind.toLowerCase()})</Row>}
            {d.environment && <Row k="Environment">{d.environment}</Row>}
            {d.description && <Row k="Description">{d.description}</Row>}
            <Row k="Owners">{d.owners.length ? d.owners.map((o) => o.name).join(", ") : "none reported"}</Row>
            <Row k="Tags">{d.tags.length ? d.tags.map((t) => t.name).join(", ") : "none"}</Row>
            <Row k="Last written by">{d.lastWrittenBy ? (
              <button className="link" onClick={() => select({ kind: "run", runId: d.lastWrittenBy!.runId, job: d.lastWrittenBy!.job })}>
                {d.lastWrittenBy.job.name} · {d.lastWrittenBy.state.toLowerCase()} · {when(d.lastWrittenBy.endedAt ?? d.lastWrittenBy.startedAt)}
              </button>) : "— (unknown, or hidden from you)"}</Row>
          </dl>
          <h3>Schema {asOf ? `as of ${when(asOf)}` : "now"}</h3>
          {d.fields.length === 0 ? <p className="muted">no fields reported</p> : (
            <table className="schema"><thead><tr><th>field</th><th>type</th><th>since</th></tr></thead>
              <tbody>{d.fields.map((f) => (
                <tr key={f.path}><td>{f.path}{f.tags.length ? ` [${f.tags.map((t) => t.name).join(", ")}]` : ""}{f.observedOnRead ? " (seen on read)" : ""}</td>
                  <td>{f.type ?? ""}</td><td>{when(f.validFrom)}</td></tr>))}</tbody></table>
          )}
          {asOf && (() => {
            const c = schemaChanges(d.fields, d.current);
            const none = !c.added.length && !c.gone.length && !c.retyped.length;
            return (<div data-testid="schema-changes"><h3>Schema changes since then</h3>
              {none ? <p className="muted">none</p> : <ul>
                {c.added.length > 0 && <li>added: {c.added.join(", ")}</li>}
                {c.gone.length > 0 && <li>gone: {c.gone.join(", ")}</li>}
                {c.retyped.map((r) => <li key={r}>type changed: {r}</li>)}</ul>}</div>);
          })()}
          {d.aliases.length > 1 && (<><h3>Names</h3><ul>{d.aliases.map((a) => (
            <li key={`${a.namespace}|${a.name}|${a.kind}`}>{a.name} · {a.kind.toLowerCase()} · {when(a.validFrom)} – {a.validTo ? when(a.validTo) : "now"}</li>))}</ul></>)}
          <h3>Versions</h3>
          {d.versions.nodes.length === 0 ? <p className="muted">none reported</p> : (
            <ul>{d.versions.nodes.map((v) => <li key={v.version}>{v.version}{v.operation ? ` · ${v.operation}` : ""} · {when(v.committedAt ?? v.firstSeenAt)}</li>)}
              {d.versions.hasNextPage && <li className="muted">older versions not shown</li>}</ul>
          )}
        </>
      )}
      <h3>Edges on the graph</h3>
      <ul>{edges.map((e) => (
        <li key={e.id}><button className="link" onClick={() => select({ kind: "line", id: e.id })}>
          {nameOf(e.from)} → {nameOf(e.to)}{e.job ? ` via ${e.job.name}` : " (job hidden)"}</button></li>))}</ul>
    </section>
  );
}

function EdgePanel({ edge, graph, asOf, select }: { edge: Edge; graph: Graph; asOf?: string; select: (s: Selection) => void }) {
  const label = (id: string) => {
    const n = graph.nodes.get(id);
    if (!n) return id;
    if (n.__typename === "Field") return `${n.dataset.name}.${n.path}`;
    return "name" in n ? n.name : "restricted";
  };
  const jobRef = edge.job;
  const { data: job } = useLoad(() => (jobRef ? api.job(jobRef.namespace, jobRef.name, asOf) : Promise.resolve(null)), [jobRef?.id, asOf]);
  return (
    <section aria-label="Edge evidence">
      <h2>Edge</h2>
      <p><strong>{label(edge.from)}</strong> → <strong>{label(edge.to)}</strong></p>
      <dl>
        <Row k="Job">{edge.job ? `${edge.job.namespace} ${edge.job.name}` : "hidden from you (or declared without a job)"}</Row>
        <Row k="Valid">{when(edge.validFrom)} – {edge.validTo ? when(edge.validTo) : "now"}</Row>
        <Row k="Last observed">{when(edge.lastObservedAt)}{edge.stale ? " (stale)" : ""}</Row>
        {isDeclaredOnly(edge) && <Row k="Gap">declared only: never observed by a run</Row>}
      </dl>
      {edge.transformations.length > 0 && (<><h3>Transformations</h3><ul>{edge.transformations.map((t, i) => (
        <li key={i}>{t.type} {t.subtype ?? ""}{t.masking ? " · masked" : ""}{t.description ? ` · ${t.description}` : ""}</li>))}</ul>
        {isMasked(edge) && <p className="muted">Masked: the value is hashed, redacted or otherwise hidden on the way.</p>}</>)}
      <h3>Evidence</h3>
      <ul className="evidence">{edge.evidence.map((x, i) => (
        <li key={i} data-testid="evidence">
          <strong>{x.kind.toLowerCase()}</strong> {when(x.observedAt)}
          {x.source ? ` · from ${x.source}` : ""}{x.publication ? ` · ${x.publication.toLowerCase()}` : ""}
          {x.runId && <> · run <button className="link" onClick={() => select({ kind: "run", runId: x.runId!, job: edge.job ?? undefined })}>{x.runId}</button>
            {x.runState ? ` (${x.runState.toLowerCase()})` : ""}</>}
          {x.producer && <div className="muted">producer {x.producer}</div>}
          {x.jobVersion && <div className="muted">job version {x.jobVersion}</div>}
          {x.derivation && x.derivation !== x.source && <div className="muted">derived by {x.derivation}</div>}
        </li>))}</ul>
      {edge.intervals && edge.intervals.length > 1 && (<><h3>Intervals</h3><ul>{edge.intervals.map((iv, i) => (
        <li key={i}>{when(iv.validFrom)} – {iv.validTo ? when(iv.validTo) : "now"}{iv.publication ? ` · ${iv.publication.toLowerCase()}` : ""}</li>))}</ul></>)}
      {job?.version && (<><h3>Job definition</h3>
        {job.version.sqlWithheld ? <p className="muted">SQL withheld: you lack VIEW_SQL on the job, or it touched a dataset hidden from you.</p>
          : job.version.sql ? <pre className="sql">{job.version.sql}</pre> : <p className="muted">no SQL reported</p>}</>)}
    </section>
  );
}

function JobPanel({ ns, name, asOf, select }: { ns: string; name: string; asOf?: string; select: (s: Selection) => void }) {
  const { data: j, error } = useLoad(() => api.job(ns, name, asOf), [ns, name, asOf]);
  return (
    <section aria-label="Job details">
      <h2>{name}</h2>
      <p className="muted">job in {ns}</p>
      {error && <p role="alert" className="error">{error}</p>}
      {j && (<>
        <dl>
          <Row k="Type">{[j.integration, j.jobType, j.processingType].filter(Boolean).join(" · ") || "—"}</Row>
          <Row k="Last seen">{when(j.lastSeenAt)}</Row>
        </dl>
        <h3>Latest runs</h3>
        <ul>{j.runs.nodes.map((r) => (
          <li key={r.id}><button className="link" onClick={() => select({ kind: "run", runId: r.runId, job: r.job })}>
            {r.state.toLowerCase()} · {when(r.endedAt ?? r.startedAt)}</button></li>))}</ul>
        <h3>Definition</h3>
        {!j.version ? <p className="muted">none reported</p> : j.version.sqlWithheld
          ? <p className="muted">SQL withheld: you lack VIEW_SQL on the job, or it touched a dataset hidden from you.</p>
          : j.version.sql ? <pre className="sql">{j.version.sql}</pre> : <p className="muted">no SQL reported</p>}
      </>)}
    </section>
  );
}

function RunPanel({ runId, job }: { runId: string; job?: { namespace: string; name: string } }) {
  const { data: r, error } = useLoad(() => api.run(runId, job), [runId, job?.namespace, job?.name]);
  return (
    <section aria-label="Run details">
      <h2>Run</h2>
      <p className="muted">{runId}</p>
      {error && <p role="alert" className="error">{error}</p>}
      {r && (<>
        <dl>
          <Row k="Job">{r.job.namespace} {r.job.name}</Row>
          <Row k="State">{r.state.toLowerCase()}{r.conflictingStates.length ? ` (conflicting: ${r.conflictingStates.join(", ")})` : ""}</Row>
          <Row k="Started">{when(r.startedAt)}</Row><Row k="Ended">{when(r.endedAt)}</Row>
        </dl>
        <h3>Read</h3><ul>{r.inputs.map((io) => <li key={io.dataset.namespace + io.dataset.name}>{io.dataset.name}{io.version ? ` @ ${io.version}` : ""}</li>)}</ul>
        <h3>Wrote</h3><ul>{r.outputs.map((io) => <li key={io.dataset.namespace + io.dataset.name}>{io.dataset.name} · {io.publication.toLowerCase()}{io.version ? ` @ ${io.version}` : ""}</li>)}</ul>
        <h3>Events</h3><ul>{r.events.map((e, i) => <li key={i}>{(e.eventType ?? "event").toLowerCase()} {when(e.eventTime)}</li>)}</ul>
      </>)}
    </section>
  );
}

export function Panel({ selection, graph, asOf, select, tracedFields, focus }: { selection?: Selection; graph: Graph; asOf?: string; select: (s: Selection) => void; tracedFields: string[]; focus: (ns: string, name: string) => void }) {
  if (!selection) return <p className="muted">Select a dataset, a field or an edge label to see its details.</p>;
  if (selection.kind === "run") return <RunPanel runId={selection.runId} job={selection.job} />;
  if (selection.kind === "line") {
    const e = graph.edges.get(selection.id);
    return e ? <EdgePanel edge={e} graph={graph} asOf={asOf} select={select} /> : null;
  }
  const n = graph.nodes.get(selection.kind === "field" ? selection.box : selection.id)
    ?? [...graph.nodes.values()].find((x) => x.__typename === "Field" && x.dataset.id === (selection.kind === "field" ? selection.box : selection.id));
  if (selection.kind === "field") {
    const f = graph.nodes.get(selection.id);
    return (
      <section aria-label="Field lineage">
        <h2>{f?.__typename === "Field" ? `${f.dataset.name}.${f.path}` : "field"}</h2>
        <h3>On its path</h3>
        <ul data-testid="traced">{tracedFields.map((x) => <li key={x}>{x}</li>)}</ul>
      </section>
    );
  }
  if (!n) return null;
  if (n.__typename === "RestrictedNode") return <p>Restricted: a neighbour you may not see. Its name, its job and how many there are are not shown.</p>;
  if (n.__typename === "Job") return <JobPanel ns={n.namespace} name={n.name} asOf={asOf} select={select} />;
  const ds = n.__typename === "Field" ? n.dataset : n;
  return <DatasetPanel ns={ds.namespace} name={ds.name} asOf={asOf} graph={graph} id={selection.id} select={select} focus={focus} />;
}
