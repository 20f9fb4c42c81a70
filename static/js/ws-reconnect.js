// htmx's WebSocket extension waits up to 64 s between reconnect attempts once a few have
// failed (full jitter, doubling each time). A classroom's Wi-Fi that drops for ten seconds
// would leave pages dark for up to a minute after it is back, so cap the wait at 4 s.
(function () {
  if (!window.htmx) return;
  htmx.config.wsReconnectDelay = function (retryCount) {
    var cap = Math.min(4000, 500 * Math.pow(2, Math.min(retryCount, 6)));
    return 250 + cap * Math.random();
  };
})();
