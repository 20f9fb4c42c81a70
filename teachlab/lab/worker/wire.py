"""The worker's one Redis call per event, spoken directly: EVALSHA over a socket of the calling
thread's own, encoded and parsed by hand.

Why not redis-py here: its pool, retry and observability layers cost about 0.13 ms of CPU per
command on our 2-core machine, three times the call itself, and the call sits in Celery's
consumer thread for every delivery (docs/measurements/history/lab.md). Everything else keeps
redis-py. Only
plain `redis://` URLs take this path; `wire_call` raises `WireUnsupported` otherwise and the
caller falls back to redis-py.
"""

from __future__ import annotations

import socket
import threading
from urllib.parse import unquote, urlsplit

import redis


class WireUnsupported(Exception):
    """This URL needs redis-py (TLS, a Unix socket, options we do not parse)."""


class _Local(threading.local):
    sock: socket.socket | None = None
    url: str = ""


_local = _Local()
CONNECT_TIMEOUT = 2.0
TIMEOUT = 5.0


def _encode(args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _parse(buf: bytes, pos: int = 0):
    """One RESP2 value from buf at pos: (value, next pos), or None when more bytes are needed.
    Errors come back as redis.ResponseError values (not raised), like redis-py's parser."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    kind, line = buf[pos : pos + 1], buf[pos + 1 : end]
    after = end + 2
    if kind == b":":
        return int(line), after
    if kind == b"+":
        return line.decode(), after
    if kind == b"-":
        return redis.ResponseError(line.decode(errors="replace")), after
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None, after
        if len(buf) < after + size + 2:
            return None
        return buf[after : after + size].decode(errors="replace"), after + size + 2
    if kind == b"*":
        count = int(line)
        items = []
        for _ in range(max(count, 0)):
            found = _parse(buf, after)
            if found is None:
                return None
            item, after = found
            items.append(item)
        return items, after
    raise redis.ConnectionError(f"unexpected reply from Redis: {buf[pos : pos + 40]!r}")


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    if parts.scheme != "redis" or parts.query:
        raise WireUnsupported(url)
    sock = socket.create_connection(
        (parts.hostname or "127.0.0.1", parts.port or 6379), timeout=CONNECT_TIMEOUT
    )
    sock.settimeout(TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    hello = []
    if parts.password:
        auth = ["AUTH", unquote(parts.password)]
        if parts.username:
            auth.insert(1, unquote(parts.username))
        hello.append(auth)
    db = (parts.path or "/0").strip("/") or "0"
    hello.append(["SELECT", db])
    for command in hello:
        sock.sendall(_encode(command))
        reply = _read(sock)
        if isinstance(reply, redis.ResponseError):
            sock.close()
            raise reply
    return sock


def _read(sock: socket.socket):
    buf = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise redis.ConnectionError("Redis closed the connection")
        buf += chunk
        found = _parse(buf)
        if found is not None:
            return found[0]


def wire_call(url: str, args) -> object:
    """Send one command on this thread's socket to `url` and return its reply (a
    redis.ResponseError value for an error reply).

    Failures come out as redis-py's exceptions: ConnectionError when Redis cannot be reached
    or hung up, TimeoutError when it did not answer in time (the command may have run, so it
    is not sent again). A socket kept from an earlier call that turns out dead (Redis
    restarted since) is replaced once: a dead socket never delivered the command."""
    for attempt in (1, 2):
        reused = _local.sock is not None and _local.url == url
        if not reused:
            wire_close()
            try:
                _local.sock, _local.url = _connect(url), url
            except OSError as exc:
                raise redis.ConnectionError(f"Redis at {_where(url)}: {exc}") from exc
        try:
            _local.sock.sendall(_encode(args))
            return _read(_local.sock)
        except TimeoutError as exc:
            wire_close()
            raise redis.TimeoutError(f"Redis at {_where(url)} did not answer in time") from exc
        except (OSError, redis.ConnectionError) as exc:
            wire_close()
            if reused and attempt == 1:
                continue
            raise redis.ConnectionError(f"Redis at {_where(url)}: {exc}") from exc
    raise AssertionError("unreachable")


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}"


def wire_close() -> None:
    if _local.sock is not None:
        try:
            _local.sock.close()
        except OSError:
            pass
    _local.sock = None
