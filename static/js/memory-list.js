// The memories list's bulk bar (templates/memories/memory_list.html): "select all on this page", a count of the
// ticked memories, Apply enabled only with something ticked, and only the input the chosen action needs shown.
// Without JS every control stays visible and the server checks the same things.
(() => {
  const form = document.getElementById("bulk-form");
  if (!form) return;
  const boxes = () => [...document.querySelectorAll('input.memory-select[form="bulk-form"]')];
  const all = document.getElementById("select-page");
  const count = document.getElementById("bulk-count");
  const apply = document.getElementById("bulk-apply");
  const action = document.getElementById("bulk-action");
  const cube = document.getElementById("bulk-cube");
  const tag = document.getElementById("bulk-tag");

  function refresh() {
    const ticked = boxes().filter((box) => box.checked).length;
    const total = boxes().length;
    all.checked = ticked === total && total > 0;
    all.indeterminate = ticked > 0 && ticked < total;
    count.textContent = ticked ? `${ticked} selected` : "";
    apply.disabled = ticked === 0;
  }

  function showInputs() {
    const chosen = action.value;
    if (cube) { cube.hidden = chosen !== "move"; cube.required = chosen === "move"; }
    if (tag) { tag.hidden = chosen !== "tag" && chosen !== "untag"; tag.required = !tag.hidden; }
  }

  all.addEventListener("change", () => {
    boxes().forEach((box) => { box.checked = all.checked; });
    refresh();
  });
  document.addEventListener("change", (event) => {
    if (event.target.matches("input.memory-select")) refresh();
  });
  action.addEventListener("change", showInputs);
  showInputs();
  refresh();
})();
