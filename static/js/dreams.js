// The dream runs page follows each queued or running dream without a reload: it polls the run's REST detail
// (/api/v1/cognition/dreams/<id>/, the page's session signs it) and redraws its status, its steps' state, batches
// and items, its changes and notes, and which buttons apply, until the run stops.
const POLL_MS = 1000;
const ACTIVE = new Set(["queued", "running"]);

function redraw(card, run) {
  card.dataset.status = run.status;
  card.querySelector('[data-field="status"]').textContent = run.status.replace("_", " ");
  for (const step of run.steps) {
    const row = card.querySelector(`tr[data-step="${step.step}"]`);
    if (!row) continue;
    row.className = `dream-step-${step.state}`;
    for (const name of ["state", "batches", "items"]) row.querySelector(`[data-field="${name}"]`).textContent = step[name];
  }
  const changes = card.querySelector('[data-field="changes"]');
  changes.replaceChildren(...(run.changes.length
    ? run.changes.map((change) => Object.assign(document.createElement("span"), { textContent: `${change.label}: ${change.value}` }))
    : [Object.assign(document.createElement("span"), { className: "muted", textContent: "no change to the graph yet" })]));
  const notes = card.querySelector('[data-field="notes"]');
  notes.replaceChildren(...run.notes.map((note) => Object.assign(document.createElement("li"), { textContent: note })));
  const details = notes.closest("details");
  details.hidden = run.notes.length === 0;
  details.querySelector("summary").textContent = `Notes (${run.notes.length})`;
  const active = ACTIVE.has(run.status);
  for (const form of card.querySelectorAll("[data-show-when]")) {
    form.hidden = form.dataset.showWhen === "active" ? !active : active || !run.reversal_hash;
  }
}

function follow(card) {
  const poll = async () => {
    let run;
    try {
      const response = await fetch(card.dataset.detailUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(String(response.status));
      run = await response.json();
    } catch {
      setTimeout(poll, POLL_MS * 5); // the server is away for a moment: ask again, less often
      return;
    }
    redraw(card, run);
    if (ACTIVE.has(run.status)) setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
}

for (const card of document.querySelectorAll("li.dream[data-dream]")) {
  if (ACTIVE.has(card.dataset.status)) follow(card);
}
