// Colours of the graph: nodes by sector or by kind, edges by link type. Kept in step with the sector
// badges of static/css/engram.css.
export const SECTOR_COLORS = {
  episodic: "#0284c7",
  semantic: "#7c3aed",
  procedural: "#16a34a",
  emotional: "#e11d48",
  reflective: "#d97706",
};

// One colour per Memory.Kind: plain memories, Mind's entities, Thoughtbox's thoughts.
export const KIND_COLORS = {
  memory: "#4f46e5",
  decision: "#0891b2",
  issue: "#dc2626",
  sharp_edge: "#ea580c",
  episode: "#9333ea",
  thought: "#65a30d",
};

export const LINK_COLORS = {
  semantic: "#c4c9d4",
  causal: "#f0b37e",
  temporal: "#93c5fd",
  analogical: "#c4b5fd",
  hierarchical: "#86efac",
};

const FALLBACK = ["#0f766e", "#a21caf", "#b45309", "#1d4ed8", "#be123c", "#4d7c0f"];

function fallback(name) {
  let hash = 0;
  for (const char of String(name)) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return FALLBACK[hash % FALLBACK.length];
}

export function nodeColor(node, mode) {
  return mode === "kind" ? KIND_COLORS[node.kind] || fallback(node.kind) : SECTOR_COLORS[node.sector] || fallback(node.sector);
}

export function edgeColor(type) {
  return LINK_COLORS[type] || "#c4c9d4";
}

export const FADED_NODE = "#e3e6ec";
export const FADED_EDGE = "#eef0f3";
export const HIGHLIGHT = "#f59e0b";
