// Engram's fix to Django's admin markup, for an axe-core rule it breaks (tests/dashboard/test_axe_browser.py): the
// magnifier icons of the two-list selector (SelectFilter2.js, drawn after load) carry an aria-label, which a span
// may hold only with a role (aria-prohibited-attr); they are images with that name.
new MutationObserver(() => {
  for (const icon of document.querySelectorAll(".search-label-icon[aria-label]:not([role])")) {
    icon.setAttribute("role", "img");
  }
}).observe(document.documentElement, { childList: true, subtree: true });
