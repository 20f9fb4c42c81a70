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
})();
