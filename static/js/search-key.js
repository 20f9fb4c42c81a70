// The `/` key focuses the header's search box from any page, unless the learner is typing in
// a field (then `/` is just a character) or holds a modifier.
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    const box = document.getElementById("site-search");
    if (!box) return;
    event.preventDefault();
    box.focus();
    box.select();
  });
})();
