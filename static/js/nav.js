// The main navigation on a phone: a Menu button that folds the links away (CSS does the folding only
// once this script has marked the nav, so without JavaScript the links stay a plain list). The menu
// closes on Escape (focus back on the button), on a click outside it and when a link in it is followed.
(() => {
  const nav = document.querySelector(".nav");
  const toggle = nav && nav.querySelector(".nav-toggle");
  const menu = toggle && document.getElementById(toggle.getAttribute("aria-controls"));
  if (!menu) return;

  const isOpen = () => toggle.getAttribute("aria-expanded") === "true";
  const setOpen = (open) => toggle.setAttribute("aria-expanded", String(open));

  toggle.hidden = false;
  nav.dataset.menu = "ready";
  toggle.addEventListener("click", () => setOpen(!isOpen()));
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !isOpen()) return;
    setOpen(false);
    toggle.focus();
  });
  document.addEventListener("click", (event) => {
    if (isOpen() && !nav.contains(event.target)) setOpen(false);
  });
  menu.addEventListener("click", (event) => {
    if (event.target.closest("a")) setOpen(false);
  });
  // A page restored from the back/forward cache comes back as it was left: with the menu closed.
  window.addEventListener("pageshow", () => setOpen(false));
})();

// Tab strips that scroll sideways on a phone (the Cognition sections): bring the current tab into view.
for (const current of document.querySelectorAll(".tab-strip [aria-current='page']")) {
  const strip = current.closest(".tab-strip");
  if (strip.scrollWidth > strip.clientWidth) {
    strip.scrollLeft = current.offsetLeft - (strip.clientWidth - current.offsetWidth) / 2;
  }
}
