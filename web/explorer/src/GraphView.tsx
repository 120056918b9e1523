// The graph itself: the scene's boxes and lines laid out by ELK and drawn by React Flow (DOM nodes, so names are
// text, boxes are focusable, and screen readers and the browser tests read them).
import { memo, useEffect, useMemo, useState, type KeyboardEvent } from "react";
import {
  BaseEdge, Controls, EdgeLabelRenderer, Handle, MarkerType, Position, ReactFlow, ReactFlowProvider,
  getBezierPath, useReactFlow, type Edge as FlowEdge, type EdgeProps, type Node as FlowNode, type NodeProps,
} from "@xyflow/react";
import { GAP_WORDS, type Box, type Line, type More } from "./model";
import { BOX_WIDTH, HEADER, RESTRICTED, ROW, boxHeight, layout } from "./layout";

export type Selection =
  | { kind: "box"; id: string }
  | { kind: "field"; id: string; box: string }
  | { kind: "line"; id: string }
  | { kind: "run"; runId: string; job?: { namespace: string; name: string } };

export interface GraphActions {
  select: (s: Selection) => void;
  expand: (boxOrField: string) => void;
  more: (m: More) => void;
}

interface BoxData extends Record<string, unknown> { box: Box; actions: GraphActions; selected?: Selection; expanded: boolean; traced: Set<string> }
interface LineData extends Record<string, unknown> { line: Line; actions: GraphActions; dim: boolean; on: boolean }

const stop = (f: () => void) => (e: { stopPropagation: () => void }) => { e.stopPropagation(); f(); };

function DatasetBox({ data }: NodeProps<FlowNode<BoxData>>) {
  const { box, actions, selected, expanded, traced } = data;
  const isSel = selected?.kind === "box" && selected.id === box.id;
  return (
    <div className={`box${box.kind === "job" ? " job" : ""}${box.start ? " start" : ""}${isSel ? " selected" : ""}`} style={{ width: BOX_WIDTH, height: boxHeight(box) }}
      data-testid="dataset-box" data-name={box.name}>
      <Handle type="target" position={Position.Left} className="box-handle" isConnectable={false} />
      <div className="box-head" title={`${box.namespace} ${box.name}`}>
        <div className="box-name">{box.name}</div>
        <div className="box-ns">{box.kind === "job" ? `job · ${box.namespace}` : box.namespace}</div>
        {box.badges.length > 0 && (
          <div className="badges">{box.badges.map((b) => <span key={b} className={`badge gap-${b}`}>{GAP_WORDS[b] ?? b.toLowerCase()}</span>)}</div>
        )}
        <button className="expand nodrag" aria-label={`Expand ${box.name} one hop`} title="Expand one hop (key: e)"
          onClick={stop(() => actions.expand(box.id))}>{expanded ? "⟳" : "+"}</button>
      </div>
      {box.fields.map((f, i) => {
        const fsel = selected?.kind === "field" && selected.id === f.id;
        return (
          <button key={f.id} className={`field nodrag${fsel ? " selected" : ""}${traced.has(f.id) ? " traced" : ""}`}
            style={{ top: HEADER + i * ROW, height: ROW }} data-testid="field-row" data-field={`${box.name}.${f.path}`}
            onClick={stop(() => actions.select({ kind: "field", id: f.id, box: box.id }))}
            aria-label={`Field ${f.path} of ${box.name}`}>
            <Handle id={`${f.id}|in`} type="target" position={Position.Left} className="field-handle" isConnectable={false} />
            <span className="field-path">{f.path}</span><span className="field-type">{f.type ?? ""}</span>
            <Handle id={`${f.id}|out`} type="source" position={Position.Right} className="field-handle" isConnectable={false} />
          </button>
        );
      })}
      {box.more.map((m, i) => (
        <button key={m.key} className="more nodrag" style={{ top: HEADER + box.fields.length * ROW, left: 8 + i * 130 }}
          onClick={stop(() => actions.more(m))} data-testid="more"
          title={m.reasons.length ? `this page stopped at: ${m.reasons.join(", ").toLowerCase().replaceAll("_", " ")}` : undefined}>
          + more {m.direction === "UPSTREAM" ? "upstream" : m.direction === "DOWNSTREAM" ? "downstream" : ""}</button>
      ))}
      <Handle type="source" position={Position.Right} className="box-handle" isConnectable={false} />
    </div>
  );
}

function RestrictedBox() {
  return (
    <div className="box restricted" style={{ width: RESTRICTED.width, height: RESTRICTED.height }} data-testid="restricted-box">
      <Handle type="target" position={Position.Left} className="box-handle" isConnectable={false} />
      <div className="restricted-title">Restricted</div>
      <div className="restricted-sub">hidden by your permissions</div>
      <Handle type="source" position={Position.Right} className="box-handle" isConnectable={false} />
    </div>
  );
}

export const LINE_COLOURS: Record<string, string> = {
  dataset: "#3b4a5a", identity: "#1b7f3a", transformation: "#1f5fbf", aggregation: "#8a3ab9", indirect: "#7a6a00",
  declared: "#5a5a5a", attempted: "#b3261e", restricted: "#8a8a8a",
};

function LineEdge(p: EdgeProps<FlowEdge<LineData>>) {
  const { line, actions, dim, on } = p.data!;
  const [path] = getBezierPath(p);
  // Dataset level: labels sit three quarters of the way along, so the labels of a fan-out do not pile up at its
  // hub. Column level: half way, between the two boxes' field rows.
  const f = line.sourceField ? 0.5 : 0.72;
  const lx = p.sourceX + f * (p.targetX - p.sourceX), ly = p.sourceY + (line.sourceField ? 0.5 : 0.9) * (p.targetY - p.sourceY);
  const dashed = line.style === "indirect" || line.style === "declared" || line.style === "restricted" || line.style === "attempted" || line.edge?.stale;
  const masked = line.edge?.transformations.some((t) => t.masking);
  const style = { stroke: LINE_COLOURS[line.style], strokeWidth: on ? 3 : 1.6, opacity: dim ? 0.18 : 1,
    strokeDasharray: masked ? "2 3" : dashed ? "6 4" : undefined };
  return (
    <>
      <BaseEdge id={p.id} path={path} markerEnd={p.markerEnd} style={style} interactionWidth={14} />
      {line.edge && (
        <EdgeLabelRenderer>
          <button className={`edge-label nodrag nopan style-${line.style}${dim ? " dim" : ""}`} data-testid="edge-label"
            style={{ transform: `translate(-50%, -50%) translate(${lx}px, ${ly}px)` }}
            onClick={() => actions.select({ kind: "line", id: line.id })}>
            {line.label || "edge"}
          </button>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

const nodeTypes = { dataset: memo(DatasetBox), job: memo(DatasetBox), restricted: memo(RestrictedBox) };
const edgeTypes = { line: LineEdge };

interface Props { boxes: Box[]; lines: Line[]; actions: GraphActions; selection?: Selection; expanded: Set<string>; traced: Set<string>; tracedFields: Set<string> }

function Flow({ boxes, lines, actions, selection, expanded, traced, tracedFields }: Props) {
  const [pos, setPos] = useState<Map<string, { x: number; y: number }>>(new Map());
  const { fitView } = useReactFlow();
  const shape = useMemo(() => JSON.stringify([boxes.map((b) => [b.id, b.fields.length, b.more.length > 0]), lines.map((l) => l.id)]), [boxes, lines]);
  useEffect(() => {
    let live = true;
    // fit once React Flow has measured the new boxes (a frame is not always enough)
    layout(boxes, lines).then((p) => { if (live) { setPos(p); setTimeout(() => live && void fitView({ padding: 0.12, maxZoom: 1.1 }), 80); } });
    return () => { live = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);
  const names = useMemo(() => new Map(boxes.map((b) => [b.id, b.name ?? "restricted"])), [boxes]);
  const nodes: FlowNode<BoxData>[] = boxes.filter((b) => pos.has(b.id)).map((b) => ({
    id: b.id, type: b.kind, position: pos.get(b.id)!, draggable: false, connectable: false,
    width: b.kind === "restricted" ? RESTRICTED.width : BOX_WIDTH, height: boxHeight(b),
    ariaLabel: b.kind === "restricted" ? "Restricted: a neighbour hidden by your permissions" : `${b.kind === "job" ? "Job" : "Dataset"} ${b.name} in ${b.namespace}`,
    data: { box: b, actions, selected: selection, expanded: expanded.has(b.id), traced: tracedFields },
  }));
  const any = traced.size > 0;
  const edges: FlowEdge<LineData>[] = lines.filter((l) => pos.has(l.source) && pos.has(l.target)).map((l) => ({
    id: l.id, source: l.source, target: l.target, type: "line",
    sourceHandle: l.sourceField ? `${l.sourceField}|out` : null, targetHandle: l.targetField ? `${l.targetField}|in` : null,
    markerEnd: { type: MarkerType.ArrowClosed, color: LINE_COLOURS[l.style], width: 16, height: 16 },
    ariaLabel: `${names.get(l.source)} to ${names.get(l.target)}${l.label ? `: ${l.label}` : ""}`,
    data: { line: l, actions, dim: any && !traced.has(l.id), on: traced.has(l.id) || (selection?.kind === "line" && selection.id === l.id) },
  }));
  return (
    <ReactFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} edgeTypes={edgeTypes} nodesDraggable={false}
      nodesConnectable={false} nodesFocusable edgesFocusable elementsSelectable={false} minZoom={0.1} maxZoom={2}
      onNodeClick={(_, n) => actions.select({ kind: "box", id: n.id })}
      onEdgeClick={(_, e) => actions.select({ kind: "line", id: e.id })}
      proOptions={{ hideAttribution: true }}>
      <Controls showInteractive={false} />
    </ReactFlow>
  );
}

/**
 * Keyboard: Tab moves between boxes and edges (React Flow makes them focusable), Enter opens the focused box's or
 * edge's details, "e" or "+" expands the focused box one hop.
 */
function keys(e: KeyboardEvent, actions: GraphActions) {
  const el = e.target as HTMLElement;
  const id = el.dataset.id;
  if (!id) return;
  if (el.classList.contains("react-flow__edge") && e.key === "Enter") actions.select({ kind: "line", id });
  if (!el.classList.contains("react-flow__node")) return;
  if (e.key === "Enter") actions.select({ kind: "box", id });
  if (e.key === "e" || e.key === "+") actions.expand(id);
}

export function GraphView(p: Props) {
  return (
    <ReactFlowProvider>
      <div className="graph" onKeyDown={(e) => keys(e, p.actions)}>
        <Flow {...p} />
      </div>
    </ReactFlowProvider>
  );
}
