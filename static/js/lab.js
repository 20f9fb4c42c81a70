// The lab's live page: only what htmx cannot do. htmx + the ws extension put every pushed
// fragment in place; this file moves the clock: the "now" line, open timeline bars,
// countdown bars, the timeline's scale, the connection status, and replays at 1x or 10x.
(function () {
  "use strict";
  // "Copy" beside a code sample: the clipboard where the browser allows it, else select it.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("[data-copy]");
    if (!btn) return;
    var code = document.getElementById(btn.dataset.copy);
    if (!code) return;
    var done = function () { btn.textContent = "Copied"; setTimeout(function () { btn.textContent = "Copy"; }, 2000); };
    var select = function () {
      var range = document.createRange();
      range.selectNodeContents(code);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      btn.textContent = "Selected: press Ctrl+C";
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(code.textContent).then(done, select);
    } else {
      select();
    }
  });
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
    for (var t = 0; t < span; t += step) html += '<span data-css="--at:' + t + '">' + t + " s</span>";
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
      // --now goes only where it is read (the now line, open bars): set on the timeline it
      // would be inherited by every row, and each tick re-styled the whole timeline.
      var at = n.toFixed(1);
      timeline.querySelectorAll(".tl-now, .tl-hold.open").forEach(function (el) {
        el.style.setProperty("--now", at);
      });
      drawAxis(timeline);
    }
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
  // Frames from the run's socket are applied here, not by htmx: htmx walks every element
  // swapped so far in a frame after each out-of-band swap, so a 200-event burst cost the page
  // seconds (scripts/bench_lab.py --browser). The server already sends batches in order,
  // each change once, so applying them is a loop of replaceWith/append.
  var last = "";
  function items(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var found = [];
    Array.prototype.forEach.call(tpl.content.children, function (el) {
      if (el.tagName === "TEMPLATE" && el.id !== "live-cursor") {
        Array.prototype.push.apply(found, el.content.children);
      } else {
        found.push(el);
      }
    });
    return found;
  }
  function apply(html) {
    items(html).forEach(function (el) {
      if (el.id === "live-cursor") { last = el.dataset.last || last; return; }
      var how = el.getAttribute("hx-swap-oob") || "true";
      el.removeAttribute("hx-swap-oob");
      var style = "outerHTML", sel = el.id ? "#" + el.id : "";
      var colon = how.indexOf(":");
      if (colon > 0) { style = how.slice(0, colon); sel = how.slice(colon + 1); }
      else if (how !== "true") { style = how; }
      var target = sel.charAt(0) === "#" ? document.getElementById(sel.slice(1)) : null;
      if (!target) return;
      if (style === "beforeend") target.append.apply(target, Array.from(el.childNodes));
      else if (style === "innerHTML") target.replaceChildren.apply(target, Array.from(el.childNodes));
      else target.replaceWith(el);
    });
  }
  live.addEventListener("htmx:wsBeforeMessage", function (ev) {
    ev.preventDefault();
    apply(ev.detail.message);
  });
  // A reconnect asks for everything after the last batch this page holds.
  var createSocket = window.htmx && htmx.createWebSocket;
  if (createSocket) {
    htmx.createWebSocket = function (url) {
      if (last && url.indexOf("/ws/lab/runs/") >= 0) {
        url += (url.indexOf("?") < 0 ? "?" : "&") + "after=" + encodeURIComponent(last);
      }
      return createSocket(url);
    };
  }
  live.addEventListener("htmx:wsOpen", function () { status("Live: connected."); });
  live.addEventListener("htmx:wsClose", function () { status("Connection lost; reconnecting…"); });

  // Replay a finished run from its stored events, each drawn by the same fragments as live.
  var box = live.querySelector("[data-replay-socket]");
  if (!box) return;
  var replaySocket = null;
  box.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-replay-speed]");
    if (!btn) return;
    var speed = parseFloat(btn.dataset.replaySpeed) || 1;
    if (replaySocket) replaySocket.close();
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host +
      box.dataset.replaySocket + "?replay=" + speed;
    frozenAt = null;
    replay = { start: performance.now(), speed: speed, until: span };
    status("Replaying at " + speed + "×…");
    replaySocket = new WebSocket(url);
    replaySocket.onmessage = function (m) { apply(m.data); };
    replaySocket.onerror = function () { status("Could not replay the stored events."); };
  });
})();
