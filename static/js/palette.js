// The keyboard: Ctrl/Cmd-K opens the command palette (templates/base.html), "/" goes to the page's search
// field, "?" shows the shortcuts. The palette is a modal <dialog>: a combobox over a listbox of pages,
// memories and projects (from /palette/, the session's own), and "Search for ..." last; arrows choose,
// Enter opens, Escape closes, and focus goes back where it was.
(() => {
  const palette = document.getElementById("palette");
  const help = document.getElementById("shortcuts");
  if (!palette || !help) return;
  const input = document.getElementById("palette-input");
  const list = document.getElementById("palette-list");
  const status = document.getElementById("palette-status");
  const PAGES_SHOWN = 6;
  const DEBOUNCE_MS = 120;

  let pages = null; // loaded once, on the first opening
  let found = { memories: [], projects: [], error: "" };
  let options = [];
  let active = 0;
  let chosenUrl = null;
  let pending = null; // settles once the suggestions for the text typed are shown
  let controller = null;
  let timer = null;
  const returnTo = new Map();

  // Both dialogs: modal, focus trapped (Tab cycles inside), focus back to where it was on closing.
  for (const dialog of [palette, help]) {
    dialog.addEventListener("close", () => {
      const element = returnTo.get(dialog);
      returnTo.delete(dialog);
      if (element && element.isConnected && !document.querySelector("dialog[open]")) element.focus();
    });
    dialog.addEventListener("click", (event) => {
      // A click on the backdrop (outside the dialog's box) closes it, as Escape does.
      if (event.target === dialog) {
        const r = dialog.getBoundingClientRect();
        const inside = event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
        if (!inside) dialog.close();
      }
      if (event.target.closest("[data-dialog-close]")) dialog.close();
    });
    dialog.addEventListener("keydown", (event) => {
      if (event.key === "Escape") event.stopPropagation(); // the dialog's own; the page behind keeps its state
      if (event.key !== "Tab") return;
      const focusable = [...dialog.querySelectorAll("input, button, a[href], select, textarea, [tabindex]:not([tabindex='-1'])")]
        .filter((element) => !element.disabled && element.getClientRects().length);
      if (!focusable.length) return;
      const first = focusable[0];
      const last = focusable[focusable.length - 1];
      if (event.shiftKey && document.activeElement === first) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && document.activeElement === last) {
        event.preventDefault();
        first.focus();
      }
    });
  }

  function show(dialog) {
    for (const other of [palette, help]) if (other !== dialog && other.open) other.close();
    if (dialog.open) return;
    // From one dialog to the other: focus goes back, in the end, where it was before the first.
    const from = document.activeElement;
    const outer = [...returnTo.keys()].find((other) => other !== dialog && other.contains(from));
    returnTo.set(dialog, outer ? returnTo.get(outer) : from);
    dialog.showModal();
  }

  function openPalette() {
    show(palette);
    input.value = "";
    chosenUrl = null;
    found = { memories: [], projects: [], error: "" };
    render();
    input.focus();
    if (!pages) suggest("").then(() => { if (!input.value) render(); });
  }

  function openHelp() {
    show(help);
    help.querySelector("[data-dialog-close]").focus();
  }

  // Suggestions for `text` from the server; pages come with every answer.
  function suggest(text) {
    if (controller) controller.abort();
    controller = new AbortController();
    const url = `${palette.dataset.url}?${new URLSearchParams({ q: text })}`;
    return fetch(url, { headers: { Accept: "application/json" }, signal: controller.signal, credentials: "same-origin" })
      .then(async (response) => {
        const body = await response.json().catch(() => ({}));
        if (!response.ok) throw new Error((body.error && body.error.message) || `The suggestions failed (${response.status}).`);
        return body;
      })
      .then((body) => {
        pages = body.pages;
        if (input.value.trim() === text) found = { memories: body.memories, projects: body.projects, error: "" };
      })
      .catch((error) => {
        if (error.name !== "AbortError" && input.value.trim() === text) found = { memories: [], projects: [], error: error.message };
      });
  }

  function pageMatches(text) {
    const words = text.toLowerCase().split(/\s+/).filter(Boolean);
    const all = pages || [];
    if (!words.length) return all;
    return all
      .filter((page) => {
        const haystack = `${page.section} ${page.title} ${page.keywords}`.toLowerCase();
        return words.every((word) => haystack.includes(word));
      })
      .slice(0, PAGES_SHOWN);
  }

  function render() {
    const text = input.value.trim();
    options = [
      ...pageMatches(text).map((page) => ({ kind: "Page", title: page.section ? `${page.section} › ${page.title}` : page.title, url: page.url })),
      ...(text ? found.projects.map((project) => ({ kind: "Project", title: project.title, url: project.url })) : []),
      ...(text ? found.memories.map((memory) => ({ kind: "Memory", title: memory.title, url: memory.url })) : []),
    ];
    if (text) {
      const url = `${palette.dataset.searchUrl}?${new URLSearchParams({ q: text })}`;
      options.push({ kind: "Search", title: `Search for “${text}”`, url });
    }
    // The suggestion chosen with the arrows stays chosen when the memories arrive; otherwise the first.
    active = chosenUrl ? Math.max(0, options.findIndex((option) => option.url === chosenUrl)) : 0;
    list.replaceChildren(...options.map((option, index) => {
      const item = document.createElement("li");
      item.id = `palette-option-${index}`;
      item.className = `palette-option palette-${option.kind.toLowerCase()}`;
      item.setAttribute("role", "option");
      const title = document.createElement("span");
      title.className = "palette-title";
      title.textContent = option.title;
      const kind = document.createElement("span");
      kind.className = "palette-kind";
      kind.textContent = option.kind;
      item.append(title, kind);
      item.addEventListener("mousedown", (event) => event.preventDefault()); // keep the focus in the input
      item.addEventListener("click", () => go(option));
      return item;
    }));
    const counts = [found.memories.length && text ? `${found.memories.length} memories` : "", found.projects.length && text ? `${found.projects.length} projects` : ""].filter(Boolean);
    status.textContent = found.error || (pending && text ? "Searching…" : `${options.length} suggestions${counts.length ? ` (${counts.join(", ")})` : ""}`);
    status.classList.toggle("visually-hidden", !found.error);
    highlight();
  }

  function highlight() {
    options.forEach((_, index) => {
      const item = list.children[index];
      item.setAttribute("aria-selected", String(index === active));
    });
    if (options.length) {
      input.setAttribute("aria-activedescendant", `palette-option-${active}`);
      list.children[active].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function go(option) {
    if (!option) return;
    palette.close();
    window.location.assign(option.url);
  }

  let release = () => {};
  input.addEventListener("input", () => {
    chosenUrl = null;
    clearTimeout(timer);
    release();
    if (controller) controller.abort();
    found = { memories: [], projects: [], error: "" };
    const text = input.value.trim();
    pending = null;
    if (text) {
      // Settled once this text's suggestions are shown (or the text changed): what Enter waits for.
      let settle;
      const mine = new Promise((resolve) => { settle = resolve; });
      release = settle;
      pending = mine;
      timer = setTimeout(() => suggest(text).then(() => {
        if (pending === mine) {
          pending = null;
          render();
        }
        settle();
      }), DEBOUNCE_MS);
    }
    render();
  });

  input.addEventListener("keydown", async (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!options.length) return;
      const step = event.key === "ArrowDown" ? 1 : -1;
      active = (active + step + options.length) % options.length;
      chosenUrl = options[active].url;
      highlight();
    } else if (event.key === "Enter") {
      event.preventDefault();
      // Typed and Enter at once: wait for what the words find, so that the best of it opens.
      const typed = input.value;
      if (pending) await pending;
      if (input.value === typed && palette.open) go(options[active]);
    }
  });

  function typing(target) {
    // The palette's input keeps the focus until its dialog's "close" event hands it back: that is no typing.
    if (!(target instanceof HTMLElement) || target.closest("dialog:not([open])")) return false;
    return target.isContentEditable || Boolean(target.closest("input, textarea, select, [contenteditable]"));
  }

  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      if (palette.open) palette.close();
      else openPalette();
      return;
    }
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (palette.open || help.open || document.querySelector("dialog[open]")) return;
    if (event.key === "/") {
      event.preventDefault();
      const field = [...document.querySelectorAll("main input[type=search]")].find((element) => element.getClientRects().length);
      if (field) {
        field.focus();
        field.select();
      } else {
        openPalette();
      }
    } else if (event.key === "?") {
      event.preventDefault();
      openHelp();
    }
  });

  for (const opener of document.querySelectorAll("[data-palette-open]")) {
    opener.setAttribute("role", "button");
    opener.setAttribute("aria-haspopup", "dialog");
    opener.addEventListener("click", (event) => {
      event.preventDefault();
      openPalette();
    });
  }
  for (const opener of document.querySelectorAll("[data-shortcuts-open]")) {
    opener.addEventListener("click", (event) => {
      event.preventDefault();
      openHelp();
    });
  }
})();
