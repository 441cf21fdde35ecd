// The dashboard's live memory graph (templates/graph/graph.html).
//
// Nodes are memories, edges links; sigma.js draws them with WebGL and ForceAtlas2 lays them out in
// a web worker (frames.js: how panning stays smooth when drawing a frame is slow). The page loads a snapshot (GET /api/v1/graph/snapshot/ with the filters), follows
// /ws/graph/ for changes (see live.js), and applies each event to the graphology graph at once,
// highlighting what changed for a few seconds. window.engramGraph exposes the state to tests.
import Graph from "graphology";
import { drawDiscNodeHover } from "sigma/rendering";

import { api } from "./api.js";
import { CausalPanel } from "./causal.js";
import { edgeColor, FADED_EDGE, FADED_NODE, HIGHLIGHT, KIND_COLORS, LINK_COLORS, nodeColor, SECTOR_COLORS } from "./colors.js";
import { h, preview } from "./dom.js";
import { PacedSigma } from "./frames.js";
import { Layout, seedPosition } from "./layout.js";
import { LiveFeed } from "./live.js";
import { Panel } from "./panel.js";

const DREAM_STEPS = {
  nrem_replay: "NREM replay", nrem_link: "NREM link", nrem_dedupe: "NREM dedupe",
  nrem_summarise: "NREM summaries", nrem_commit: "NREM scratchpad", rem: "REM",
};
const FLASH_MS = 3000;
const DEFAULT_LIMIT = "5000";
const BIG_GRAPH_EDGES = 10000;
const RECOUNT_MS = 1500;
const $ = (id) => document.getElementById(id);

class GraphApp {
  constructor(config) {
    this.config = config;
    this.filters = { cube: config.cube || "", ...config.filters };
    this.colorMode = "sector";
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

    this.renderer = new PacedSigma(this.graph, $("graph-canvas"), {
      renderEdgeLabels: false,
      enableEdgeEvents: false,
      defaultEdgeType: "line",
      labelFont: "system-ui, sans-serif",
      labelSize: 12,
      labelWeight: "500",
      labelColor: { color: "#1d2433" },
      labelDensity: 0.6,
      labelGridCellSize: 140,
      labelRenderedSizeThreshold: 9,
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
    new ResizeObserver(() => this.resize()).observe($("graph-canvas"));
    this.layout = new Layout(this.graph, (running, byItself) => this.layoutChanged(running, byItself));
    this.panel = new Panel({ app: this, element: $("graph-panel"), body: $("graph-panel-body"), title: $("graph-panel-title"), close: $("graph-panel-close") });
    this.live = new LiveFeed({
      path: config.urls.socket,
      onEvent: (message) => this.apply(message),
      onReload: () => this.load(),
      onState: (state) => this.liveState(state),
      onError: (error) => this.toast(error.message, true),
    });
    this.causal = new CausalPanel(this);
    this.bindInteractions();
    this.bindControls();
    this.renderLegend();
    const filtered = ["kind", "sector", "date_from", "date_to", "min_strength"].some((name) => this.filters[name]);
    $("graph-filter-box").open = filtered || window.matchMedia("(min-width: 721px)").matches;
    this.ready = this.load();
  }

  // --- Loading -------------------------------------------------------------------------------

  snapshotUrl(limit = this.filters.limit || DEFAULT_LIMIT) {
    const params = new URLSearchParams();
    const f = this.filters;
    if (f.cube) params.set("cube", f.cube);
    if (f.kind) params.set("kind", f.kind);
    if (f.sector) params.set("sector", f.sector);
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
    this.total = snapshot.total_nodes;
    this.capped = snapshot.total_nodes > snapshot.nodes.length;
    // A big graph hides its edges while the user pans or zooms: drawing them is most of a frame.
    this.renderer.setSetting("hideEdgesOnMove", this.graph.size > BIG_GRAPH_EDGES);
    this.renderer.setCustomBBox(null);
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
      size: this.nodeSize(node),
      color: nodeColor(node, this.colorMode),
    };
  }

  nodeSize(node) {
    const value = Math.max(0, Math.min(1, Number(node[this.sizeMode]) || 0));
    const order = this.graph.order;
    if (order > 3000) return 1.5 + value * 4;
    if (order > 500) return 2.5 + value * 6;
    return 4 + value * 10;
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
      if (changed.length) this.toast(`New: ${preview(payload.nodes[0].content, 70)}`);
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
    const picked = this.panel.pairId === node;
    const selected = this.shownSelection();
    if (!selected && !this.matches && !this.flash.size && !picked) return data;
    const result = { ...data };
    if (this.matches) {
      if (this.matches.has(node)) {
        result.highlighted = true;
        result.zIndex = 1;
      } else {
        result.color = FADED_NODE;
        result.label = "";
        result.zIndex = 0;
      }
    }
    if (selected) {
      if (node === selected) {
        result.highlighted = true;
        result.size = data.size * 1.5;
        result.zIndex = 2;
      } else if (this.selectedNeighbours.has(node)) {
        result.zIndex = 1;
      } else if (!this.matches || !this.matches.has(node)) {
        result.color = FADED_NODE;
        result.label = "";
      }
    }
    if (picked) {
      result.highlighted = true;
      result.color = data.color;
      result.size = data.size * 1.5;
      result.zIndex = 2;
    }
    if (this.flash.has(node)) {
      result.highlighted = true;
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
    if (!selected && !this.matches && !this.flash.size) return data;
    if (this.flash.has(edge)) return { ...data, color: HIGHLIGHT, size: data.size + 1 };
    if (selected) {
      const [source, target] = this.graph.extremities(edge);
      if (source === selected || target === selected) return { ...data, color: "#6b7280", size: data.size + 0.5 };
      return { ...data, color: FADED_EDGE };
    }
    if (this.matches) return { ...data, color: FADED_EDGE };
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
      ...attributes, color: nodeColor(attributes, this.colorMode), size: this.nodeSize(attributes),
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
      for (const name of ["cube", "kind", "sector", "date_from", "date_to", "min_strength", "limit"]) {
        this.filters[name] = String(data.get(name) ?? "");
      }
      const query = new URLSearchParams([...data].filter(([, value]) => value !== ""));
      history.replaceState(null, "", query.toString() ? `?${query}` : location.pathname);
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
    $("graph-color").addEventListener("change", (event) => { this.colorMode = event.target.value; this.recolour(); });
    $("graph-size").addEventListener("change", (event) => { this.sizeMode = event.target.value; this.recolour(); });
    $("graph-layout").addEventListener("click", () => (this.layout.running() ? this.layout.stop() : this.layout.start()));
    $("graph-fit").addEventListener("click", () => {
      this.renderer.setCustomBBox(null);
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
    $("graph-count").textContent = shown < total
      ? `Showing ${shown.toLocaleString()} of ${total.toLocaleString()} memories (newest first) · ${links.toLocaleString()} links`
      : `${shown.toLocaleString()} memor${shown === 1 ? "y" : "ies"} · ${links.toLocaleString()} link${links === 1 ? "" : "s"}`;
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
    const colours = this.colorMode === "kind" ? KIND_COLORS : SECTOR_COLORS;
    const names = this.colorMode === "kind" ? this.config.kinds : this.config.sectors;
    const group = (title, items) => h("div", { class: "legend-group" }, h("span", { class: "legend-title" }, title), ...items);
    $("graph-legend").replaceChildren(
      group(this.colorMode === "kind" ? "Kind" : "Sector", names.map((entry) =>
        h("span", { class: "legend-item" }, h("span", { class: "legend-dot", style: `background:${colours[entry.value] || "#64748b"}` }), entry.label))),
      group("Links", this.config.linkTypes.map((entry) =>
        h("span", { class: "legend-item" }, h("span", { class: "legend-line", style: `background:${LINK_COLORS[entry.value]}` }), entry.label))),
      group("Size", [h("span", { class: "legend-item" }, this.sizeMode), h("span", { class: "legend-item muted" }, "· link width: weight")]),
      group("", [h("span", { class: "legend-item" }, h("span", { class: "legend-dot", style: `background:${HIGHLIGHT}` }), "just changed")]),
    );
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

  toast(text, error = false) {
    const element = $("graph-toast");
    element.textContent = text;
    element.classList.toggle("graph-toast-error", error);
    element.hidden = false;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { element.hidden = true; }, error ? 6000 : 3000);
  }

  showError(text) {
    const element = $("graph-error");
    element.textContent = text || "";
    element.hidden = !text;
  }
}

const config = JSON.parse($("graph-config").textContent);
window.engramGraph = new GraphApp(config);
