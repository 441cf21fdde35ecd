// ForceAtlas2 in a web worker (graphology-layout-forceatlas2/worker), so the main thread only draws.
// It stops once the layout settles: every half second a sample of nodes is compared with where it
// was, and when the mean move falls below a small share of the graph's extent (or the time budget
// runs out) the worker stops.
import FA2Layout from "graphology-layout-forceatlas2/worker";
import forceAtlas2 from "graphology-layout-forceatlas2";

const CHECK_MS = 500;
const SAMPLE = 400;
const SETTLED_SHARE = 0.0015;
// The worker takes a moment to start (and on a big graph, to finish its first iterations): no
// verdict before this, nor before the layout has been seen to move at all.
const MIN_RUN_MS = 2000;

export class Layout {
  constructor(graph, onChange) {
    this.graph = graph;
    this.onChange = onChange;
    this.supervisor = null;
    this.timer = null;
  }

  running() {
    return Boolean(this.supervisor && this.supervisor.isRunning());
  }

  start({ maxMs } = {}) {
    if (this.graph.order < 2) return;
    if (!this.supervisor) {
      const settings = forceAtlas2.inferSettings(this.graph);
      settings.barnesHutOptimize = this.graph.order > 1000;
      settings.adjustSizes = false;
      settings.slowDown = this.graph.order > 2000 ? 5 : 2;
      this.supervisor = new FA2Layout(this.graph, { settings, getEdgeWeight: "weight" });
    }
    this.supervisor.start();
    this.onChange(true);
    const budget = maxMs || Math.min(20000, 3000 + this.graph.order * 1.2);
    const started = performance.now();
    let previous = this.sample();
    let seenMoving = false;
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      const current = this.sample();
      const moved = meanMove(previous, current);
      previous = current;
      const elapsed = performance.now() - started;
      const settled = moved < SETTLED_SHARE * extent(current);
      if (!settled) seenMoving = true;
      if ((settled && seenMoving && elapsed > MIN_RUN_MS) || elapsed > budget) this.stop({ byItself: true });
    }, CHECK_MS);
  }

  // byItself: the layout settled or ran out of time (not stopped by the user or a dragged node).
  stop({ byItself = false } = {}) {
    clearInterval(this.timer);
    this.timer = null;
    if (this.supervisor && this.supervisor.isRunning()) this.supervisor.stop();
    this.onChange(false, byItself);
  }

  // Before the graph is replaced wholesale (a new snapshot): the worker is rebuilt for the new graph.
  kill() {
    clearInterval(this.timer);
    this.timer = null;
    if (this.supervisor) this.supervisor.kill();
    this.supervisor = null;
    this.onChange(false);
  }

  sample() {
    const nodes = this.graph.nodes();
    const step = Math.max(1, Math.floor(nodes.length / SAMPLE));
    const points = new Map();
    for (let i = 0; i < nodes.length; i += step) {
      const attributes = this.graph.getNodeAttributes(nodes[i]);
      points.set(nodes[i], [attributes.x, attributes.y]);
    }
    return points;
  }
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

// Starting positions: a sunflower spiral, so that FA2 starts from an even spread and not a pile.
export function seedPosition(index) {
  const angle = index * 2.399963229728653;
  const radius = 10 * Math.sqrt(index + 1);
  return { x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
}
