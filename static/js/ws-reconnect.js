// htmx's WebSocket extension waits up to 64 s between reconnect attempts once a few have
// failed (full jitter, doubling each time). A classroom's Wi-Fi that drops for ten seconds
// would leave pages dark for up to a minute after it is back, so cap the wait at 4 s.
(function () {
  if (!window.htmx) return;
  htmx.config.wsReconnectDelay = function (retryCount) {
    var cap = Math.min(4000, 500 * Math.pow(2, Math.min(retryCount, 6)));
    return 250 + cap * Math.random();
  };
  // While the socket is down and the extension is trying again, a page with a
  // .reconnecting sign shows it. These are the close codes hx-ws 2 reconnects on
  // (django_htmx/static/django_htmx/ext/hx-ws-2.js, onclose); a 4xxx close (the room ended,
  // refused) is final and shows no sign.
  var RETRIED = [1006, 1011, 1012, 1013];
  function sign(show) {
    document.querySelectorAll(".reconnecting").forEach(function (el) {
      el.hidden = !show;
    });
  }
  document.addEventListener("htmx:wsClose", function (event) {
    var close = event.detail && event.detail.event;
    if (close && RETRIED.indexOf(close.code) >= 0) sign(true);
  });
  document.addEventListener("htmx:wsOpen", function () {
    sign(false);
  });

  // The heartbeat (teachlab/workshop/heartbeat.py). A Wi-Fi drop closes nothing: the
  // browser's socket stays "open" and silent, and the walk of issue 28 showed no sign for
  // 42 s. A socket on a [data-heartbeat] element pings every BEAT_MS; hearing nothing at all
  // for DEAD_MS (a socket that never opens, too) it is dropped and retried as after an
  // abnormal close, so the sign shows within DEAD_MS + CHECK_MS of a cut.
  var PING = '{"action":"ping"}';
  var PONG = '{"pong":1}';
  var BEAT_MS = 1000;
  var DEAD_MS = 3500;
  var CHECK_MS = 250;

  function beats(url) {
    url = url.split("?")[0]; // lab.js adds ?after= on a reconnect
    return Array.prototype.some.call(
      document.querySelectorAll("[ws-connect][data-heartbeat]"),
      function (el) {
        var path = el.getAttribute("ws-connect");
        return !!path && url.slice(-path.length) === path;
      }
    );
  }

  function drop(sock) {
    // Closing it ourselves would wait for the server's answer, which cannot come (Chromium
    // waits up to a minute) and end with code 1005, which the extension does not retry: so
    // its handlers are detached and the extension hears an abnormal close (1006) now.
    var onclose = sock.onclose;
    sock.onclose = null;
    sock.onerror = null;
    try {
      sock.close();
    } catch (e) {
      // already closing
    }
    if (onclose) onclose.call(sock, new CloseEvent("close", { code: 1006, reason: "no heartbeat" }));
  }

  function watch(sock) {
    var heard = Date.now();
    var sent = 0;
    sock.addEventListener("open", function () {
      heard = Date.now();
    });
    sock.addEventListener("message", function () {
      heard = Date.now();
    });
    var timer = setInterval(function () {
      var now = Date.now();
      if (sock.readyState === WebSocket.CLOSING || sock.readyState === WebSocket.CLOSED) {
        clearInterval(timer);
      } else if (now - heard > DEAD_MS) {
        clearInterval(timer);
        drop(sock);
      } else if (sock.readyState === WebSocket.OPEN && now - sent >= BEAT_MS) {
        sent = now;
        sock.send(PING);
      }
    }, CHECK_MS);
  }

  // The extension's documented hook for making its sockets (hx-ws-2.js, createWebSocket).
  htmx.createWebSocket = function (url) {
    var sock = new WebSocket(url, []);
    sock.binaryType = htmx.config.wsBinaryType;
    if (beats(url)) watch(sock);
    return sock;
  };

  // The server's answer to a ping is a control frame, not HTML to swap.
  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    if (event.detail && event.detail.message === PONG) event.preventDefault();
  });
})();
