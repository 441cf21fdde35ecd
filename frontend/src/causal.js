// The causal path explorer of the graph page (templates/graph/graph.html, "Causal paths"): two concepts, typed
// or picked from the nodes on screen, go to find_causal_path over REST (GET /api/v1/cognition/causal/path/); the best
// path and its alternatives are drawn on the graph, with the confidence and the narrative. "Effects of" asks
// expand_causal_path (GET .../causal/expand/) from the first concept. An unresolvable concept shows the API's
// message, which names the nearest nodes.
import { api } from "./api.js";
import { h, preview } from "./dom.js";

const $ = (id) => document.getElementById(id);

export class CausalPanel {
  constructor(app) {
    this.app = app;
    this.urls = app.config.urls;
    this.shown = null; // {best: [node ids], alternatives: [[node ids]], edges: Set of edge keys, alternativeEdges}
    this.form = $("causal-form");
    this.result = $("causal-result");
    this.error = $("causal-error");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.findPath();
    });
    $("causal-effects").addEventListener("click", () => this.effects());
    $("causal-clear").addEventListener("click", () => this.clear());
    for (const id of ["causal-start", "causal-end"]) $(id).addEventListener("focus", () => this.suggest());
  }

  // The nodes on screen as suggestions: a picked one is sent by id, anything else as words.
  suggest() {
    const options = [];
    this.app.graph.forEachNode((node, attributes) => {
      if (options.length < 500) options.push(h("option", { value: attributes.label }));
    });
    $("causal-nodes").replaceChildren(...options);
  }

  concept(input) {
    const text = input.value.trim();
    const found = this.app.graph.findNode((node, attributes) => attributes.label === text);
    return found || text;
  }

  async findPath() {
    const params = new URLSearchParams({
      start_concept: this.concept($("causal-start")),
      end_concept: this.concept($("causal-end")),
      path_type: $("causal-type").value,
      max_hops: $("causal-hops").value,
      include_alternatives: "true",
    });
    const answer = await this.ask(`${this.urls.causalPath}?${params}`);
    if (!answer) return;
    const alternatives = answer.alternative_paths || [];
    this.draw(answer.path.map((step) => step.node_id), alternatives.map((path) => path.map((step) => step.node_id)));
    const items = [
      h("p", { class: "causal-summary" }, answer.path_found
        ? `Path confidence ${answer.path_confidence.toFixed(2)} over ${answer.hop_count} link${answer.hop_count === 1 ? "" : "s"}`
        : "No path"),
      h("p", { class: "small" }, `From “${answer.start_match.node_name}” to “${answer.end_match.node_name}”.`),
      h("p", { class: "causal-narrative" }, answer.narrative),
    ];
    if (answer.path_found) items.push(this.steps(answer.path, "causal-best"));
    alternatives.forEach((path, index) => {
      items.push(h("p", { class: "small muted" }, `Alternative ${index + 1}, confidence ${answer.alternative_confidences[index].toFixed(2)}`));
      items.push(this.steps(path, "causal-alternative"));
    });
    if (answer.truncated) items.push(h("p", { class: "small muted" }, "The search hit its bound before it saw the whole graph: a longer path may exist."));
    this.show(items);
  }

  async effects() {
    const params = new URLSearchParams({ concept: this.concept($("causal-start")), direction: "effects", max_hops: $("causal-hops").value });
    const answer = await this.ask(`${this.urls.causalExpand}?${params}`);
    if (!answer) return;
    this.draw([answer.concept.node_id], answer.paths.map((path) => path.nodes));
    const items = [h("p", { class: "causal-summary" }, `Effects of “${answer.concept.node_name}”: ${answer.paths.length}`)];
    if (!answer.paths.length) items.push(h("p", { class: "causal-narrative" }, "Nothing follows from it along causal links."));
    for (const path of answer.paths.slice(0, 10)) {
      items.push(h("p", { class: "causal-narrative small" }, `${path.strength.toFixed(2)} · ${path.narrative}`));
    }
    this.show(items);
  }

  async ask(url) {
    this.error.hidden = true;
    this.result.replaceChildren(h("p", { class: "muted small" }, "Searching…"));
    try {
      return await api(url);
    } catch (error) {
      this.error.textContent = error.message;
      this.error.hidden = false;
      this.result.replaceChildren();
      this.draw([], []);
      return null;
    }
  }

  steps(path, className) {
    return h("ol", { class: `causal-steps ${className}` }, ...path.map((step) => h("li", {},
      h("a", { href: this.urls.page.replace("MEMORY_ID", step.node_id) }, preview(step.node_name, 70)),
      step.edge_type ? h("span", { class: "muted small" }, ` → ${step.link_type || step.edge_type} ${Number(step.edge_weight).toFixed(2)}${step.direction === "backward" ? " (against the link)" : ""}`) : "")));
  }

  show(items) {
    this.result.replaceChildren(...items);
  }

  edgeKeys(path) {
    const keys = new Set();
    for (let i = 0; i + 1 < path.length; i += 1) {
      keys.add(`${path[i]}>${path[i + 1]}`);
      keys.add(`${path[i + 1]}>${path[i]}`);
    }
    return keys;
  }

  draw(best, alternatives) {
    this.shown = best.length || alternatives.length ? {
      best: new Set(best),
      alternatives: new Set(alternatives.flat()),
      edges: this.edgeKeys(best),
      alternativeEdges: new Set(alternatives.flatMap((path) => [...this.edgeKeys(path)])),
    } : null;
    $("causal-clear").hidden = !this.shown;
    this.app.renderer.refresh({ skipIndexation: true });
    const ids = [...best, ...alternatives.flat()].filter((id) => this.app.graph.hasNode(id));
    if (ids.length) this.app.centreOn(ids);
  }

  clear() {
    this.draw([], []);
    this.result.replaceChildren();
    this.error.hidden = true;
  }

  // Drawing: the best path's nodes and links in the highlight colour, the alternatives' in a second one, the rest faded.
  reduceNode(node, data) {
    if (!this.shown) return null;
    if (this.shown.best.has(node)) return { ...data, forceLabel: true, labelRank: 5, color: BEST, size: Math.max(data.size * 1.5, 6), zIndex: 3 };
    if (this.shown.alternatives.has(node)) return { ...data, color: ALTERNATIVE, size: Math.max(data.size * 1.2, 5), zIndex: 2 };
    return { ...data, color: FADED, label: "", zIndex: 0 };
  }

  reduceEdge(edge, data) {
    if (!this.shown) return null;
    if (this.shown.edges.has(edge)) return { ...data, color: BEST, size: data.size + 2.5, zIndex: 2 };
    if (this.shown.alternativeEdges.has(edge)) return { ...data, color: ALTERNATIVE, size: data.size + 1.2, zIndex: 1 };
    return { ...data, color: FADED_LINK };
  }

  // For tests and the panel: what is drawn now.
  state() {
    return this.shown ? { best: [...this.shown.best], alternatives: [...this.shown.alternatives], edges: [...this.shown.edges] } : null;
  }
}

const BEST = "#dc2626";
const ALTERNATIVE = "#f59e0b";
const FADED = "#e5e7eb";
const FADED_LINK = "#f1f5f9";
