// A notebook's cell runs (templates/reasoning/notebook_detail.html): Run posts the form for JSON and gets the run
// at once; the button stays disabled and a spinner counts the seconds while a worker runs the cell; the run's state
// (its output as it comes) arrives over /ws/runs/, or by polling the run's status URL when the socket is not there;
// the outcome is shown in a success or an error style, and the button comes back. Without this script the forms post
// and the run's own page (which refreshes itself) takes over.
(() => {
  const list = document.querySelector("ol.cells[data-run-base]");
  if (!list) return;
  const ZERO = "00000000-0000-0000-0000-000000000000";
  const POLL_MS = 1000;
  const links = (id) => {
    const page = list.dataset.runBase.replace(ZERO, id);
    return { page, status: `${page}status/`, cancel: `${page}cancel/` };
  };
  const csrf = (form) => form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const BADGES = { queued: ["running", "Running"], running: ["running", "Running"], completed: ["completed", "Completed"],
                   failed: ["failed", "Failed"], cancelled: ["failed", "Failed"] };

  // One socket for the page; each run has a handler. A socket that closes before a run ends hands it to polling.
  const handlers = new Map();
  let socket = null;
  let socketUsable = "WebSocket" in window;
  const poll = (id) => {
    const handler = handlers.get(id);
    if (!handler) return;
    fetch(links(id).status, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`the server answered ${response.status}`))))
      .then((body) => handler.state(body.run))
      .catch((error) => handler.note(`Could not read the run (${error.message}); retrying.`))
      .finally(() => { if (handlers.has(id)) setTimeout(() => poll(id), POLL_MS); });
  };
  const openSocket = () => {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${window.location.host}/ws/runs/`);
    socket.addEventListener("open", () => handlers.forEach((_, id) => socket.send(JSON.stringify({ type: "watch", run: id }))));
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "run" && handlers.has(message.run.id)) handlers.get(message.run.id).state(message.run);
      else if (message.type === "error" && handlers.has(message.run)) handlers.get(message.run).fail(message.message);
    });
    socket.addEventListener("close", () => {
      socket = null;
      socketUsable = false;
      handlers.forEach((_, id) => poll(id));
    });
  };
  const watch = (id, handler) => {
    handlers.set(id, handler);
    if (!socketUsable) { poll(id); return; }
    if (!socket) openSocket();
    else if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "watch", run: id }));
  };
  const unwatch = (id) => {
    handlers.delete(id);
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "unwatch", run: id }));
  };

  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  const outputOf = (cell, run) => {
    let box = cell.querySelector(".cell-output");
    if (!box) {
      box = element("div", "cell-output");
      box.setAttribute("aria-label", `Output of ${run.filename}`);
      cell.querySelector(".cell-source").after(box);
    }
    const meta = element("div", "meta");
    meta.append(element("span", "", run.finished ? `exit code ${run.exit_code ?? "—"}` : "running"));
    if (run.finished) meta.append(element("span", "", `${run.elapsed_ms} ms`));
    const parts = [meta];
    if (run.stdout) parts.push(element("pre", "output-stdout", run.stdout));
    if (run.stderr) parts.push(element("pre", "output-stderr", run.stderr));
    if (!run.stdout && !run.stderr) parts.push(element("p", "muted small", run.finished ? "No output." : "No output yet."));
    box.replaceChildren(...parts);
  };

  const follow = (cell, runForm, id) => {
    const button = runForm.querySelector("button");
    const cancelForm = cell.querySelector(".cancel-form");
    const progress = cell.querySelector(".run-progress");
    const text = progress.querySelector(".run-progress-text");
    const outcome = cell.querySelector(".run-outcome");
    const badge = cell.querySelector(".cell-status");
    let status = "queued";
    let since = Date.now();
    let timer = null;
    let cancelling = false;

    const show = () => {
      const seconds = Math.floor((Date.now() - since) / 1000);
      text.textContent = status === "queued" ? `Queued: waiting for a worker · ${seconds} s`
        : `Running · ${seconds} s${cancelling ? " · cancelling" : ""}`;
    };
    const setBadge = (runStatus) => {
      const [css, label] = BADGES[runStatus];
      badge.className = `badge cell-status status-${css}`;
      badge.textContent = label;
    };
    const end = (ok, message) => {
      clearInterval(timer);
      unwatch(id);
      progress.hidden = true;
      cancelForm.hidden = true;
      button.disabled = false;
      delete runForm.dataset.activeRun;
      outcome.className = `message run-outcome ${ok ? "message-success" : "message-error"}`;
      outcome.setAttribute("role", ok ? "status" : "alert");
      outcome.textContent = message;
      outcome.hidden = false;
    };

    button.disabled = true;
    outcome.hidden = true;
    progress.hidden = false;
    progress.querySelector("a")?.remove();
    cancelForm.action = links(id).cancel;
    cancelForm.hidden = false;
    cancelForm.querySelector("button").disabled = false;
    cancelForm.onsubmit = (event) => {
      event.preventDefault();
      cancelling = true;
      cancelForm.querySelector("button").disabled = true;
      show();
      fetch(cancelForm.action, { method: "POST", body: new FormData(cancelForm), credentials: "same-origin",
                                 headers: { Accept: "application/json", "X-CSRFToken": csrf(cancelForm) } })
        .then((response) => response.json())
        .then((body) => (body.run ? handlers.get(id)?.state(body.run) : Promise.reject(new Error(body.error.message))))
        .catch((error) => handlers.get(id)?.note(`Could not cancel: ${error.message}`));
    };
    show();
    timer = setInterval(show, 1000);

    watch(id, {
      state(run) {
        if (run.status === "running" && status !== "running") since = Date.now() - run.elapsed_ms;
        status = run.status;
        cancelling = cancelling || run.cancel_requested;
        setBadge(run.status);
        if (run.status !== "queued") outputOf(cell, run);
        if (run.finished) end(run.succeeded, `${run.filename}: ${run.message}.`);
        else show();
      },
      note(message) { text.textContent = message; },
      fail(message) { end(false, message); },
    });
  };

  list.querySelectorAll("form.run-form").forEach((runForm) => {
    const cell = runForm.closest("li.cell");
    runForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = runForm.querySelector("button");
      if (button.disabled) return;
      button.disabled = true;
      let response;
      let body;
      try {
        response = await fetch(runForm.action, { method: "POST", body: new FormData(runForm), credentials: "same-origin",
                                                 headers: { Accept: "application/json", "X-CSRFToken": csrf(runForm) } });
        body = await response.json();
      } catch (error) {
        button.disabled = false;
        runForm.submit();  // the server did not answer as expected: let the plain form post show what happened
        return;
      }
      const running = body.error && body.error.details && body.error.details.run_id;
      if (response.ok || running) {
        follow(cell, runForm, response.ok ? body.run.id : running);
        return;
      }
      const outcome = cell.querySelector(".run-outcome");
      outcome.className = "message run-outcome message-error";
      outcome.textContent = body.error ? body.error.message : `The server answered ${response.status}.`;
      outcome.hidden = false;
      button.disabled = false;
    });
    if (runForm.dataset.activeRun) follow(cell, runForm, runForm.dataset.activeRun);
  });
})();
