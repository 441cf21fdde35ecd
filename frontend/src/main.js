// The dashboard's live memory graph (templates/graph/graph.html).
//
// Nodes are memories, edges links; sigma.js draws them with WebGL and ForceAtlas2 lays them out in
// a web worker (frames.js: how panning stays smooth when drawing a frame is slow). The page loads a snapshot (GET /api/v1/graph/snapshot/ with the filters), follows
// /ws/graph/ for changes (see live.js), and applies each event to the graphology graph at once,
// highlighting what changed for a few seconds. Nodes are coloured by cluster (clusters.js) by default; memories
// without a link stand apart and can be hidden; labels never overlap (labels.js). What the view shows (filters,
// colouring, unlinked shown or not) is kept in the URL's query. window.engramGraph exposes the state to tests.
import Graph from "graphology";
import { drawDiscNodeHover } from "sigma/rendering";

import { api } from "./api.js";
import { CausalPanel } from "./causal.js";
import { findClusters, SMALL_CLUSTER_COLOR, UNLINKED_COLOR, unlinkedNodes } from "./clusters.js";
import { edgeColor, FADED_EDGE, FADED_NODE, HIGHLIGHT, KIND_COLORS, LINK_COLORS, nodeColor, SECTOR_COLORS } from "./colors.js";
import { h, preview } from "./dom.js";
import { PacedSigma } from "./frames.js";
import { LabelPlacer } from "./labels.js";
import { clusterPositions, Layout, linkedExtent, seedPosition } from "./layout.js";
import { LiveFeed } from "./live.js";
import { Panel } from "./panel.js";

const DREAM_STEPS = {
  nrem_replay: "NREM replay", nrem_link: "NREM link", nrem_dedupe: "NREM dedupe",
  nrem_summarise: "NREM summaries", nrem_commit: "NREM scratchpad", rem: "REM",
};
const FLASH_MS = 3000;
const NOTICE_MS = 8000;
// Clusters are found again this long after the last event that added or removed a node or a link.
const RESTRUCTURE_MS = 600;
const COLOR_MODES = ["cluster", "sector", "kind"];
const FILTERS = ["cube", "kind", "sector", "tag", "date_from", "date_to", "min_strength", "limit"];
const TAG_SUGGESTIONS = 300;
const NARROW_SIZE = 0.6;
const UNLINKED_SIZE = 0.7;
// Label ranks (labels.js draws higher ranks first): the selection, then what just changed, then search hits.
const RANK = { selected: 4, changed: 3, match: 2, focus: 1, unlinked: -1 };
// The group of memories without a link, beside the clusters' keys (labels.js).
const UNLINKED = "unlinked";
const DEFAULT_LIMIT = "5000";
const BIG_GRAPH_EDGES = 10000;
const RECOUNT_MS = 1500;
const $ = (id) => document.getElementById(id);

class GraphApp {
  constructor(config) {
    this.config = config;
    this.filters = { cube: config.cube || "", ...config.filters };
    const view = new URLSearchParams(location.search);
    this.colorMode = COLOR_MODES.includes(view.get("color")) ? view.get("color") : "cluster";
    this.showUnlinked = view.get("unlinked") !== "hide";
    this.structure = { clusters: [], byNode: new Map(), unlinked: [] };
    this.unlinked = new Set();
    this.focus = null; // the key of the cluster isolated from the legend
    this.narrow = window.matchMedia("(max-width: 720px)");
    this.narrow.addEventListener("change", () => this.recolour());
    this.structureChanged = false;
    this.sizeMode = "importance";
    this.graph = new Graph({ type: "directed", multi: false, allowSelfLoops: false });
    this.total = 0;
    this.selected = null;
    this.selectedNeighbours = new Set();
    this.matches = null;
    this.flash = new Map(); // node or edge key -> time its highlight ends
    this.added = new Map(); // node id -> Date.now() when a live event added it (bench/tests)
    this.eventsApplied = 0;
    this.dragged = null;
    this.dragMoved = false;
    for (const event of ["nodeAdded", "nodeDropped", "edgeAdded", "edgeDropped"]) this.graph.on(event, () => { this.structureChanged = true; });

    this.labels = new LabelPlacer({ headings: () => this.headings(), discs: () => this.discs(), crowded: UNLINKED });
    this.renderer = new PacedSigma(this.graph, $("graph-canvas"), {
      renderEdgeLabels: false,
      enableEdgeEvents: false,
      defaultEdgeType: "line",
      labelFont: "system-ui, sans-serif",
      labelSize: 12,
      labelWeight: "500",
      labelColor: { color: "#1d2433" },
      // The grid only proposes labels (a few per cell); labels.js draws those that fit.
      labelDensity: 1,
      labelGridCellSize: 100,
      labelRenderedSizeThreshold: 7,
      defaultDrawNodeLabel: (context, data, settings) => this.labels.offer(context, data, settings),
      hideLabelsOnMove: true,
      stagePadding: 40,
      // The container can be without size for a moment (a phone layout settling, a reload at another
      // width): sigma then draws nothing instead of throwing, and the observer below redraws it.
      allowInvalidContainer: true,
      // A faded node has no label: hovering it draws no empty label box.
      defaultDrawNodeHover: (context, data, settings) => { if (data.label) drawDiscNodeHover(context, data, settings); },
      zIndex: true,
      minCameraRatio: 0.01,
      maxCameraRatio: 4,
      nodeReducer: (node, data) => this.reduceNode(node, data),
      edgeReducer: (edge, data) => this.reduceEdge(edge, data),
    });
    this.labels.attach(this.renderer);
    new ResizeObserver(() => this.resize()).observe($("graph-canvas"));
    this.layout = new Layout(this.graph, {
      onChange: (running, byItself) => this.layoutChanged(running, byItself),
      aspect: () => {
        const { width, height } = this.renderer.getDimensions();
        return width && height ? width / height : 1;
      },
      onStep: () => this.frameVisible(),
    });
    this.panel = new Panel({ app: this, element: $("graph-panel"), body: $("graph-panel-body"), title: $("graph-panel-title"), close: $("graph-panel-close") });
    this.live = new LiveFeed({
      path: config.urls.socket,
      onEvent: (message) => this.apply(message),
      onReload: () => this.load(),
      onState: (state) => this.liveState(state),
      onError: (error) => this.toast(error.message, { error: true }),
    });
    this.causal = new CausalPanel(this);
    const toast = $("graph-toast");
    for (const event of ["mouseenter", "focusin"]) toast.addEventListener(event, () => this.holdToast(true));
    for (const event of ["mouseleave", "focusout"]) toast.addEventListener(event, () => this.holdToast(false));
    this.bindInteractions();
    this.bindControls();
    $("graph-color").value = this.colorMode;
    this.renderLegend();
    this.showActiveFilters();
    $("graph-filter-box").open = !this.narrow.matches;
    this.ready = this.load();
  }

  // --- Loading -------------------------------------------------------------------------------

  snapshotUrl(limit = this.filters.limit || DEFAULT_LIMIT) {
    const params = new URLSearchParams();
    const f = this.filters;
    if (f.cube) params.set("cube", f.cube);
    if (f.kind) params.set("kind", f.kind);
    if (f.sector) params.set("sector", f.sector);
    if (f.tag) params.set("tag", f.tag.trim());
    if (f.min_strength !== "" && f.min_strength !== undefined) params.set("min_strength", f.min_strength);
    if (f.date_from) params.set("date_from", /^\d{4}-\d{2}-\d{2}$/.test(f.date_from) ? `${f.date_from}T00:00:00Z` : f.date_from);
    if (f.date_to) params.set("date_to", /^\d{4}-\d{2}-\d{2}$/.test(f.date_to) ? `${f.date_to}T23:59:59.999999Z` : f.date_to);
    params.set("limit", limit);
    return `${this.config.urls.snapshot}?${params}`;
  }

  async load() {
    $("graph-count").textContent = "Loading…";
    let snapshot;
    try {
      snapshot = await api(this.snapshotUrl());
    } catch (error) {
      this.showError(error.field ? error.message : `The graph could not be loaded: ${error.message}`);
      $("graph-count").textContent = "";
      return;
    }
    this.showError(null);
    this.layout.kill();
    this.select(null);
    this.graph.clear();
    snapshot.nodes.forEach((node, index) => this.graph.addNode(node.id, this.nodeAttributes(node, seedPosition(index))));
    for (const edge of snapshot.edges) this.addEdge(edge);
    this.focus = null;
    this.structure = { clusters: [], byNode: new Map(), unlinked: [] };
    this.restructure();
    const seeds = clusterPositions(this.structure.clusters);
    this.graph.updateEachNodeAttributes((node, attributes) => ({ ...attributes, ...seeds.get(node) }), { attributes: ["x", "y"] });
    this.layout.arrangeUnlinked();
    this.suggestTags();
    this.total = snapshot.total_nodes;
    this.capped = snapshot.total_nodes > snapshot.nodes.length;
    // A big graph hides its edges while the user pans or zooms: drawing them is most of a frame.
    this.renderer.setSetting("hideEdgesOnMove", this.graph.size > BIG_GRAPH_EDGES);
    this.renderer.setCustomBBox(this.visibleBBox());
    this.renderer.resize();
    this.renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 });
    this.measureFrames(); // the first frame of the new graph
    this.updateCount();
    $("graph-empty").hidden = this.graph.order > 0;
    const cubes = this.filters.cube ? [this.filters.cube] : this.config.cubes.map((cube) => cube.id);
    this.live.follow(cubes, snapshot.last_event_id);
    this.layout.start();
  }

  nodeAttributes(node, position) {
    return {
      ...position,
      label: preview(node.content, 48),
      content: node.content,
      kind: node.kind,
      sector: node.sector,
      importance: node.importance,
      strength: node.strength,
      salience: node.salience,
      created_at: node.created_at,
      cube: node.cube,
      tags: node.tags || [],
      keywords: node.keywords || [],
      size: this.nodeSize(node.id, node),
      color: this.colourOf(node.id, node),
    };
  }

  // A node's colour in the current mode; by cluster, a node the clusters do not know yet (just added) is grey
  // until they are found again.
  colourOf(id, node) {
    if (this.colorMode !== "cluster") return nodeColor(node, this.colorMode);
    const cluster = this.structure.byNode.get(id);
    return cluster ? cluster.color : UNLINKED_COLOR;
  }

  // Smaller as the graph grows, on a phone's narrow canvas, and for memories without a link (they are not what
  // the drawing is about).
  nodeSize(id, node) {
    const value = Math.max(0, Math.min(1, Number(node[this.sizeMode]) || 0));
    const order = this.graph.order;
    const size = order > 3000 ? 1.5 + value * 4 : order > 500 ? 2.5 + value * 6 : 4 + value * 10;
    return size * (this.narrow.matches ? NARROW_SIZE : 1) * (this.unlinked.has(id) ? UNLINKED_SIZE : 1);
  }

  addEdge(edge) {
    if (!this.graph.hasNode(edge.source) || !this.graph.hasNode(edge.target) || edge.source === edge.target) return null;
    const key = `${edge.source}>${edge.target}`;
    this.graph.mergeEdgeWithKey(key, edge.source, edge.target, {
      type: "line",
      linkType: edge.type,
      weight: edge.weight,
      size: 0.4 + edge.weight * 2.2,
      color: edgeColor(edge.type),
    });
    return key;
  }

  // --- Live events ---------------------------------------------------------------------------

  matchesFilters(node) {
    const f = this.filters;
    if (f.cube && node.cube !== f.cube) return false;
    if (f.kind && node.kind !== f.kind) return false;
    if (f.sector && node.sector !== f.sector) return false;
    if (f.tag && !(node.tags || []).includes(f.tag.trim())) return false;
    if (f.min_strength !== "" && f.min_strength !== undefined && node.strength < Number(f.min_strength)) return false;
    const created = Date.parse(node.created_at);
    if (f.date_from && created < Date.parse(/T/.test(f.date_from) ? f.date_from : `${f.date_from}T00:00:00Z`)) return false;
    if (f.date_to && created > Date.parse(/T/.test(f.date_to) ? f.date_to : `${f.date_to}T23:59:59.999Z`)) return false;
    return true;
  }

  apply(message) {
    const { kind, payload } = message;
    const changed = [];
    if (kind === "memories.created") {
      for (const node of payload.nodes) {
        if (!this.matchesFilters(node)) continue;
        if (!this.graph.hasNode(node.id)) this.total += 1;
        this.upsertNode(node, payload.edges);
        changed.push(node.id);
      }
      for (const edge of payload.edges) changed.push(this.addEdge(edge));
      const shown = payload.nodes.filter((node) => this.graph.hasNode(node.id));
      if (shown.length) this.announce(shown);
    } else if (kind === "memory.updated" || kind === "memory.boosted") {
      changed.push(...this.updateNode(payload.node));
      if (payload.outgoing_edges) changed.push(...this.replaceOutgoing(payload.node.id, payload.outgoing_edges));
    } else if (kind === "memory.relinked") {
      changed.push(payload.id, ...this.replaceOutgoing(payload.id, payload.outgoing_edges));
    } else if (kind === "memory.soft_deleted" || kind === "memory.hard_deleted" || kind === "memory.forgotten") {
      changed.push(...this.removeNode(payload.id));
    } else if (kind === "memory.restored") {
      changed.push(...this.restoreNode(payload.node, payload.edges));
    } else if (kind === "memories.merged") {
      // The sources leave the graph and their edges come back on the merged node.
      for (const id of payload.merged_from) changed.push(...this.removeNode(id));
      changed.push(...this.restoreNode(payload.node, payload.edges));
    } else if (kind === "undo.applied") {
      for (const id of payload.removed) changed.push(...this.removeNode(id));
      for (const node of payload.nodes) changed.push(...this.restoreNode(node, payload.edges));
    } else if (kind === "dream.changed" || kind === "gardener.changed") {
      // A dream's or the gardener's batch: the nodes it made or rewrote, then each changed node's outgoing edges
      // (as memory.relinked).
      for (const node of payload.nodes) changed.push(...this.updateNode(node));
      for (const entry of payload.relinked) changed.push(entry.id, ...this.replaceOutgoing(entry.id, entry.outgoing_edges));
    } else if (kind === "dream.progress") {
      this.dreamProgress(payload);
    }
    this.eventsApplied += 1;
    if (this.structureChanged) this.settleStructure();
    if (this.capped) this.recountSoon();
    if (this.shownSelection()) this.selectedNeighbours = new Set(this.graph.neighbors(this.selected));
    this.highlight(changed.filter(Boolean));
    this.updateCount();
    $("graph-empty").hidden = this.graph.order > 0;
    const touched = this.panel.memoryId && (payload.id === this.panel.memoryId || (payload.node && payload.node.id === this.panel.memoryId));
    if (touched) this.panel.refresh();
  }

  // A capped view ("showing N of M") cannot keep M exact from events alone: a memory it does not show
  // may be deleted, or change whether it matches the filters. So after events it asks the server for
  // the total again (a one-node snapshot), at most once per RECOUNT_MS.
  recountSoon() {
    if (this.recountTimer) return;
    this.recountTimer = setTimeout(async () => {
      try {
        const snapshot = await api(this.snapshotUrl(1));
        this.total = snapshot.total_nodes;
        this.updateCount();
      } catch {
        // The next event asks again; the count meanwhile is the events' own.
      } finally {
        this.recountTimer = null;
      }
    }, RECOUNT_MS);
  }

  // --- Structure -----------------------------------------------------------------------------

  // Clusters and unlinked memories of the graph as it is now, then colours, legend and count.
  restructure() {
    this.structureChanged = false;
    this.structure = findClusters(this.graph, this.structure);
    this.unlinked = new Set(this.structure.unlinked);
    if (this.focus !== null && !this.structure.clusters.some((cluster) => cluster.key === this.focus)) this.focus = null;
    this.recolour();
    this.updateCount();
  }

  // After live events that added or removed nodes or links: at once, a memory that got its first link leaves the
  // unlinked grid for a place beside its neighbours and one without links joins the grid (so that the notice of
  // a new memory shows it where it stays); once events pause, the clusters are found again.
  settleStructure() {
    const before = this.unlinked;
    this.unlinked = new Set(unlinkedNodes(this.graph));
    for (const node of before) {
      if (!this.graph.hasNode(node) || this.unlinked.has(node)) continue;
      const edges = this.graph.edges(node).map((edge) => ({ source: this.graph.source(edge), target: this.graph.target(edge) }));
      this.graph.mergeNodeAttributes(node, this.placeNear(node, edges));
    }
    if (!this.layout.running()) this.layout.arrangeUnlinked();
    this.frameVisible();
    clearTimeout(this.structureTimer);
    this.structureTimer = setTimeout(() => {
      this.structureTimer = null;
      this.restructure();
    }, RESTRUCTURE_MS);
  }

  // What the camera frames: every node, or only the linked ones while the unlinked are hidden.
  visibleBBox() {
    if (this.showUnlinked || !this.unlinked.size) return null;
    const box = linkedExtent(this.graph);
    return box ? { x: [box.minX, box.maxX], y: [box.minY, box.maxY] } : null;
  }

  frameVisible() {
    if (!this.showUnlinked) this.renderer.setCustomBBox(this.visibleBBox());
  }

  setShowUnlinked(show) {
    this.showUnlinked = show;
    this.renderer.setCustomBBox(this.visibleBBox());
    this.renderer.refresh();
    this.renderLegend();
    this.updateCount();
    this.syncUrl();
  }

  // Isolate one cluster (its key, from the legend) or none: the others fade and the camera frames it.
  focusCluster(key) {
    this.focus = key === this.focus ? null : key;
    this.renderer.refresh({ skipIndexation: true });
    this.renderLegend();
    const cluster = this.structure.clusters.find((candidate) => candidate.key === this.focus);
    if (cluster) this.centreOn(cluster.nodes);
  }

  // The clusters' names over the drawing, each above its cluster, and "Unlinked" above their grid: only over the
  // plain view by cluster (a search, a selection or a causal path has labels of its own to show).
  headings() {
    if (this.colorMode !== "cluster" || this.matches || this.shownSelection() || this.causal.shown || !this.graph.order) return [];
    const renderer = this.renderer;
    // Where most of the nodes are: the median across, and the 10th and 90th percentiles down (a node or two
    // pulled away by a link elsewhere does not move the name away from the rest).
    const spread = (nodes, outliers = 0.1) => {
      const xs = [], tops = [], bottoms = [];
      for (const node of nodes) {
        const data = renderer.getNodeDisplayData(node);
        if (!data || data.hidden) continue;
        const point = renderer.framedGraphToViewport(data);
        const radius = renderer.scaleSize(data.size);
        xs.push(point.x);
        tops.push(point.y - radius);
        bottoms.push(point.y + radius);
      }
      if (!xs.length) return null;
      const at = (values, share) => values.sort((a, b) => a - b)[Math.floor(share * (values.length - 1))];
      return { x: at(xs, 0.5), top: at(tops, outliers), bottom: at(bottoms, 1 - outliers) };
    };
    const headings = [];
    for (const cluster of this.structure.clusters) {
      if (!cluster.listed || (this.focus !== null && cluster.key !== this.focus)) continue;
      const place = spread(cluster.nodes);
      if (place) headings.push({ text: cluster.name, group: cluster.key, color: cluster.color, ...place });
    }
    if (this.showUnlinked && this.unlinked.size && this.focus === null) {
      const place = spread(this.unlinked, 0);
      if (place) headings.push({ text: `Unlinked: ${this.unlinked.size.toLocaleString()}`, group: UNLINKED, color: "#5d6778", ...place });
    }
    return headings;
  }

  // Every node drawn, where it is on the canvas, with its group: its cluster's key, or UNLINKED.
  discs() {
    const discs = [];
    const renderer = this.renderer;
    this.graph.forEachNode((node) => {
      const data = renderer.getNodeDisplayData(node);
      if (!data || data.hidden) return;
      const cluster = this.structure.byNode.get(node);
      const group = this.unlinked.has(node) ? UNLINKED : cluster ? cluster.key : null;
      discs.push({ key: node, group, ...renderer.framedGraphToViewport(data), size: renderer.scaleSize(data.size) });
    });
    return discs;
  }

  inFocus(node) {
    const cluster = this.structure.byNode.get(node);
    return Boolean(cluster) && cluster.key === this.focus;
  }

  upsertNode(node, edges = []) {
    if (this.graph.hasNode(node.id)) {
      this.graph.mergeNodeAttributes(node.id, this.nodeAttributes(node, {}));
    } else {
      this.graph.addNode(node.id, this.nodeAttributes(node, this.placeNear(node.id, edges)));
      this.added.set(node.id, Date.now());
    }
  }

  removeNode(id) {
    if (!this.graph.hasNode(id)) return [];
    const neighbours = this.graph.neighbors(id);
    this.graph.dropNode(id);
    this.total = Math.max(0, this.total - 1);
    return neighbours;
  }

  restoreNode(node, edges) {
    if (!this.matchesFilters(node)) return [];
    if (!this.graph.hasNode(node.id)) this.total += 1;
    this.upsertNode(node, edges);
    return [node.id, ...edges.map((edge) => this.addEdge(edge))];
  }

  updateNode(node) {
    if (!this.graph.hasNode(node.id)) {
      if (!this.matchesFilters(node)) return [];
      this.total += 1;
      this.upsertNode(node);
      return [node.id];
    }
    if (!this.matchesFilters(node)) {
      this.graph.dropNode(node.id);
      this.total = Math.max(0, this.total - 1);
      return [];
    }
    const { x, y } = this.graph.getNodeAttributes(node.id);
    this.graph.mergeNodeAttributes(node.id, this.nodeAttributes(node, { x, y }));
    return [node.id];
  }

  replaceOutgoing(id, edges) {
    if (!this.graph.hasNode(id)) return [];
    for (const key of this.graph.outEdges(id)) this.graph.dropEdge(key);
    return edges.map((edge) => this.addEdge(edge));
  }

  // A new node starts beside the nodes it links to (or at the edge of the drawing), so the layout
  // does not have to move.
  placeNear(id, edges) {
    const points = [];
    for (const edge of edges) {
      const other = edge.source === id ? edge.target : edge.target === id ? edge.source : null;
      if (other && this.graph.hasNode(other)) {
        const { x, y } = this.graph.getNodeAttributes(other);
        points.push([x, y]);
      }
    }
    const jitter = () => (Math.random() - 0.5) * 6;
    if (points.length) {
      const x = points.reduce((sum, p) => sum + p[0], 0) / points.length;
      const y = points.reduce((sum, p) => sum + p[1], 0) / points.length;
      return { x: x + jitter(), y: y + jitter() };
    }
    if (!this.graph.order) return { x: 0, y: 0 };
    const box = this.renderer.getBBox();
    const angle = Math.random() * Math.PI * 2;
    const cx = (box.x[0] + box.x[1]) / 2;
    const cy = (box.y[0] + box.y[1]) / 2;
    const radius = Math.max(box.x[1] - box.x[0], box.y[1] - box.y[0]) / 2 || 10;
    return { x: cx + Math.cos(angle) * radius * 0.9, y: cy + Math.sin(angle) * radius * 0.9 };
  }

  highlight(keys) {
    if (!keys.length) return;
    const until = performance.now() + FLASH_MS;
    for (const key of keys) this.flash.set(key, until);
    this.renderer.refresh();
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => this.expireFlash(), FLASH_MS + 50);
  }

  expireFlash() {
    const now = performance.now();
    for (const [key, until] of this.flash) if (until <= now) this.flash.delete(key);
    this.renderer.refresh({ skipIndexation: true });
    if (this.flash.size) this.flashTimer = setTimeout(() => this.expireFlash(), 250);
  }

  // --- Drawing state -------------------------------------------------------------------------

  // The selected memory, while it is in the graph (a deleted one stays selected in the panel, so
  // that restoring it selects it again, but fades nothing meanwhile).
  shownSelection() {
    return this.selected && this.graph.hasNode(this.selected) ? this.selected : null;
  }

  reduceNode(node, data) {
    const causal = this.causal.reduceNode(node, data);
    if (causal) return causal;
    if (!this.showUnlinked && this.unlinked.has(node) && node !== this.shownSelection()) return { ...data, hidden: true };
    const picked = this.panel.pairId === node;
    const selected = this.shownSelection();
    const focused = this.focus !== null;
    if (!selected && !this.matches && !this.flash.size && !picked && !focused && !this.unlinked.has(node)) return data;
    const result = { ...data };
    // Memories without a link are labelled where the clusters leave room.
    if (this.unlinked.has(node)) result.labelRank = RANK.unlinked;
    const fade = () => {
      result.color = FADED_NODE;
      result.label = "";
      result.zIndex = 0;
    };
    if (focused) {
      if (this.inFocus(node)) {
        result.zIndex = 1;
        result.labelRank = RANK.focus;
      } else {
        fade();
      }
    }
    if (this.matches) {
      if (this.matches.has(node)) {
        result.color = data.color;
        result.label = data.label;
        result.forceLabel = true;
        result.labelRank = RANK.match;
        result.zIndex = 1;
      } else {
        fade();
      }
    }
    if (selected) {
      if (node === selected) {
        result.highlighted = true;
        result.forceLabel = true;
        result.labelRank = RANK.selected;
        result.label = data.label;
        result.color = data.color;
        result.size = data.size * 1.5;
        result.zIndex = 2;
      } else if (this.selectedNeighbours.has(node)) {
        result.zIndex = Math.max(result.zIndex || 0, 1);
      } else if (!this.matches || !this.matches.has(node)) {
        fade();
      }
    }
    if (picked) {
      result.highlighted = true;
      result.forceLabel = true;
      result.labelRank = RANK.selected;
      result.label = data.label;
      result.color = data.color;
      result.size = data.size * 1.5;
      result.zIndex = 2;
    }
    if (this.flash.has(node)) {
      result.forceLabel = true;
      result.labelRank = RANK.changed;
      result.label = data.label;
      result.color = HIGHLIGHT;
      result.size = Math.max(data.size * 1.6, 5);
      result.zIndex = 3;
    }
    return result;
  }

  reduceEdge(edge, data) {
    const causal = this.causal.reduceEdge(edge, data);
    if (causal) return causal;
    const selected = this.shownSelection();
    if (!selected && !this.matches && !this.flash.size && this.focus === null) return data;
    if (this.flash.has(edge)) return { ...data, color: HIGHLIGHT, size: data.size + 1 };
    if (selected) {
      const [source, target] = this.graph.extremities(edge);
      if (source === selected || target === selected) return { ...data, color: "#6b7280", size: data.size + 0.5 };
      return { ...data, color: FADED_EDGE };
    }
    if (this.matches) return { ...data, color: FADED_EDGE };
    const [source, target] = this.graph.extremities(edge);
    if (!this.inFocus(source) || !this.inFocus(target)) return { ...data, color: FADED_EDGE };
    return data;
  }

  select(id, { centre = false } = {}) {
    this.selected = id && this.graph.hasNode(id) ? id : null;
    this.selectedNeighbours = this.selected ? new Set(this.graph.neighbors(this.selected)) : new Set();
    if (id) {
      this.panel.open(id);
      if (centre) this.centreOn([id]);
    } else {
      this.panel.hide();
    }
    this.renderer.refresh({ skipIndexation: true });
  }

  centreOn(ids) {
    // A node added a moment ago may not be drawn yet: draw what is owed, so that its place is known.
    this.renderer.flush();
    const points = ids.map((id) => this.renderer.getNodeDisplayData(id)).filter(Boolean);
    if (!points.length) return;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const span = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
    const camera = this.renderer.getCamera();
    camera.animate({
      x: (Math.max(...xs) + Math.min(...xs)) / 2,
      y: (Math.max(...ys) + Math.min(...ys)) / 2,
      ratio: Math.max(0.05, Math.min(1, span * 1.3 || Math.min(camera.ratio, 0.25))),
    }, { duration: 450 });
  }

  recolour() {
    this.graph.updateEachNodeAttributes((node, attributes) => ({
      ...attributes, color: this.colourOf(node, attributes), size: this.nodeSize(node, attributes),
    }));
    this.renderLegend();
  }

  resize() {
    this.renderer.resize();
    this.renderer.refresh();
  }

  // What a frame of this graph costs decides whether pans redraw or glide (frames.js).
  measureFrames() {
    if (!this.graph.order) {
      this.renderer.refresh();
      return;
    }
    this.frameCost = this.renderer.measureFrame();
    $("graph-canvas").dataset.frames = this.renderer.gliding() ? "glide" : "redraw";
  }

  // --- Interaction ---------------------------------------------------------------------------

  bindInteractions() {
    const renderer = this.renderer;
    renderer.on("downNode", ({ node }) => {
      this.dragged = node;
      this.dragMoved = false;
    });
    renderer.on("moveBody", ({ event }) => {
      if (!this.dragged) return;
      if (!this.dragMoved) {
        if (this.layout.running()) this.layout.stop();
        // Keep the framing while a node is dragged past the drawing's edge ("Fit" lets go of it).
        if (!renderer.getCustomBBox()) renderer.setCustomBBox(renderer.getBBox());
      }
      this.dragMoved = true;
      const position = renderer.viewportToGraph(event);
      this.graph.mergeNodeAttributes(this.dragged, { x: position.x, y: position.y });
      event.preventSigmaDefault();
      event.original.preventDefault();
      event.original.stopPropagation();
    });
    const release = () => {
      this.dragged = null;
    };
    renderer.on("upNode", release);
    renderer.on("upStage", release);
    renderer.on("clickNode", ({ node, event }) => {
      if (this.dragMoved) {
        this.dragMoved = false;
        return;
      }
      const original = event.original || {};
      if (this.selected && node !== this.selected && (original.shiftKey || this.panel.picking)) {
        this.panel.setPair(node);
        return;
      }
      this.select(node);
    });
    renderer.on("clickStage", () => {
      if (this.selected && !this.panel.picking) this.select(null);
    });
    renderer.on("enterNode", () => { $("graph-canvas").style.cursor = "pointer"; });
    renderer.on("leaveNode", () => { $("graph-canvas").style.cursor = ""; });
  }

  bindControls() {
    const form = $("graph-filters");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(form);
      for (const name of FILTERS) this.filters[name] = String(data.get(name) ?? "").trim();
      this.syncUrl();
      this.showActiveFilters();
      // On a phone the open filters would keep the graph below the fold.
      if (this.narrow.matches) $("graph-filter-box").open = false;
      this.clearSearch();
      this.ready = this.load();
    });
    let timer = null;
    $("graph-search").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.search($("graph-search").value), 200);
    });
    $("graph-search").addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        clearTimeout(timer);
        this.search($("graph-search").value, { next: true });
      }
    });
    $("graph-color").addEventListener("change", (event) => {
      this.colorMode = event.target.value;
      this.recolour();
      this.syncUrl();
    });
    $("graph-size").addEventListener("change", (event) => { this.sizeMode = event.target.value; this.recolour(); });
    $("graph-layout").addEventListener("click", () => (this.layout.running() ? this.layout.stop() : this.layout.start()));
    $("graph-fit").addEventListener("click", () => {
      this.renderer.setCustomBBox(this.visibleBBox());
      this.renderer.getCamera().animatedReset({ duration: 400 });
    });
  }

  search(text, { next = false } = {}) {
    const query = text.trim().toLowerCase();
    if (!query) {
      this.clearSearch();
      return;
    }
    const found = this.graph.filterNodes((node, attributes) => String(attributes.content).toLowerCase().includes(query));
    this.matches = new Set(found);
    $("graph-search-count").textContent = found.length ? `${found.length} match${found.length === 1 ? "" : "es"}` : "No match";
    this.renderer.refresh({ skipIndexation: true });
    if (!found.length) return;
    if (next) {
      this.searchIndex = ((this.searchIndex ?? -1) + 1) % found.length;
      this.select(found[this.searchIndex], { centre: true });
    } else {
      this.searchIndex = -1;
      this.centreOn(found);
    }
  }

  clearSearch() {
    this.matches = null;
    $("graph-search").value = "";
    $("graph-search-count").textContent = "";
    this.renderer.refresh({ skipIndexation: true });
  }

  // --- Page chrome ---------------------------------------------------------------------------

  cubeName(id) {
    const cube = this.config.cubes.find((candidate) => candidate.id === id);
    return cube ? cube.name : id;
  }

  updateCount() {
    const shown = this.graph.order;
    const total = Math.max(this.total, shown);
    const links = this.graph.size;
    const hidden = this.showUnlinked ? 0 : this.unlinked.size;
    $("graph-count").textContent = (shown < total
      ? `Showing ${shown.toLocaleString()} of ${total.toLocaleString()} memories (newest first) · ${links.toLocaleString()} links`
      : `${shown.toLocaleString()} memor${shown === 1 ? "y" : "ies"} · ${links.toLocaleString()} link${links === 1 ? "" : "s"}`)
      + (hidden ? ` · ${hidden.toLocaleString()} unlinked hidden` : "");
  }

  // The query string of the view shown: the filters applied and how it is drawn, so that a link to it opens
  // the same view.
  syncUrl() {
    const query = new URLSearchParams();
    for (const name of FILTERS) {
      const value = this.filters[name];
      if (value && !(name === "limit" && value === DEFAULT_LIMIT)) query.set(name, value);
    }
    if (this.colorMode !== "cluster") query.set("color", this.colorMode);
    if (!this.showUnlinked) query.set("unlinked", "hide");
    history.replaceState(null, "", query.toString() ? `?${query}` : location.pathname);
  }

  // How many filters apply, on the panel's summary: it is folded on a phone.
  showActiveFilters() {
    const active = FILTERS.filter((name) => name !== "limit" && this.filters[name]).length;
    $("graph-filter-active").textContent = active ? `${active} on` : "";
  }

  // The tags of the memories shown, most used first, as suggestions for the tag filter.
  suggestTags() {
    const counts = new Map();
    this.graph.forEachNode((node, { tags }) => {
      for (const tag of tags) counts.set(tag, (counts.get(tag) || 0) + 1);
    });
    const tags = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TAG_SUGGESTIONS);
    $("graph-tags").replaceChildren(...tags.map(([tag]) => h("option", { value: tag })));
  }

  liveState(state) {
    const element = $("graph-live");
    element.dataset.state = state;
    element.textContent = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", "signed-out": "Signed out: reload the page" }[state];
  }

  layoutChanged(running, byItself) {
    if (byItself) this.measureFrames();
    const button = $("graph-layout");
    button.textContent = running ? "Stop layout" : "Run layout";
    button.setAttribute("aria-pressed", running ? "true" : "false");
  }

  renderLegend() {
    const group = (title, items, attributes = {}) => h("div", { class: "legend-group", ...attributes },
      h("span", { class: "legend-title" }, title), ...items);
    const dot = (color) => h("span", { class: "legend-dot", style: `background:${color}` });
    const groups = [];
    if (this.colorMode === "cluster") {
      groups.push(group("Clusters", this.clusterItems(dot), { id: "graph-clusters" }));
    } else {
      const colours = this.colorMode === "kind" ? KIND_COLORS : SECTOR_COLORS;
      const names = this.colorMode === "kind" ? this.config.kinds : this.config.sectors;
      groups.push(group(this.colorMode === "kind" ? "Kind" : "Sector", names.map((entry) =>
        h("span", { class: "legend-item" }, dot(colours[entry.value] || "#64748b"), entry.label))));
    }
    if (this.unlinked.size) {
      const count = this.unlinked.size.toLocaleString();
      groups.push(group("", [
        h("span", { class: "legend-item", id: "graph-unlinked" },
          this.colorMode === "cluster" ? dot(UNLINKED_COLOR) : null,
          `${count} unlinked (no links; set apart)`),
        h("button", { type: "button", class: "button button-quiet button-small", onclick: () => this.setShowUnlinked(!this.showUnlinked) },
          this.showUnlinked ? "Hide unlinked" : "Show unlinked"),
      ]));
    }
    groups.push(
      group("Links", this.config.linkTypes.map((entry) =>
        h("span", { class: "legend-item" }, h("span", { class: "legend-line", style: `background:${LINK_COLORS[entry.value]}` }), entry.label))),
      group("Size", [h("span", { class: "legend-item" }, this.sizeMode), h("span", { class: "legend-item muted" }, "· link width: weight")]),
      group("", [h("span", { class: "legend-item" }, dot(HIGHLIGHT), "just changed")]),
    );
    $("graph-legend").replaceChildren(...groups);
  }

  // One button per listed cluster (its name, its size): pressing it isolates the cluster; then the other
  // clusters, and the small ones, counted.
  clusterItems(dot) {
    const clusters = this.structure.clusters;
    if (!clusters.length) return [h("span", { class: "legend-item muted" }, "no links, so no clusters")];
    const items = clusters.filter((cluster) => cluster.listed).map((cluster) => h("button", {
      type: "button", class: "legend-item legend-button", "aria-pressed": cluster.key === this.focus ? "true" : "false",
      title: `${cluster.name}: ${cluster.nodes.length} memories. Press to show only this cluster; again to show all.`,
      onclick: () => this.focusCluster(cluster.key),
    }, dot(cluster.color), h("span", { class: "legend-name" }, cluster.name), h("span", { class: "legend-count" }, String(cluster.nodes.length))));
    const unlisted = clusters.filter((cluster) => cluster.coloured && !cluster.listed);
    if (unlisted.length) {
      const memories = unlisted.reduce((sum, cluster) => sum + cluster.nodes.length, 0);
      items.push(h("span", { class: "legend-item" },
        `${unlisted.length} more cluster${unlisted.length === 1 ? "" : "s"} (${memories} memories)`));
    }
    const small = clusters.filter((cluster) => !cluster.coloured);
    if (small.length) {
      const memories = small.reduce((sum, cluster) => sum + cluster.nodes.length, 0);
      items.push(h("span", { class: "legend-item" }, dot(SMALL_CLUSTER_COLOR),
        `${small.length} small cluster${small.length === 1 ? "" : "s"} (${memories} memories)`));
    }
    return items;
  }

  // One quiet line beside the count while a dream works; it says how the dream ended, then goes.
  dreamProgress(progress) {
    const element = $("graph-dream");
    const step = DREAM_STEPS[progress.phase] || progress.phase || "";
    clearTimeout(this.dreamTimer);
    if (progress.status === "running") {
      element.textContent = `· Dreaming: ${step}, batch ${progress.batch}`;
    } else {
      element.textContent = `· Dream ${progress.status.replace("_", " ")} after ${progress.batch} batch${progress.batch === 1 ? "" : "es"}`;
      this.dreamTimer = setTimeout(() => { element.hidden = true; }, 8000);
    }
    element.hidden = false;
  }

  // New memories on the live feed: a notice that, pressed, centres the camera on the first one and opens it.
  announce(nodes) {
    const [first] = nodes;
    const more = nodes.length > 1 ? ` (+${nodes.length - 1} more)` : "";
    this.toast(`New: ${preview(first.content, 70)}${more}`, { action: () => this.reveal(first.id) });
  }

  // Select a node and bring it into view, whatever hides it now (the unlinked hidden, another cluster isolated).
  reveal(id) {
    if (!this.graph.hasNode(id)) return;
    if (!this.showUnlinked && this.unlinked.has(id)) this.setShowUnlinked(true);
    if (this.focus !== null && !this.inFocus(id)) this.focusCluster(this.focus);
    this.select(id, { centre: true });
  }

  // A short message over the graph; with an action, the message is a button and stays longer (and while the
  // pointer or focus is on it).
  toast(text, { error = false, action = null } = {}) {
    const element = $("graph-toast");
    if (action) {
      element.replaceChildren(h("button", { type: "button", class: "graph-toast-action", title: "Show it in the graph",
        onclick: () => { element.hidden = true; action(); } }, text, h("span", { class: "graph-toast-hint" }, "Show ›")));
    } else {
      element.textContent = text;
    }
    element.classList.toggle("graph-toast-error", error);
    element.hidden = false;
    this.toastWait = error ? 6000 : action ? NOTICE_MS : 3000;
    this.holdToast(false);
  }

  holdToast(held) {
    clearTimeout(this.toastTimer);
    if (!held) this.toastTimer = setTimeout(() => { $("graph-toast").hidden = true; }, this.toastWait);
  }

  showError(text) {
    const element = $("graph-error");
    element.textContent = text || "";
    element.hidden = !text;
  }
}

const config = JSON.parse($("graph-config").textContent);
window.engramGraph = new GraphApp(config);
