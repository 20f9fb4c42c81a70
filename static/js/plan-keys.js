// The console's keys (issue 28). A presentation clicker sends PageDown/PageUp (some send the
// arrow keys): they press the plan's Next and Previous buttons. R, T, L and B press the
// cockpit's reveal, vote timer, leaderboard and blank buttons (data-key), when they are on
// screen: a control that does not apply now is not drawn or is put away, so its key does
// nothing. Every key is ignored while someone types in a field.
//
// A key pressed while that button's last request is still on its way waits for it: htmx
// would queue the press on the old button, which the response replaces, and drop it. Once
// the response is in, the key presses whatever button its part now holds.
(function () {
  function busy(button) {
    var data = button.form && button.form["htmx-internal-data"];
    return Boolean(data && data.xhr);
  }

  function press(selector) {
    var button = document.querySelector(selector);
    if (!button || button.disabled || button.offsetParent === null) return false;
    if (busy(button)) {
      button.form.addEventListener("htmx:afterRequest", function () {
        setTimeout(function () { press(selector); });
      }, { once: true });
    } else {
      button.click();
    }
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var el = event.target;
    if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return;
    var step = { PageDown: "next", ArrowRight: "next", PageUp: "previous", ArrowLeft: "previous" }[event.key];
    var selector;
    if (step) {
      if (event.shiftKey) return;
      selector = '[data-plan-step="' + step + '"]';
    } else if (/^[rtlb]$/i.test(event.key)) {
      selector = '[data-key="' + event.key.toLowerCase() + '"]';
    } else {
      return;
    }
    if (press(selector)) event.preventDefault();
  });
})();
