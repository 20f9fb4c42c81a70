"""Limits the production server (`scripts/serve`: gunicorn with uvicorn workers) enforces while
it reads, checked on a real server process over real sockets: a WebSocket frame over the cap is
refused from its header, before its payload is read, and a request body over the limit is
refused while it is read; a bad Host is one log line."""

from __future__ import annotations

import os
import re
import select
import socket
import struct
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.stack import manage
from tests.support.http import Visitor
from tests.test_multiprocess import PASSWORD, Served, sign_in

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def served():
    manage("migrate", "--noinput", "-v", "0")
    manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        f"User.objects.get_or_create(username='limits-staff', defaults={{'is_staff': True}})\n"
        f"u = User.objects.get(username='limits-staff'); u.set_password('{PASSWORD}'); u.save()",
    )
    server = Served("limits").start()
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _participant_socket(server: Served):
    presenter = Visitor()
    sign_in(presenter, server, "limits-staff")
    present_url, _, _ = presenter.post(
        f"{server.url}/workshop/", f"{server.url}/workshop/rooms/new/", {"title": "Limits"},
        check=True,
    )  # fmt: skip
    code = re.search(r"/workshop/r/([A-Z0-9]+)/present/", present_url).group(1)
    participant = Visitor()
    join = f"{server.url}/workshop/join/"
    participant.post(join, join, {"code": code, "nickname": "Ana"}, check=True)
    return server.ws(
        f"/ws/workshop/{code}/", f"tl_seat_{code}={participant.cookie(f'tl_seat_{code}')}"
    )


def _frame_header(length: int) -> bytes:
    """A masked client text frame's header announcing `length` bytes of payload."""
    return bytes([0x81, 0x80 | 127]) + struct.pack("!Q", length) + os.urandom(4)


def test_a_frame_announcing_more_than_the_cap_is_refused_before_its_payload_is_sent(served):
    """The header says 16 MiB (uvicorn's own limit, less one byte) and only 1 KB follows: the
    server closes with 1009 at once instead of waiting to read the rest into memory."""
    with _participant_socket(served) as ws:
        ws.recv(timeout=10)  # the room as it is
        ws.socket.sendall(_frame_header(16 * 1024 * 1024 - 1) + b"x" * 1024)
        started = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert time.monotonic() - started < 5


def test_a_bad_host_is_one_log_line_without_a_traceback(served):
    before = served.log.stat().st_size
    response = httpx.get(f"{served.url}/", headers={"Host": "evil.example"}, timeout=20)
    assert response.status_code == 400
    deadline = time.monotonic() + 10
    while "evil.example" not in (logged := _log_since(served, before)):
        assert time.monotonic() < deadline, f"nothing logged for the bad Host:\n{logged}"
        time.sleep(0.2)
    time.sleep(0.5)  # a traceback would follow its line at once
    logged = _log_since(served, before)
    lines = [line for line in logged.splitlines() if line.strip()]
    assert len(lines) == 1, logged
    assert "Invalid HTTP_HOST header: 'evil.example'" in lines[0]
    assert "Traceback" not in logged


def _log_since(server: Served, offset: int) -> str:
    with server.log.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def _post_head(server: Served, *, length: int | None) -> bytes:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST /progress/import/ HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode()


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_a_300_mb_body_is_refused_from_its_length_before_it_is_read(served):
    """Only 64 KB of the 300 MB is sent: the answer comes without the rest, so nothing waited to
    spool it (before, Django read it all to a temporary file, then the view said 400)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(_post_head(served, length=300 * 1024 * 1024) + b"x" * 65536)
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(served):
    """No length to refuse it by: the server reads until the body passes 4 MB, answers 413, and
    reads no more (the client stops sending when the answer comes)."""
    piece = b"x" * 65536
    sent = 0
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(_post_head(served, length=None))
        while sent < 64 * 1024 * 1024 and not select.select([sock], [], [], 0)[0]:
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:
                break
            sent += len(piece)
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # A server that read it all would answer after the whole 64 MB; what the loopback buffers
    # take before the answer comes grows with the machine's load (10 MB seen at load 9).
    assert sent < 32 * 1024 * 1024, f"{sent:,} bytes sent before the answer"
