// Phones: bring what the instructor just put to the room into view. A page grows downward
// (a senior tier is thousands of pixels), so a vote or an answer box that opened above a
// participant who was reading further down went unseen. Each section the socket redraws
// carries what it is about (data-round, data-run, data-question + data-tier); when that
// changes to something new and open, the section is scrolled to the top of the screen and,
// for a vote, the phone vibrates where the device allows. A reconnect redraws the same
// keys and so moves nothing.
(function () {
  "use strict";
  // Most pressing first: a vote beats an answer box beats a prediction beats a new tier.
  var SECTIONS = [
    ["ws-claim", function (el) { return el.dataset.state === "open" ? "claim:" + el.dataset.round : ""; }],
    ["ws-answers", function (el) { return el.dataset.state === "open" ? "answers:" + el.dataset.round : ""; }],
    ["ws-run", function (el) { return el.dataset.state === "open" ? "run:" + el.dataset.run : ""; }],
    ["ws-stage", function (el) { return el.dataset.question ? "stage:" + el.dataset.question + ":" + el.dataset.tier : ""; }],
  ];
  var seen = {};
  var calm = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function look(bring) {
    var target = null;
    SECTIONS.forEach(function (entry) {
      var el = document.getElementById(entry[0]);
      var key = el ? entry[1](el) : "";
      if (key && key !== seen[entry[0]] && !target && el.offsetParent !== null) target = el;
      seen[entry[0]] = key;
    });
    if (!bring || !target) return;
    target.scrollIntoView({ block: "start", behavior: calm ? "auto" : "smooth" });
    if (target.id === "ws-claim" && navigator.vibrate) {
      try { navigator.vibrate(150); } catch (e) { /* no vibration here */ }
    }
  }

  function start() {
    var room = document.querySelector(".room.participant");
    if (!room) return;
    look(false);
    new MutationObserver(function () { look(true); }).observe(room, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
