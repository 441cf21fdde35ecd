// Copy buttons: <button class="copy-button" data-copy-target="ELEMENT_ID">. Works without JS too
// (the text stays selectable); with it, one click copies and the button says so.
document.addEventListener("click", async (event) => {
  const button = event.target.closest(".copy-button");
  if (!button) return;
  const target = document.getElementById(button.dataset.copyTarget);
  if (!target) return;
  const text = "value" in target && target.value !== undefined ? target.value : target.textContent;
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    // Clipboard API needs a secure context (https or localhost): select the text for Ctrl-C instead.
    if (target.select) target.select();
    else window.getSelection().selectAllChildren(target);
    button.textContent = "Press Ctrl-C";
  }
  setTimeout(() => { button.textContent = label; }, 2000);
});
