// The projector is a slide (issue 28): whatever the moment, it fits one 16:9 screen. A slide
// taller than the screen is zoomed down until it fits (--fit, read by workshop.css as the
// slide's zoom, so sizes in rem shrink too), but not below a size read from the back of the
// room: a tier longer than that (a senior tier is an essay) is laid out in pages of one
// screen each, turned every PAGE_SECONDS, "page 2 of 4" in the corner. Everything goes through
// the CSSOM, which the Content-Security-Policy allows.
(function () {
  "use strict";
  var MIN = 0.6;
  var PAGE_SECONDS = 20;
  var turner = null;
  var note = null;

  function fits(slide) {
    var screen = slide.parentElement;
    return screen.scrollHeight <= screen.clientHeight + 1 && screen.scrollWidth <= screen.clientWidth + 1;
  }

  // Only the slide (never swapped) carries styles: htmx copies a swapped element's old
  // attributes while it settles, and a style attribute copied that way breaks the policy.
  function unpage(slide) {
    if (turner) { clearInterval(turner); turner = null; }
    if (note) note.hidden = true;
    slide.classList.remove("paged");
    ["--page-h", "--page-w"].forEach(function (p) { slide.style.removeProperty(p); });
  }

  function page(slide, body) {
    slide.style.setProperty("--fit", "1");
    var screen = slide.parentElement;
    var room = screen.getBoundingClientRect().bottom - body.getBoundingClientRect().top - 8;
    slide.style.setProperty("--page-h", Math.max(120, room) + "px");
    var css = getComputedStyle(body);
    var width = body.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
    slide.style.setProperty("--page-w", width + "px");
    slide.classList.add("paged");
    var step = width + parseFloat(getComputedStyle(body).columnGap || "0");
    var pages = Math.max(1, Math.round(body.scrollWidth / step));
    var at = 0;
    if (!note) {
      note = document.createElement("p");
      note.className = "page-of";
      screen.appendChild(note);
    }
    function show() {
      body.scrollLeft = at * step;
      note.textContent = "page " + (at + 1) + " of " + pages;
      note.hidden = pages < 2;
    }
    show();
    turner = setInterval(function () { at = (at + 1) % pages; show(); }, PAGE_SECONDS * 1000);
  }

  function fit() {
    var slide = document.querySelector(".projector .screen-main > .slide");
    if (!slide) return;
    var body = document.getElementById("ws-stagebody");
    unpage(slide);
    slide.style.setProperty("--fit", "1");
    if (fits(slide)) return;
    var lo = MIN, hi = 1;
    for (var i = 0; i < 7; i++) {
      var mid = (lo + hi) / 2;
      slide.style.setProperty("--fit", String(mid));
      if (fits(slide)) lo = mid;
      else hi = mid;
    }
    slide.style.setProperty("--fit", String(lo));
    if (!fits(slide) && body && body.offsetParent !== null) page(slide, body);
  }

  var queued = false;
  function soon() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(function () { queued = false; fit(); });
  }

  function start() {
    var room = document.querySelector(".room.projector");
    if (!room) return;
    // Redraws only: the countdown's ticks and the page turns do not refit the slide.
    new MutationObserver(function (changes) {
      if (changes.some(function (c) { return c.target.closest && !c.target.closest(".round-timer, .page-of"); })) soon();
    }).observe(room, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-moment", "data-state"] });
    window.addEventListener("resize", soon);
    soon();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
