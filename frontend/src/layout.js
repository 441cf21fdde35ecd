// ForceAtlas2 in a web worker (graphology-layout-forceatlas2/worker), so the main thread only draws.
//
// Only linked memories take part: the worker lays out an undirected copy of them (clusters.js) and each of
// its steps is copied onto the page's graph. Memories without a link would otherwise fill the drawing with
// an even disc of dots (nothing pulls them anywhere); they stand apart in a grid beside the linked ones
// (arrangeUnlinked), on the side that keeps the whole drawing closest to the canvas's shape.
//
// It stops once the layout settles: every half second a sample of nodes is compared with where it was, and
// when the mean move falls below a small share of the graph's extent (or the time budget runs out) the
// worker stops. A node or link added or removed while it runs rebuilds the worker's copy at the next check.
import FA2Layout from "graphology-layout-forceatlas2/worker";
import forceAtlas2 from "graphology-layout-forceatlas2";

import { linkedGraph, unlinkedNodes } from "./clusters.js";

const CHECK_MS = 500;
const SAMPLE = 400;
const SETTLED_SHARE = 0.0015;
// The worker takes a moment to start (and on a big graph, to finish its first iterations): no
// verdict before this, nor before the layout has been seen to move at all.
const MIN_RUN_MS = 2000;
// The unlinked grid's distance from the linked drawing, in grid steps.
const GRID_GAP = 3;

export class Layout {
  // aspect(): the canvas's width over its height; onStep(): after each step is copied onto the graph.
  constructor(graph, { onChange, aspect = () => 1, onStep = () => {} }) {
    this.graph = graph;
    this.onChange = onChange;
    this.aspect = aspect;
    this.onStep = onStep;
    this.supervisor = null;
    this.copy = null;
    this.timer = null;
    this.stale = false;
    const changed = () => { this.stale = true; };
    for (const event of ["nodeAdded", "nodeDropped", "edgeAdded", "edgeDropped", "cleared", "edgesCleared"]) graph.on(event, changed);
  }

  running() {
    return Boolean(this.supervisor && this.supervisor.isRunning());
  }

  start({ maxMs } = {}) {
    this.arrangeUnlinked();
    // A fresh copy each time: nodes may have been dragged, added or removed since the last run.
    this.killWorker();
    this.spawn();
    if (!this.supervisor) return;
    this.supervisor.start();
    this.onChange(true);
    const budget = maxMs || Math.min(20000, 3000 + this.graph.order * 1.2);
    const started = performance.now();
    let previous = this.sample();
    let seenMoving = false;
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.stale) this.respawn();
      const current = this.sample();
      const moved = meanMove(previous, current);
      previous = current;
      const elapsed = performance.now() - started;
      const settled = moved < SETTLED_SHARE * extent(current);
      if (!settled) seenMoving = true;
      if ((settled && seenMoving && elapsed > MIN_RUN_MS) || elapsed > budget) this.stop({ byItself: true });
    }, CHECK_MS);
  }

  // A worker over a fresh copy of the linked memories, where the page's graph has them now.
  spawn() {
    this.stale = false;
    const copy = linkedGraph(this.graph);
    if (copy.order < 2) return;
    const settings = forceAtlas2.inferSettings(copy);
    settings.barnesHutOptimize = copy.order > 1000;
    settings.adjustSizes = false;
    // LinLog and plain gravity pull a cluster together and keep clusters apart; strong gravity (inferred)
    // packs everything into one round blob.
    settings.linLogMode = true;
    settings.strongGravityMode = false;
    settings.gravity = 1;
    settings.scalingRatio = 6;
    settings.slowDown = copy.order > 2000 ? 5 : 2;
    copy.on("eachNodeAttributesUpdated", () => this.step());
    this.copy = copy;
    this.supervisor = new FA2Layout(copy, { settings, getEdgeWeight: "weight" });
  }

  respawn() {
    const wasRunning = this.running();
    this.killWorker();
    this.spawn();
    if (wasRunning && this.supervisor) this.supervisor.start();
  }

  // One step of the worker: its positions onto the page's graph, with the unlinked grid beside them (one
  // update of the graph, so one redraw).
  step() {
    const copy = this.copy;
    const spots = this.gridSpots(boxOf(copy), copy.order);
    this.graph.updateEachNodeAttributes((node, attributes) => {
      const spot = copy.hasNode(node) ? copy.getNodeAttributes(node) : spots.get(node);
      if (spot) {
        attributes.x = spot.x;
        attributes.y = spot.y;
      }
      return attributes;
    }, { attributes: ["x", "y"] });
    this.onStep();
  }

  // Memories without a link in a grid beside the linked drawing.
  arrangeUnlinked() {
    const graph = this.graph;
    const linked = graph.filterNodes((node) => graph.degree(node) > 0);
    const spots = this.gridSpots(boxOf(graph, linked), linked.length);
    if (!spots.size) return;
    graph.updateEachNodeAttributes((node, attributes) => {
      const spot = spots.get(node);
      if (spot) {
        attributes.x = spot.x;
        attributes.y = spot.y;
      }
      return attributes;
    }, { attributes: ["x", "y"] });
  }

  // Where each memory without a link goes: a grid right of the linked drawing (`box`, of `linked` nodes) or
  // under it, whichever keeps the whole closer to the canvas's shape, spaced like the linked ones.
  gridSpots(box, linked) {
    const graph = this.graph;
    const unlinked = unlinkedNodes(graph);
    const spots = new Map();
    if (!unlinked.length) return spots;
    // Oldest first, so that a new memory takes the next place and the others stay where they are.
    unlinked.sort((a, b) => String(graph.getNodeAttribute(a, "created_at")).localeCompare(String(graph.getNodeAttribute(b, "created_at")))
      || (a < b ? -1 : 1));
    const width = box ? box.maxX - box.minX : 0;
    const height = box ? box.maxY - box.minY : 0;
    const step = linked > 1 && width * height > 0 ? Math.max(1, Math.sqrt((width * height) / linked)) : 10;
    const place = (columns, x0, y0) => {
      unlinked.forEach((node, index) => spots.set(node, { x: x0 + (index % columns) * step, y: y0 - Math.floor(index / columns) * step }));
      return spots;
    };
    if (!box) return place(Math.ceil(Math.sqrt(unlinked.length * this.aspect())), 0, 0);
    const gap = GRID_GAP * step;
    // Beside: as many rows as the linked drawing is high; under: as many columns as it is wide.
    const rowsBeside = Math.max(1, Math.floor(height / step) + 1);
    const columnsBeside = Math.ceil(unlinked.length / rowsBeside);
    const besideAspect = (width + gap + columnsBeside * step) / Math.max(height, step);
    const columnsUnder = Math.max(1, Math.floor(width / step) + 1);
    const rowsUnder = Math.ceil(unlinked.length / columnsUnder);
    const underAspect = Math.max(width, step) / (height + gap + rowsUnder * step);
    const target = this.aspect();
    if (Math.abs(Math.log(besideAspect / target)) <= Math.abs(Math.log(underAspect / target))) {
      return place(columnsBeside, box.maxX + gap, box.maxY);
    }
    return place(columnsUnder, box.minX, box.minY - gap);
  }

  // byItself: the layout settled or ran out of time (not stopped by the user or a dragged node).
  stop({ byItself = false } = {}) {
    clearInterval(this.timer);
    this.timer = null;
    if (this.supervisor && this.supervisor.isRunning()) this.supervisor.stop();
    this.onChange(false, byItself);
  }

  killWorker() {
    if (this.supervisor) this.supervisor.kill();
    this.supervisor = null;
    this.copy = null;
  }

  // Before the graph is replaced wholesale (a new snapshot): the worker is rebuilt for the new graph.
  kill() {
    clearInterval(this.timer);
    this.timer = null;
    this.killWorker();
    this.onChange(false);
  }

  sample() {
    const nodes = this.copy ? this.copy.nodes() : [];
    const stride = Math.max(1, Math.floor(nodes.length / SAMPLE));
    const points = new Map();
    for (let i = 0; i < nodes.length; i += stride) {
      const attributes = this.copy.getNodeAttributes(nodes[i]);
      points.set(nodes[i], [attributes.x, attributes.y]);
    }
    return points;
  }
}

// The box around the linked memories, or null when there is none.
export function linkedExtent(graph) {
  return boxOf(graph, graph.filterNodes((node) => graph.degree(node) > 0));
}

// The box around these nodes of the graph (all of them by default), or null when there is none.
function boxOf(graph, nodes = graph.nodes()) {
  if (!nodes.length) return null;
  const box = { minX: Infinity, maxX: -Infinity, minY: Infinity, maxY: -Infinity };
  for (const node of nodes) {
    const { x, y } = graph.getNodeAttributes(node);
    box.minX = Math.min(box.minX, x); box.maxX = Math.max(box.maxX, x);
    box.minY = Math.min(box.minY, y); box.maxY = Math.max(box.maxY, y);
  }
  return box;
}

function meanMove(before, after) {
  let total = 0;
  let count = 0;
  for (const [node, [x, y]] of after) {
    const old = before.get(node);
    if (!old) continue;
    total += Math.hypot(x - old[0], y - old[1]);
    count += 1;
  }
  return count ? total / count : 0;
}

function extent(points) {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const [x, y] of points.values()) {
    minX = Math.min(minX, x); maxX = Math.max(maxX, x);
    minY = Math.min(minY, y); maxY = Math.max(maxY, y);
  }
  return Math.max(1, Math.hypot(maxX - minX, maxY - minY));
}

const GOLDEN_ANGLE = 2.399963229728653;
// Room between the seeded clusters, as a share of their own radius.
const CLUSTER_ROOM = 2;

// Starting positions: a sunflower spiral, so that FA2 starts from an even spread and not a pile.
export function seedPosition(index) {
  const angle = index * GOLDEN_ANGLE;
  const radius = 10 * Math.sqrt(index + 1);
  return { x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
}

// Starting positions by cluster (largest first): each cluster a small sunflower of its own, the clusters' centres on
// a larger spiral with room between them. FA2 then only refines what Louvain found, and a layout stopped early
// (its time budget on a slow machine) still shows the clusters apart.
export function clusterPositions(clusters) {
  const positions = new Map();
  let placed = 0;
  clusters.forEach((cluster, index) => {
    // A sunflower of n points has a radius of 10√n: the clusters so far fill about that much room.
    const distance = index ? CLUSTER_ROOM * 10 * Math.sqrt(placed + cluster.nodes.length) : 0;
    const centre = { x: distance * Math.cos(index * GOLDEN_ANGLE), y: distance * Math.sin(index * GOLDEN_ANGLE) };
    cluster.nodes.forEach((node, k) => {
      const offset = seedPosition(k);
      positions.set(node, { x: centre.x + offset.x, y: centre.y + offset.y });
    });
    placed += cluster.nodes.length;
  });
  return positions;
}
