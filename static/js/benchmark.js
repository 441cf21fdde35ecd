// A recall run's page (templates/cognition/benchmark.html): while the run is queued or running, poll its REST
// detail (GET /api/v1/cognition/benchmarks/<id>/, the session cookie authenticates) and show the progress; when it
// ends, reload so the server renders the figures.
(() => {
  const panel = document.getElementById("benchmark-progress");
  if (!panel || panel.dataset.active !== "true") return;
  const bar = document.getElementById("benchmark-bar");
  const phase = document.getElementById("benchmark-phase");
  const status = document.getElementById("benchmark-status");
  const live = document.getElementById("benchmark-live");
  const POLL_MS = 1000;

  const show = (run) => {
    const p = run.progress;
    bar.value = p.percent;
    bar.textContent = `${p.percent}%`;
    status.textContent = run.status;
    phase.textContent = `${p.percent}% · stored ${p.stored} of ${p.total_items} items · answered ${p.queried} of ${p.total_queries} queries`;
  };

  const poll = async () => {
    try {
      const response = await fetch(panel.dataset.pollUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(`the server answered ${response.status}`);
      const run = await response.json();
      show(run);
      if (run.status === "completed" || run.status === "failed") {
        window.location.reload();
        return;
      }
      if (live) live.textContent = "Updating live; the figures appear when the run completes.";
    } catch (error) {
      if (live) live.textContent = `Could not read the progress (${error.message}); retrying.`;
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
})();
