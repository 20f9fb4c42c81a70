// The lab's live page: only what htmx cannot do. htmx + the ws extension put every pushed
// fragment in place; this file moves the clock: the "now" line, open timeline bars,
// countdown bars, the timeline's scale, the connection status, and replays at 1x or 10x.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) return;
  var t0 = parseFloat(live.dataset.t0) || Date.now() / 1000;
  var span = parseFloat(live.dataset.span) || 60;
  var replay = null; // {start: ms, speed: n, until: s} while a replay runs
  var frozenAt = live.dataset.finishedAt ? parseFloat(live.dataset.finishedAt) : null;

  function now() {
    // Seconds since the run started: wall clock, or the replay's own clock.
    if (replay) return Math.min((performance.now() - replay.start) / 1000 * replay.speed, replay.until);
    if (frozenAt !== null) return frozenAt - t0;
    return Date.now() / 1000 - t0;
  }

  var axisSpan = null;
  function drawAxis(timeline) {
    // Ticks every 5, 10, 30 or 60 s, whichever gives about eight across.
    var axis = timeline.querySelector(".tl-axis");
    if (!axis || axisSpan === span) return;
    axisSpan = span;
    var step = [1, 2, 5, 10, 30, 60, 120, 300, 600].find(function (s) { return span / s <= 8; }) || 1800;
    var html = "";
    for (var t = 0; t < span; t += step) html += '<span style="--at:' + t + '">' + t + " s</span>";
    axis.innerHTML = html;
  }

  // Once a second, and only where something changed: a busy main thread delays the
  // socket's messages (measured with scripts/bench_lab.py --browser).
  var lastSpan = null;
  function tick() {
    var n = now();
    var timeline = live.querySelector(".timeline");
    if (timeline) {
      if (n > span * 0.95) { span = Math.ceil(n * 1.25); }
      if (span !== lastSpan) { timeline.style.setProperty("--span", span); lastSpan = span; }
      timeline.style.setProperty("--now", n.toFixed(1));
      drawAxis(timeline);
    }
    // Open bars (copies held, not yet run) grow with --now in CSS: no per-bar work here.
    // The first few dozen countdowns are the ones anyone reads; an 1,800-task run would
    // otherwise rewrite 1,800 bars a second.
    Array.prototype.slice.call(live.querySelectorAll(".wait:not(.done)"), 0, 60).forEach(function (li) {
      var eta = parseFloat(li.dataset.eta) - t0;
      var left = Math.max(0, Math.ceil(eta - n));
      var text = left > 0 ? left + " s" : "due";
      if (li.dataset.shown === text) return;
      li.dataset.shown = text;
      var bar = li.querySelector("progress");
      if (bar) bar.value = eta > 0 ? Math.min(1, n / eta) : 1;
      var span_ = li.querySelector(".left");
      if (span_) span_.textContent = text;
    });
  }
  var lastTick = 0;
  setInterval(function () {
    var t = performance.now();
    if (replay || t - lastTick >= 1000) { lastTick = t; tick(); } // a replay moves faster
  }, 250);
  tick();

  function status(text) {
    var el = document.getElementById("live-status");
    if (el) el.textContent = text;
  }
  // Two workers' messages can cross on the way, so an older count may arrive after a newer
  // one: keep whichever counters carry the highest event number (the final summary wins).
  document.body.addEventListener("htmx:oobBeforeSwap", function (ev) {
    var target = ev.detail.target;
    if (!target || (target.id !== "counters" && target.id !== "prediction")) return;
    var frag = ev.detail.fragment;
    var incoming = frag && (frag.id === target.id ? frag : frag.querySelector && frag.querySelector("#" + target.id));
    if (!incoming) return;
    var have = target.getAttribute("data-seq"), got = incoming.getAttribute("data-seq");
    if (have === "final" && got !== "final") { ev.detail.shouldSwap = false; return; }
    if (have && got && got !== "final" && Number(got) < Number(have)) ev.detail.shouldSwap = false;
  });
  live.addEventListener("htmx:wsOpen", function () { status("Live: connected."); });
  live.addEventListener("htmx:wsClose", function () { status("Connection lost; reconnecting…"); });

  // Replay a finished run from its stored events, each drawn by the same fragments as live.
  var box = live.querySelector("[data-replay-url]");
  if (!box) return;
  var timers = [];
  box.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-replay-speed]");
    if (!btn) return;
    var speed = parseFloat(btn.dataset.replaySpeed) || 1;
    timers.forEach(clearTimeout);
    timers = [];
    fetch(box.dataset.replayUrl, { headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        ["receipts-body", "timeline-rows", "waiting"].forEach(function (id) {
          var el = document.getElementById(id);
          if (el) el.innerHTML = "";
        });
        // The page holds the final counts; a replay counts up again from zero.
        ["counters", "prediction"].forEach(function (id) {
          var el = document.getElementById(id);
          if (el) el.removeAttribute("data-seq");
        });
        htmx.swap("#live", data.reset, { swapStyle: "none" });
        var last = data.events.length ? data.events[data.events.length - 1].t : 0;
        frozenAt = null;
        replay = { start: performance.now(), speed: speed, until: last + 1 };
        status("Replaying at " + speed + "×…");
        data.events.forEach(function (e) {
          timers.push(setTimeout(function () {
            htmx.swap("#live", e.html, { swapStyle: "none" });
          }, Math.max(0, e.t) * 1000 / speed));
        });
        timers.push(setTimeout(function () { status("Replay finished."); }, (last + 0.1) * 1000 / speed));
      })
      .catch(function () { status("Could not load the stored events for a replay."); });
  });
})();
