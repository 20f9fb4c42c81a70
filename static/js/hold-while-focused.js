// A polling panel marked data-hold-while-focused skips its refresh while keyboard focus is
// inside it, so a refresh never pulls a button out from under someone about to press it.
// (An htmx trigger filter would say the same, but htmx evaluates those as code, which the
// Content-Security-Policy refuses.)
document.addEventListener("htmx:beforeRequest", function (event) {
  var el = event.detail.elt;
  if (el && el.hasAttribute && el.hasAttribute("data-hold-while-focused") &&
      el.contains(document.activeElement)) {
    event.preventDefault();
  }
});
