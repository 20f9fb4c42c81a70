// A presentation clicker sends PageDown/PageUp (some send the arrow keys): on the console they
// press the plan's Next and Previous buttons, unless someone is typing in a field.
document.addEventListener("keydown", function (event) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  var which = { PageDown: "next", ArrowRight: "next", PageUp: "previous", ArrowLeft: "previous" }[event.key];
  if (!which) return;
  var el = event.target;
  if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return;
  var button = document.querySelector('[data-plan-step="' + which + '"]');
  if (!button || button.disabled) return;
  event.preventDefault();
  button.click();
});
