// Node labels that never overlap. Sigma picks candidate labels with its label grid (a few of the largest
// nodes per cell, plus nodes with forceLabel) and hands each to defaultDrawNodeLabel; a memory's label is
// long (48 characters), so labels from neighbouring cells run into each other. Here the candidates of a frame
// are only collected; after the frame the cluster names are drawn first, then the labels in order of rank (the
// selected node, what just changed, search hits and the cluster in focus, then the rest, the unlinked last)
// and size, each where its box (the node's disc and its text) is free. `placed` keeps the boxes drawn.
const PADDING = 2;
const CELL = 64;

export class LabelPlacer {
  // headings(): names drawn over the graph before any node label (the clusters', in viewport coordinates):
  // [{text, group, x, top, bottom, color}], each centred on x just above `top` (or, if that is taken, below
  // `bottom`), and only where it covers no node of another group.
  // discs(): the nodes drawn, [{key, group, x, y, size}] in viewport coordinates. No label of rank 0 or below may
  // cover a node of group `crowded` (the unlinked grid's dots: a label there would run across its neighbours,
  // and a cluster's labels into the grid).
  constructor({ headings = () => [], discs = () => [], crowded = null } = {}) {
    this.headings = headings;
    this.discs = discs;
    this.crowded = crowded;
    this.candidates = [];
    this.placed = [];
    this.widths = new Map();
  }

  // The renderer's label hook (settings.defaultDrawNodeLabel).
  offer(context, data) {
    if (data.label) this.candidates.push(data);
  }

  // Headings are drawn after every frame, node labels only after frames that drew labels (sigma skips them while
  // the camera moves).
  attach(renderer) {
    this.renderer = renderer;
    this.context = renderer.getCanvases().labels.getContext("2d");
    renderer.on("beforeRender", () => { this.candidates = []; });
    renderer.on("afterRender", () => this.draw());
  }

  draw() {
    const context = this.context;
    const settings = this.renderer.getSettings();
    const candidates = this.candidates;
    this.candidates = [];
    this.placed = [];
    candidates.sort((a, b) => (b.labelRank || 0) - (a.labelRank || 0) || b.size - a.size || (a.key < b.key ? -1 : 1));
    const grid = new Map();
    const headings = this.headings();
    let nodes = null;
    const nodeGrid = () => {
      if (!nodes) {
        nodes = new Map();
        for (const disc of this.discs()) {
          insert(nodes, { key: disc.key, group: disc.group, x0: disc.x - disc.size, x1: disc.x + disc.size,
            y0: disc.y - disc.size, y1: disc.y + disc.size });
        }
      }
      return nodes;
    };
    if (headings.length) this.drawHeadings(context, settings, grid, headings, nodeGrid());
    context.font = `${settings.labelWeight} ${settings.labelSize}px ${settings.labelFont}`;
    context.fillStyle = settings.labelColor.color || "#000";
    const crowded = (other, data) => other.group === this.crowded && other.key !== data.key;
    for (const data of candidates) {
      const box = this.box(context, data, settings);
      if (collides(grid, box)) continue;
      // What the user asked to see (rank above 0: the selection, changes, search hits) may cover the grid's dots.
      if ((data.labelRank || 0) <= 0 && collides(nodeGrid(), box, (other) => crowded(other, data))) continue;
      insert(grid, box);
      this.placed.push({ key: data.key, label: data.label, ...box });
      // A highlighted node's label is drawn by sigma's hover layer, in a box: here it only keeps its place.
      if (!data.highlighted) context.fillText(data.label, box.textX, data.y + settings.labelSize / 3);
    }
  }

  drawHeadings(context, settings, grid, headings, nodes) {
    const size = settings.labelSize + 1;
    context.font = `700 ${size}px ${settings.labelFont}`;
    context.lineJoin = "round";
    context.lineWidth = 4;
    context.strokeStyle = "rgba(255, 255, 255, 0.9)";
    for (const heading of headings) {
      const textWidth = context.measureText(heading.text).width;
      const at = (baseline) => ({
        x0: heading.x - textWidth / 2 - PADDING, x1: heading.x + textWidth / 2 + PADDING,
        y0: baseline - size - PADDING, y1: baseline + PADDING * 2, baseline,
      });
      const box = [at(heading.top - 6), at(heading.bottom + size + 6)]
        .find((option) => !collides(grid, option) && !collides(nodes, option, (other) => other.group !== heading.group));
      if (!box) continue;
      insert(grid, box);
      this.placed.push({ key: null, label: heading.text, ...box });
      context.strokeText(heading.text, box.x0 + PADDING, box.baseline);
      context.fillStyle = heading.color;
      context.fillText(heading.text, box.x0 + PADDING, box.baseline);
    }
  }

  // Where the label goes (right of the node, as sigma draws it), widened over the node's disc, so that a label
  // does not cover a labelled node either. Nothing here depends on the canvas's edges: a pan moves labels, it does
  // not choose others (frames.js glides the last frame and must match the next).
  box(context, data, settings) {
    let width = this.widths.get(data.label);
    if (width === undefined) {
      width = context.measureText(data.label).width;
      if (this.widths.size > 20000) this.widths.clear();
      this.widths.set(data.label, width);
    }
    const textX = data.x + data.size + 3;
    return {
      textX,
      x0: data.x - data.size - PADDING,
      x1: textX + width + PADDING,
      y0: data.y - settings.labelSize / 2 - PADDING,
      y1: data.y + settings.labelSize / 2 + PADDING,
    };
  }
}

function cells(box) {
  const keys = [];
  for (let i = Math.floor(box.x0 / CELL); i <= Math.floor(box.x1 / CELL); i++) {
    for (let j = Math.floor(box.y0 / CELL); j <= Math.floor(box.y1 / CELL); j++) keys.push(`${i},${j}`);
  }
  return keys;
}

// Whether the box overlaps one in the grid (of those that `counts`, when given).
function collides(grid, box, counts = null) {
  for (const key of cells(box)) {
    for (const other of grid.get(key) || []) {
      if (counts && !counts(other)) continue;
      if (box.x0 < other.x1 && other.x0 < box.x1 && box.y0 < other.y1 && other.y0 < box.y1) return true;
    }
  }
  return false;
}

function insert(grid, box) {
  for (const key of cells(box)) {
    if (!grid.has(key)) grid.set(key, []);
    grid.get(key).push(box);
  }
}
