// The side panel: a memory's content, metadata, scores, links and neighbours, and what the user may
// do with it. Every action is a REST call to the same services as the rest of Engram; the graph
// itself changes when the resulting event arrives on the socket (as it would for any other client).
import { api, fill } from "./api.js";
import { h, formatDate, preview } from "./dom.js";

export class Panel {
  constructor({ app, element, body, title, close }) {
    this.app = app;
    this.element = element;
    this.body = body;
    this.title = title;
    this.memoryId = null;
    this.memory = null;
    this.pairId = null;
    this.picking = false;
    this.loading = 0;
    close.addEventListener("click", () => app.select(null));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !this.element.hidden) app.select(null);
    });
  }

  urls() {
    return this.app.config.urls;
  }

  async open(memoryId) {
    this.memoryId = memoryId;
    this.pairId = null;
    this.picking = false;
    this.element.hidden = false;
    this.app.resize();
    await this.refresh();
  }

  hide() {
    this.memoryId = null;
    this.memory = null;
    this.pairId = null;
    this.picking = false;
    this.element.hidden = true;
    this.app.resize();
  }

  async refresh() {
    const id = this.memoryId;
    if (!id) return;
    const ticket = ++this.loading;
    try {
      const [memory, links] = await Promise.all([
        api(fill(this.urls().memory, { MEMORY_ID: id })),
        api(`${fill(this.urls().links, { MEMORY_ID: id })}?limit=50`),
      ]);
      if (ticket !== this.loading || id !== this.memoryId) return;
      this.memory = memory;
      this.render(memory, links.results || []);
    } catch (error) {
      if (ticket !== this.loading) return;
      this.memory = null;
      this.body.replaceChildren(h("p", { class: "message message-error", role: "alert" }, error.message));
    }
  }

  setPair(otherId) {
    this.pairId = otherId;
    this.picking = false;
    if (this.memory) this.renderPair();
    this.app.renderer.refresh({ skipIndexation: true });
  }

  startPicking() {
    this.picking = true;
    this.pairId = null;
    this.renderPair();
    this.app.renderer.refresh({ skipIndexation: true });
  }

  render(memory, links) {
    const deleted = Boolean(memory.deleted_at);
    this.title.textContent = deleted ? "Deleted memory" : "Memory";
    const graph = this.app.graph;
    const neighbours = graph.hasNode(memory.id) ? graph.neighbors(memory.id) : [];
    this.body.replaceChildren(...[
      deleted ? h("p", { class: "message message-warning" }, `Deleted ${formatDate(memory.deleted_at)}: hidden from the graph, search and retrieval until restored.`) : null,
      h("p", { class: "graph-panel-content" }, memory.content),
      h("div", { class: "meta" },
        h("span", { class: `badge sector-${memory.primary_sector}` }, memory.primary_sector),
        h("span", { class: "badge" }, memory.kind),
        ...(memory.tags || []).map((tag) => h("span", { class: "tag" }, `#${tag}`))),
      h("div", { class: "graph-scores" },
        ...["importance", "salience", "strength"].map((name) => bar(name, memory[name]))),
      h("dl", { class: "details graph-details" },
        ...detail("Cube", this.app.cubeName(memory.cube)),
        ...detail("Created", formatDate(memory.created_at)),
        ...detail("Updated", formatDate(memory.updated_at)),
        ...detail("Category", memory.category || "—"),
        ...detail("Keywords", (memory.keywords || []).join(", ") || "—"),
        ...detail("Accessed", `${memory.access_count} time${memory.access_count === 1 ? "" : "s"}`),
        ...(memory.agent_id ? detail("Agent", memory.agent_id) : []),
        ...(memory.session_id ? detail("Session", memory.session_id) : [])),
      this.actions(memory),
      h("div", { id: "graph-pair" }),
      h("h3", {}, `Links (${links.length})`),
      links.length ? h("ul", { class: "graph-links" }, ...links.map((link) => this.linkItem(memory, link))) :
        h("p", { class: "muted small" }, "No links yet."),
      h("p", { class: "muted small" }, `${neighbours.length} neighbour${neighbours.length === 1 ? "" : "s"} shown in the graph.`),
    ].filter(Boolean));
    this.renderPair();
  }

  actions(memory) {
    const id = memory.id;
    const urls = this.urls();
    if (memory.deleted_at) {
      return h("div", { class: "actions graph-actions" },
        h("button", { type: "button", class: "button", onclick: () => this.act("restore", () =>
          api(fill(urls.restore, { MEMORY_ID: id }), { method: "POST" }), "Memory restored.") }, "Restore"));
    }
    return h("div", { class: "actions graph-actions" },
      h("a", { class: "button button-small", href: fill(urls.edit, { MEMORY_ID: id }) }, "Edit"),
      h("button", { type: "button", class: "button button-quiet button-small", title: "Raise importance by 0.1",
        onclick: () => this.act("boost", () => api(fill(urls.boost, { MEMORY_ID: id }), { method: "POST", body: {} }),
          "Importance raised by 0.1.") }, "Boost"),
      h("button", { type: "button", class: "button button-quiet button-small", title: "Hide it; you can restore it",
        onclick: () => this.act("delete", () => api(fill(urls.memory, { MEMORY_ID: id }), { method: "DELETE" }),
          "Memory deleted. Restore brings it back.") }, "Delete"),
      h("button", { type: "button", class: "button button-quiet button-small", "aria-pressed": this.picking ? "true" : "false",
        onclick: () => this.startPicking() }, "Link to…"),
      h("a", { class: "button button-quiet button-small", href: fill(urls.page, { MEMORY_ID: id }) }, "Open page"),
    );
  }

  renderPair() {
    const slot = this.body.querySelector("#graph-pair");
    if (!slot) return;
    const graph = this.app.graph;
    if (this.picking) {
      slot.replaceChildren(h("p", { class: "message message-info graph-pair" }, "Now click a second node to link or unlink it.",
        " ", h("button", { type: "button", class: "button button-quiet button-small", onclick: () => this.setPair(null) }, "Cancel")));
      return;
    }
    if (!this.pairId || !this.memory || this.memory.deleted_at) {
      slot.replaceChildren();
      return;
    }
    const a = this.memory.id;
    const b = this.pairId;
    const other = graph.hasNode(b) ? graph.getNodeAttributes(b) : { content: b };
    const linked = graph.hasEdge(a, b) || graph.hasEdge(b, a);
    const typeSelect = h("select", { id: "graph-link-type", class: "select-small" },
      ...this.app.config.linkTypes.map((type) => h("option", { value: type.value }, type.label)));
    const weight = h("input", { id: "graph-link-weight", type: "number", min: "0", max: "1", step: "0.05", value: "0.8", class: "input-small" });
    slot.replaceChildren(h("section", { class: "graph-pair card" },
      h("h3", {}, "Second node"),
      h("p", { class: "small" }, preview(other.content, 120)),
      linked ? h("div", { class: "actions" },
        h("button", { type: "button", class: "button button-quiet button-small", onclick: () => this.act("unlink", () =>
          api(fill(this.urls().linkDelete, { SOURCE_ID: a, TARGET_ID: b }), { method: "DELETE" }), "Unlinked.") }, "Unlink"),
        h("button", { type: "button", class: "button button-quiet button-small", onclick: () => this.setPair(null) }, "Cancel")) :
        h("div", { class: "graph-link-form" },
          h("label", { for: "graph-link-type", class: "small" }, "Type"), typeSelect,
          h("label", { for: "graph-link-weight", class: "small" }, "Weight"), weight,
          h("button", { type: "button", class: "button button-small", onclick: () => this.act("link", () =>
            api(this.urls().linkCreate, { method: "POST", body: { source: a, target: b, type: typeSelect.value, weight: Number(weight.value) } }),
            "Linked.") }, "Link"),
          h("button", { type: "button", class: "button button-quiet button-small", onclick: () => this.setPair(null) }, "Cancel")),
    ));
  }

  linkItem(memory, link) {
    const outgoing = link.source.id === memory.id;
    const other = outgoing ? link.target : link.source;
    const shown = this.app.graph.hasNode(other.id);
    return h("li", {},
      h("span", { class: "muted small" }, `${outgoing ? "→" : "←"} ${link.link_type} · ${link.weight.toFixed(2)}`),
      " ",
      shown ? h("button", { type: "button", class: "link-button", onclick: () => this.app.select(other.id, { centre: true }) }, preview(other.content, 90)) :
        h("a", { href: fill(this.urls().page, { MEMORY_ID: other.id }) }, preview(other.content, 90)));
  }

  async act(name, call, success) {
    const buttons = this.body.querySelectorAll("button");
    buttons.forEach((button) => { button.disabled = true; });
    try {
      await call();
      this.app.toast(success);
      if (name === "link" || name === "unlink") this.pairId = null;
      await this.refresh();
    } catch (error) {
      this.app.toast(error.message, { error: true });
      buttons.forEach((button) => { button.disabled = false; });
    }
  }
}

function bar(label, value) {
  const share = Math.max(0, Math.min(1, Number(value) || 0));
  return h("div", { class: "bar" },
    h("span", {}, label[0].toUpperCase() + label.slice(1)),
    h("span", { class: "bar-track", role: "meter", "aria-label": label, "aria-valuemin": "0", "aria-valuemax": "1", "aria-valuenow": share.toFixed(2) },
      h("span", { class: "bar-fill", style: `width:${(share * 100).toFixed(0)}%` })),
    h("span", { class: "bar-value" }, share.toFixed(2)));
}

function detail(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}
