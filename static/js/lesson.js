// The question walk: the "Answer out loud" timer and the keyboard shortcuts.
// Revealing tiers is plain htmx (hx-get on the reveal link); this file only adds the clock,
// keys and focus handling, and the page works without it (the reveal link is a permalink).
(function () {
  "use strict";

  let tick = null;

  function announce(text) {
    const status = document.getElementById("lesson-status");
    if (status) status.textContent = text;
  }

  function stopTimer() {
    if (tick !== null) window.clearInterval(tick);
    tick = null;
  }

  function startTimer() {
    const box = document.getElementById("answer-timer");
    if (!box) return;
    const total = Number(box.dataset.seconds) || 20;
    const left = box.querySelector(".timer-left");
    const bar = box.querySelector(".timer-bar");
    const started = performance.now();
    stopTimer();
    box.hidden = false;
    box.classList.remove("is-done");
    const update = function () {
      const used = Math.min(total, (performance.now() - started) / 1000);
      bar.value = used;
      left.textContent = String(Math.ceil(total - used));
      if (used >= total) {
        stopTimer();
        box.classList.add("is-done");
        announce("Time is up. Reveal the answer and compare.");
      }
    };
    update();
    tick = window.setInterval(update, 200);
    announce("Timer started: " + total + " seconds. Answer out loud.");
  }

  function revealNext() {
    const link = document.querySelector('#reveal [data-action="reveal"]');
    if (link) link.click();
  }

  function go(attribute) {
    const question = document.getElementById("question");
    const url = question && question.getAttribute(attribute);
    if (url) window.location.assign(url);
  }

  function typing(target) {
    return (
      target.isContentEditable ||
      ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)
    );
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest('[data-action="start-timer"]')) startTimer();
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (!document.getElementById("question")) return;
    const actions = {
      t: startTimer,
      r: revealNext,
      n: function () { go("data-next-url"); },
      p: function () { go("data-previous-url"); },
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  // A request that fails (server gone, session expired) must not leave a click doing nothing:
  // a reveal falls back to its permalink, a self-rating says it was not saved.
  function requestFailed(event, text) {
    const source = event.detail && event.detail.elt;
    if (!source || !document.getElementById("question")) return;
    const reveal = source.closest('[data-action="reveal"]');
    if (reveal) {
      window.location.assign(reveal.href);
      return;
    }
    const form = source.closest(".self-rating");
    const status = form && form.querySelector(".rating-status");
    if (status) status.textContent = text;
  }

  document.addEventListener("htmx:responseError", function (event) {
    const code = event.detail.xhr ? event.detail.xhr.status : "?";
    requestFailed(event, "Your rating was not saved (error " + code + "). Reload the page and rate again.");
  });

  document.addEventListener("htmx:sendError", function (event) {
    requestFailed(event, "Your rating was not saved: the server could not be reached. Try again.");
  });

  // A tier swapped in by htmx: stop the old clock, move focus to the new tier's heading so
  // keyboard and screen-reader users land on what they just opened. Only a reveal does this:
  // the self-rating form under a tier is swapped by htmx too, and must not stop the clock.
  document.addEventListener("htmx:afterSettle", function (event) {
    const config = event.detail && event.detail.requestConfig;
    const source = config && config.elt;
    if (!source || !source.matches('[data-action="reveal"]')) return;
    if (!document.getElementById("tiers")) return;
    stopTimer();
    // The tier's own heading only: a tier's prose has h3s of its own (the senior answers'
    // sections), and focusing the last of those did nothing (issue 29).
    const headings = document.querySelectorAll("#tiers .tier > h3[tabindex]");
    const last = headings[headings.length - 1];
    if (last) {
      last.focus();
      announce(last.textContent.trim().split(/\s+/)[0] + " answer revealed.");
    }
  });
})();

// A tier permalink opens with that tier in view, or with the claim its #claim-<id> names (a
// search result) open and in view.
(function () {
  const match = window.location.pathname.match(/\/q\/[^/]+\/(basics|solid|senior)\/$/);
  const hash = decodeURIComponent(window.location.hash.slice(1));
  const claim = hash.startsWith("claim-") && document.getElementById(hash);
  if (claim) {
    const list = claim.closest("details");
    if (list) list.open = true;
    claim.scrollIntoView({ block: "start" });
    return;
  }
  const tier = match && document.getElementById("tier-" + match[1]);
  if (tier) tier.scrollIntoView({ block: "start" });
})();
