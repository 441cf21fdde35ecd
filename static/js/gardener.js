// The gardener page (templates/cognition/gardener.html) while a cycle is queued or running: "Run a cycle now" is
// disabled as soon as it is clicked; the cycle's gardener.changed events come over /ws/graph/ (the page subscribes to
// the owner's own cubes, where each batch says where the cycle stands) and the progress line follows them; when the
// cycle ends, the page reads itself again and swaps in its activity and last-cycle sections, so the outcome shows in
// a success, warning or error style without a reload. Without the socket it reads the page every few seconds.
// data-following on the section says which way it follows the cycle ("socket" or "polling").
(() => {
  const live = document.getElementById("gardener-live");
  if (!live) return;
  const POLL_MS = 2000;
  // Also while the socket is open: a queued cycle no worker takes sends no event, and its lease lapses.
  const CHECK_MS = 30000;
  const STEPS = { prune: "pruning weak idle links", dedupe: "merging near-duplicates", cycles: "cutting causal loops",
                  glymphatic: "clearing old orphans", scaling: "scaling importance" };
  let socket = null;
  let checker = null;

  const guardButton = () => {
    const button = document.getElementById("gardener-run");
    if (button) button.form.addEventListener("submit", () => { button.disabled = true; }, { once: true });
  };

  // Swap in the page as the server renders it now; whether a cycle is still queued or running.
  const refresh = async () => {
    const response = await fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("gardener-live");
    if (!fresh) throw new Error("the page has no gardener section");
    live.replaceChildren(...fresh.childNodes);
    live.dataset.running = fresh.dataset.running;
    guardButton();
    return fresh.dataset.running === "true";
  };

  const stop = () => {
    clearInterval(checker);
    checker = null;
    if (socket) {
      const closing = socket;
      socket = null;
      closing.close();
    }
  };

  const poll = () => {
    live.dataset.following = "polling";
    refresh()
      .then((running) => { if (running) setTimeout(poll, POLL_MS); })
      .catch(() => setTimeout(poll, POLL_MS * 3));
  };

  const settle = () => {
    refresh().then((running) => { if (!running) stop(); }).catch(() => {});
  };

  const progress = (payload) => {
    const line = document.getElementById("gardener-progress");
    if (!line) return;
    const done = payload.batch === 1 ? "1 batch done" : `${payload.batch} batches done`;
    line.textContent = payload.step ? `A cycle is under way: ${STEPS[payload.step] || payload.step}, ${done}.` : "A cycle is under way: starting.";
  };

  const follow = () => {
    const cubes = (live.dataset.cubes || "").split(" ").filter(Boolean);
    if (!("WebSocket" in window) || cubes.length === 0) { poll(); return; }
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${window.location.host}/ws/graph/`);
    let subscribed = 0;
    socket.addEventListener("open", () => cubes.forEach((cube) => socket.send(JSON.stringify({ type: "subscribe", cube }))));
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "subscribed" && ++subscribed === cubes.length) {
        // It may have ended before the subscriptions: read the page once, then follow the events.
        refresh().then((running) => { if (running) live.dataset.following = "socket"; else stop(); }).catch(() => {});
      }
      if (message.type !== "event" || message.kind !== "gardener.changed") return;
      if (message.payload.status === "running") progress(message.payload);
      else settle();
    });
    socket.addEventListener("close", () => {
      if (socket === null) return; // closed by stop()
      socket = null;
      clearInterval(checker);
      poll();
    });
    checker = setInterval(settle, CHECK_MS);
  };

  guardButton();
  if (live.dataset.running === "true") follow();
})();
