// The local graph on a memory's page (templates/memories/memory_detail.html): the memories within 1-3 links of
// this one (GET /api/v1/graph/memories/<id>/neighbourhood/?depth=), drawn by sigma as rings around it, one ring
// a link further out. The depth slider reloads it; clicking a memory opens its page. window.engramLocalGraph
// exposes the state to tests.
import Graph from "graphology";
import Sigma from "sigma";

import { api, fill } from "./api.js";
import { edgeColor, HIGHLIGHT, nodeColor, SECTOR_COLORS } from "./colors.js";
import { h, preview } from "./dom.js";

const $ = (id) => document.getElementById(id);
// Slider moves closer together than this load only the depth it stops at.
const SLIDE_MS = 150;
const NODE_SIZES = [14, 9, 7, 5]; // by depth: the memory itself, then each ring out
const UNPLACED_RING = 1;
// A stage narrower than this (a phone) gets shorter labels.
const LABEL_NARROW_PX = 560;
// Beyond this many nodes, thinner links and fewer labels.
const CROWDED_NODES = 30;

function depthText(depth) {
  return depth === 1 ? "1 link away" : `up to ${depth} links away`;
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

// Each node's place: the memory at the centre, depth d on the circle of radius d. Every node hangs from its
// strongest link one ring in and gets a share of its parent's arc as large as its share of the leaves below, so
// that a branch stays together and links cross as little as a tree allows.
function ringLayout(nodes, edges, centre) {
  const depth = new Map(nodes.map((node) => [node.id, node.depth]));
  const parent = new Map();
  for (const edge of edges) {
    for (const [near, far] of [[edge.source, edge.target], [edge.target, edge.source]]) {
      if (depth.get(near) !== depth.get(far) - 1) continue;
      const best = parent.get(far);
      if (!best || edge.weight > best.weight) parent.set(far, { id: near, weight: edge.weight });
    }
  }
  const children = new Map(nodes.map((node) => [node.id, []]));
  const unplaced = [];
  for (const node of nodes) {
    if (node.id === centre) continue;
    const up = parent.get(node.id);
    if (up) children.get(up.id).push(node.id);
    else unplaced.push(node.id); // its way in was left out by the cap: placed on a ring by itself
  }
  const leaves = new Map();
  const countLeaves = (id) => {
    const below = children.get(id).reduce((sum, child) => sum + countLeaves(child), 0);
    leaves.set(id, below || 1);
    return below || 1;
  };
  countLeaves(centre);
  const positions = new Map([[centre, { x: 0, y: 0 }]]);
  const place = (id, from, to) => {
    let start = from;
    for (const child of children.get(id)) {
      const span = ((to - from) * leaves.get(child)) / leaves.get(id);
      const angle = start + span / 2;
      const radius = depth.get(child);
      positions.set(child, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
      place(child, start, start + span);
      start += span;
    }
  };
  // The strongest neighbour first, the rest round the circle after it.
  place(centre, -Math.PI / 2, 1.5 * Math.PI);
  unplaced.forEach((id, index) => {
    const angle = (2 * Math.PI * (index + 0.5)) / unplaced.length;
    const radius = depth.get(id) || UNPLACED_RING;
    positions.set(id, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
  });
  return positions;
}

class LocalGraph {
  constructor(config) {
    this.config = config;
    this.depth = config.depth;
    this.capped = false;
    this.loads = 0; // answers drawn so far (tests wait on it)
    this.asked = 0; // requests sent: an answer to an older one is dropped
    this.graph = new Graph({ type: "directed", multi: false, allowSelfLoops: false });
    this.renderer = new Sigma(this.graph, $("local-canvas"), {
      defaultEdgeType: "arrow",
      renderEdgeLabels: false,
      labelFont: "system-ui, sans-serif",
      labelSize: 12,
      labelWeight: "500",
      labelColor: { color: "#1d2433" },
      labelGridCellSize: 120,
      stagePadding: 36,
      zIndex: true,
      allowInvalidContainer: true,
      minCameraRatio: 0.2,
      maxCameraRatio: 3,
    });
    this.renderer.on("clickNode", ({ node }) => this.open(node));
    this.renderer.on("enterNode", ({ node }) => {
      if (node !== config.memory) $("local-canvas").style.cursor = "pointer";
    });
    this.renderer.on("leaveNode", () => { $("local-canvas").style.cursor = ""; });
    this.narrow = this.isNarrow();
    new ResizeObserver(() => this.resized()).observe($("local-canvas"));
    const slider = $("local-depth");
    slider.value = String(this.depth);
    slider.addEventListener("input", () => this.slide(Number(slider.value)));
    this.showDepth();
    this.ready = this.load();
  }

  slide(depth) {
    this.depth = depth;
    this.showDepth();
    clearTimeout(this.slideTimer);
    this.slideTimer = setTimeout(() => { this.ready = this.load(); }, SLIDE_MS);
  }

  showDepth() {
    const text = depthText(this.depth);
    $("local-depth-value").textContent = text;
    $("local-depth").setAttribute("aria-valuetext", text);
  }

  async load() {
    const asked = ++this.asked;
    const depth = this.depth;
    $("local-count").textContent = "Loading…";
    let answer;
    try {
      answer = await api(`${this.config.urls.neighbourhood}?depth=${depth}`);
    } catch (error) {
      if (asked !== this.asked) return;
      this.showError(`The local graph could not be loaded: ${error.message}`);
      $("local-count").textContent = "";
      return;
    }
    if (asked !== this.asked) return;
    this.showError(null);
    this.draw(answer);
  }

  draw(answer) {
    const centre = this.config.memory;
    const positions = ringLayout(answer.nodes, answer.edges, centre);
    const crowded = answer.nodes.length > CROWDED_NODES;
    this.graph.clear();
    for (const node of answer.nodes) {
      const isCentre = node.id === centre;
      this.graph.addNode(node.id, {
        ...positions.get(node.id),
        label: this.label(node.content, isCentre),
        content: node.content,
        size: NODE_SIZES[Math.min(node.depth, NODE_SIZES.length - 1)],
        color: isCentre ? HIGHLIGHT : nodeColor(node, "sector"),
        forceLabel: isCentre,
        zIndex: isCentre ? 2 : 1,
        sector: node.sector,
        depth: node.depth,
      });
    }
    for (const edge of answer.edges) {
      if (!this.graph.hasNode(edge.source) || !this.graph.hasNode(edge.target)) continue;
      this.graph.mergeEdgeWithKey(`${edge.source}>${edge.target}`, edge.source, edge.target, {
        linkType: edge.type,
        weight: edge.weight,
        size: crowded ? 0.5 + edge.weight * 2 : 1 + edge.weight * 4,
        color: edgeColor(edge.type),
      });
    }
    this.capped = answer.capped;
    // A crowded graph labels only the memory and its direct links (zooming in or hovering shows the rest).
    this.renderer.setSetting("labelRenderedSizeThreshold", crowded ? NODE_SIZES[1] - 1 : 4);
    this.renderer.setSetting("labelDensity", crowded ? 0.7 : 2);
    // Frame the outermost ring drawn, so that the memory stays at the middle whatever lies around it.
    const reach = Math.max(1, ...answer.nodes.map((node) => node.depth));
    this.renderer.setCustomBBox({ x: [-reach, reach], y: [-reach, reach] });
    this.renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 });
    this.renderer.refresh();
    const memories = this.graph.order - 1;
    const alone = memories === 0;
    $("local-stage").hidden = alone;
    $("local-legend").hidden = alone;
    $("local-none").hidden = !alone;
    const count = `${plural(memories, "linked memory", "linked memories")} · ${plural(this.graph.size, "link", "links")}`;
    $("local-count").textContent = answer.capped ? `${count} · capped at ${answer.limit} memories: the nearest and strongest` : count;
    $("local-canvas").setAttribute("aria-label",
      `Local graph: this memory and ${plural(memories, "memory", "memories")} ${depthText(this.depth)}. ` +
      "Click a memory to open it; the list below has the direct links.");
    this.renderLegend(answer);
    this.loads += 1;
  }

  isNarrow() {
    return $("local-canvas").clientWidth < LABEL_NARROW_PX;
  }

  label(content, isCentre) {
    if (isCentre && this.narrow) return "This memory";
    return `${isCentre ? "This memory: " : ""}${preview(content, this.narrow ? 22 : 36)}`;
  }

  // A phone turned sideways (or a window resized) across LABEL_NARROW_PX gets labels of the new length.
  resized() {
    const narrow = this.isNarrow();
    if (narrow !== this.narrow) {
      this.narrow = narrow;
      this.graph.updateEachNodeAttributes((id, attributes) => ({
        ...attributes, label: this.label(attributes.content, id === this.config.memory),
      }));
    }
    this.renderer.refresh();
  }

  renderLegend(answer) {
    const types = new Map(this.config.linkTypes.map((entry) => [entry.value, entry.label]));
    const sectors = new Map(this.config.sectors.map((entry) => [entry.value, entry.label]));
    const usedTypes = [...new Set(answer.edges.map((edge) => edge.type))];
    const usedSectors = [...new Set(answer.nodes.filter((node) => node.id !== this.config.memory).map((node) => node.sector))];
    const group = (title, items) => h("div", { class: "legend-group" }, h("span", { class: "legend-title" }, title), ...items);
    const line = (colour, label, height = 3) =>
      h("span", { class: "legend-item" }, h("span", { class: "legend-line", style: `background:${colour};height:${height}px` }), label);
    const dot = (colour, label) =>
      h("span", { class: "legend-item" }, h("span", { class: "legend-dot", style: `background:${colour}` }), label);
    $("local-legend").replaceChildren(
      group("", [dot(HIGHLIGHT, "This memory")]),
      group("Links", usedTypes.map((type) => line(edgeColor(type), types.get(type) || type))),
      group("Weight", [line("#98a2b3", "weak", 1.5), line("#98a2b3", "strong", 5), h("span", { class: "legend-item" }, "· arrows point from source to target")]),
      group("Sector", usedSectors.map((sector) => dot(SECTOR_COLORS[sector] || nodeColor({ sector }, "sector"), sectors.get(sector) || sector))),
    );
  }

  open(node) {
    if (node === this.config.memory) return;
    window.location.assign(fill(this.config.urls.page, { MEMORY_ID: node }));
  }

  showError(text) {
    const element = $("local-error");
    element.textContent = text || "";
    element.hidden = !text;
  }
}

const configElement = $("local-graph-config");
if (configElement) window.engramLocalGraph = new LocalGraph(JSON.parse(configElement.textContent));
