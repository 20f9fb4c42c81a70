// A participant's vote, answer or prediction is pending until the server acknowledges it
// (teachlab/workshop/actionids.py). A frame sent into a silently cut socket is lost, and the
// walk of issue 28 lost a vote that way while the page said "your answers are kept". So each
// action gets an id of its own, is kept here until its ack comes back, and is sent again on
// every reconnect (the server acts on an id once). The .pending-note says what is not
// confirmed yet, what went after a reconnect, and what was refused.
(function () {
  var ACTIONS = { vote: "your vote", answer: "your answer", predict: "your prediction" };
  var SHOW_AFTER_MS = 1500; // an ack normally comes back in well under this
  var pending = {}; // aid -> {params, label, at}
  var down = false;

  function newId() {
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes); // crypto.randomUUID needs HTTPS; a room network may not
    return Array.prototype.map
      .call(bytes, function (b) {
        return ("0" + b.toString(16)).slice(-2);
      })
      .join("");
  }

  function labelFor(params, form) {
    var label = ACTIONS[params.action];
    var button = form && form.querySelector("button");
    if (params.action === "vote" && button) label += " (" + button.textContent.trim() + ")";
    if (params.action === "predict" && params.value) label += " (" + params.value + ")";
    return label;
  }

  function say(text) {
    document.querySelectorAll(".pending-note").forEach(function (el) {
      el.textContent = text;
      el.hidden = !text;
    });
  }

  function update() {
    var now = Date.now();
    var waiting = Object.keys(pending)
      .filter(function (aid) {
        return down || now - pending[aid].at > SHOW_AFTER_MS;
      })
      .map(function (aid) {
        return pending[aid].label;
      });
    if (waiting.length) {
      say("Not sent yet: " + waiting.join(", ") + ". It is sent as soon as the connection is back.");
    } else if (!Object.keys(pending).length && lastWord) {
      say(lastWord);
    } else {
      say("");
    }
  }
  var lastWord = "";

  document.addEventListener("htmx:wsConfigSend", function (event) {
    var params = event.detail.parameters;
    if (!params || !ACTIONS[params.action]) return;
    var target = params.round || params.run || "";
    // A newer action on the same thing replaces one still pending: the latest choice wins.
    Object.keys(pending).forEach(function (aid) {
      var p = pending[aid].params;
      if (p.action === params.action && (p.round || p.run || "") === target) delete pending[aid];
    });
    params.aid = newId();
    params.at = String(Date.now()); // a later action on the same thing wins, however delivered
    var copy = {};
    Object.keys(params).forEach(function (k) {
      copy[k] = params[k];
    });
    pending[params.aid] = { params: copy, label: labelFor(params, event.target), at: Date.now(), again: false };
    lastWord = "";
    setTimeout(update, SHOW_AFTER_MS + 50);
  });

  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    var message = event.detail && event.detail.message;
    if (typeof message !== "string" || message.indexOf('{"ack"') !== 0) return;
    event.preventDefault(); // a control frame, not HTML to swap
    var ack;
    try {
      ack = JSON.parse(message);
    } catch (e) {
      return;
    }
    var item = pending[ack.ack];
    if (!item) return;
    delete pending[ack.ack];
    if (!ack.ok) {
      lastWord = "Not sent: " + item.label + ". " + (ack.message || "");
    } else if (item.again) {
      lastWord = "Sent after reconnecting: " + item.label + ".";
    }
    update();
  });

  document.addEventListener("htmx:wsClose", function () {
    down = true;
    update();
  });

  document.addEventListener("htmx:wsOpen", function (event) {
    down = false;
    var wrapper = event.detail.socketWrapper;
    // The extension sends what it queued while the socket was closed right after this
    // event; the rest went into the dead socket, so it goes again.
    var queued = (wrapper.queue || []).map(function (q) {
      return q.message;
    });
    Object.keys(pending).forEach(function (aid) {
      var item = pending[aid];
      item.again = true;
      var inQueue = queued.some(function (m) {
        return m.indexOf('"' + aid + '"') >= 0;
      });
      if (!inQueue) wrapper.send(JSON.stringify(item.params));
    });
    update();
  });
})();
