// Left-to-right layout of a scene with ELK's layered algorithm. At column level every field row is a pair of
// ports (in on the west side, out on the east) at its row's height, so ELK orders boxes to cross fewer column
// edges. elkGraph is pure (tested); layout runs ELK.
import ELK from "elkjs/lib/elk.bundled.js";
import type { Box, Line } from "./model";

export const BOX_WIDTH = 230;
export const HEADER = 52;
export const ROW = 24;
export const FOOTER = 10;
export const MORE_ROW = 30;
export const RESTRICTED = { width: 200, height: 52 };

export function boxHeight(b: Box): number {
  if (b.kind === "restricted") return RESTRICTED.height;
  return HEADER + b.fields.length * ROW + (b.more.length ? MORE_ROW : 0) + FOOTER;
}

export const portId = (field: string, side: "in" | "out") => `${field}|${side}`;

export interface ElkNode { id: string; width: number; height: number; ports?: unknown[]; layoutOptions?: Record<string, string> }
export interface ElkEdge { id: string; sources: string[]; targets: string[] }

/** The ELK graph of a scene: boxes sorted by name so the same scene lays out the same way. */
export function elkGraph(boxes: Box[], lines: Line[]) {
  const sorted = [...boxes].sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id) || a.id.localeCompare(b.id));
  const children: ElkNode[] = sorted.map((b) => {
    const width = b.kind === "restricted" ? RESTRICTED.width : BOX_WIDTH;
    const n: ElkNode = { id: b.id, width, height: boxHeight(b) };
    if (b.fields.length) {
      n.layoutOptions = { "elk.portConstraints": "FIXED_POS" };
      n.ports = b.fields.flatMap((f, i) => {
        const y = HEADER + i * ROW + ROW / 2;
        return [
          { id: portId(f.id, "in"), x: 0, y, width: 1, height: 1, layoutOptions: { "elk.port.side": "WEST" } },
          { id: portId(f.id, "out"), x: width - 1, y, width: 1, height: 1, layoutOptions: { "elk.port.side": "EAST" } },
        ];
      });
    }
    return n;
  });
  const edges: ElkEdge[] = [...lines].sort((a, b) => a.id.localeCompare(b.id)).map((l) => ({
    id: l.id,
    sources: [l.sourceField ? portId(l.sourceField, "out") : l.source],
    targets: [l.targetField ? portId(l.targetField, "in") : l.target],
  }));
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.spacing.nodeNode": "28",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children,
    edges,
  };
}

const elk = new ELK();

/** Positions (top-left corners) of the boxes. */
export async function layout(boxes: Box[], lines: Line[]): Promise<Map<string, { x: number; y: number }>> {
  const res = await elk.layout(elkGraph(boxes, lines) as Parameters<typeof elk.layout>[0]);
  const out = new Map<string, { x: number; y: number }>();
  for (const c of res.children ?? []) out.set(c.id, { x: c.x ?? 0, y: c.y ?? 0 });
  return out;
}
