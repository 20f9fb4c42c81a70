// Vote and answer timers. The deadline is the server's (teachlab/workshop/rounds.py refuses
// a vote or an answer after it); this only counts down the seconds left when the element
// was drawn and, at zero, says so and marks its section [data-timed] "time-up", which the
// stylesheet uses to put the vote buttons and the answer form away.
(function () {
  "use strict";
  var deadlines = new WeakMap();
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-remaining]").forEach(function (el) {
      var deadline = deadlines.get(el);
      if (deadline === undefined) {
        deadline = now + 1000 * parseFloat(el.getAttribute("data-remaining"));
        deadlines.set(el, deadline);
      }
      var left = Math.ceil((deadline - now) / 1000);
      if (left > 0) {
        var out = el.querySelector(".countdown");
        if (out) out.textContent = left + " s";
        return;
      }
      el.textContent = el.getAttribute("data-done") || "Time is up.";
      el.removeAttribute("data-remaining");
      el.removeAttribute("role");
      var scope = el.closest("[data-timed]");
      if (scope) scope.classList.add("time-up");
    });
  }
  setInterval(tick, 250);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", tick);
  else tick();
})();
