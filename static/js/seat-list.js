// The console's moderation list is a search result drawn on request, so it would not notice
// people joining. When the room's seat count is redrawn (someone joined, left or was
// removed), ask for the list again with the same query, unless the instructor is typing in
// it (a rename): a redraw would take the half-typed name away.
document.addEventListener("htmx:oobBeforeSwap", function (event) {
  var target = event.detail && event.detail.target;
  if (!target || target.id !== "ws-seats" || !window.htmx) return;
  var rows = document.getElementById("ws-seat-rows");
  if (rows && rows.contains(document.activeElement)) return;
  var form = document.querySelector("form.seat-find");
  if (form) htmx.trigger(form, "seats-changed");
});
