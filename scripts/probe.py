"""Attack probes against a running teachlab server, as someone on the same network would try
them: `scripts/probe --url http://host:port`. Each probe prints HELD or FAILED with what it
saw; the last line says how many held, and the exit status is 0 only when every probe held.

Meant for production mode (TEACHLAB_DEBUG=0), where it runs in CI
(tests/security/test_probe.py); it needs no account of its own: it signs up the one it uses.
Every probe is an HTTP request or a WebSocket handshake a browser-less client can send.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import select
import socket
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from websockets.exceptions import InvalidHandshake, InvalidStatus
from websockets.sync.client import connect

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
PASSWORD = "probe-" + secrets.token_urlsafe(12)


@dataclass
class Probe:
    name: str
    run: Callable[[Target], tuple[bool, str]]


class Target:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.ws_url = self.url.replace("http", "ws", 1)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, follow_redirects=False, timeout=30)

    def token(self, client: httpx.Client, path: str) -> str:
        page = client.get(path)
        found = TOKEN.search(page.text)
        if not found:
            raise RuntimeError(f"no CSRF token on {path} ({page.status_code})")
        return found.group(1)

    def post(self, client: httpx.Client, path: str, fields: dict, *, page: str | None = None):
        """A form post as its page sends it: the page's token, Origin and Referer."""
        token = self.token(client, page or path)
        return client.post(
            path,
            data={"csrfmiddlewaretoken": token, **fields},
            headers={"Origin": self.url, "Referer": self.url + (page or path)},
        )


# --- requests a page would never send ----------------------------------------------------------


def post_without_csrf_token(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        c.get("/lab/")
        r = c.post("/lab/", data={"lane": "redis-short", "count": "1"})
    return r.status_code == 403, f"POST /lab/ without a token: {r.status_code}"


def post_from_another_origin(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        token = t.token(c, "/lab/")
        r = c.post(
            "/lab/",
            data={"csrfmiddlewaretoken": token, "lane": "redis-short", "count": "1"},
            headers={"Origin": "http://evil.example", "Referer": "http://evil.example/"},
        )
    return r.status_code == 403, f"POST /lab/ with Origin evil.example: {r.status_code}"


def bad_host(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        r = c.get("/", headers={"Host": "evil.example"})
    return r.status_code == 400, f"GET / with Host evil.example: {r.status_code}"


def readyz_bad_host(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        r = c.get("/readyz", headers={"Host": "evil.example"})
    return r.status_code == 400, f"GET /readyz with Host evil.example: {r.status_code}"


def security_headers(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        h = c.get("/").headers
    wanted = {
        "content-security-policy": lambda v: "script-src" in v and "unsafe-inline" not in v,
        "x-frame-options": lambda v: v.upper() == "DENY",
        "x-content-type-options": lambda v: v == "nosniff",
        "referrer-policy": lambda v: bool(v),
        "cross-origin-opener-policy": lambda v: v == "same-origin",
    }
    missing = [name for name, ok in wanted.items() if not ok(h.get(name, ""))]
    return not missing, f"missing or weak: {missing}" if missing else "all present"


def open_redirect_after_sign_in(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        name = _account(t)
        r = t.post(
            c,
            "/accounts/login/?next=https://evil.example/",
            {"username": name, "password": PASSWORD},
        )
    where = r.headers.get("location", "")
    held = r.status_code == 302 and "evil.example" not in where
    return held, f"sign-in with next=https://evil.example: {r.status_code} to {where!r}"


def reflected_markup_is_escaped(t: Target) -> tuple[bool, str]:
    payload = '<script>alert("probe")</script><img src=x onerror=alert(1)>'
    with t.client() as c:
        r = c.get("/search/", params={"q": payload})
        glossary = c.get("/glossary/", params={"q": payload})
    raw = payload in r.text or payload in glossary.text
    return r.status_code < 500 and not raw, f"/search/ {r.status_code}, raw markup echoed: {raw}"


# --- what belongs to someone else, or to the instructor ------------------------------------------


_runs: dict[str, tuple[str, dict[str, str]]] = {}


def _own_run(t: Target) -> tuple[str, dict[str, str]]:
    """A one-task run fired by a visitor of the probe's own: its id and that visitor's cookies
    (the other probes try to reach it from elsewhere)."""
    if "run" not in _runs:
        fields = {"lane": "redis-short", "count": "1", "countdown": "0", "duration": "0"}
        with t.client() as c:
            r = t.post(c, "/lab/", {**fields, "prediction": ""})
            found = re.search(r"/lab/runs/([A-Za-z0-9_-]+)/", r.headers.get("location", ""))
            if r.status_code != 302 or not found:
                raise RuntimeError(f"the probe's own run was refused ({r.status_code})")
            _runs["run"] = (found.group(1), dict(c.cookies))
    return _runs["run"]


def another_learners_run(t: Target) -> tuple[bool, str]:
    run_id, owner = _own_run(t)
    paths = [f"/lab/runs/{run_id}/", f"/lab/runs/{run_id}/export.json"]
    with t.client() as c:
        c.cookies.update(owner)
        own = [c.get(path).status_code for path in paths]
    with t.client() as c:
        c.get("/lab/")  # a visitor of its own, with a session
        other = [c.get(path).status_code for path in paths]
    held = own == [200, 200] and other == [404, 404]
    return held, f"the owner got {own}, another visitor {other}"


def worker_controls_for_a_visitor(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        token = t.token(c, "/lab/")
        r = c.post(
            "/lab/workers/redis-short-1/crash/",
            data={"csrfmiddlewaretoken": token},
            headers={"Origin": t.url, "Referer": t.url + "/lab/"},
        )
    return r.status_code == 403, f"POST crash as a visitor: {r.status_code}"


def admin_for_a_learner(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        name = _account(t)
        signed = t.post(c, "/accounts/login/", {"username": name, "password": PASSWORD})
        if signed.status_code != 302 or "/login/" in signed.headers.get("location", ""):
            return False, f"the probe's own sign-in failed: {signed.status_code}"
        r = c.get("/admin/")
    where = r.headers.get("location", "")
    return r.status_code == 302 and "/login/" in where, f"/admin/ as a learner: {r.status_code}"


def socket_from_another_origin(t: Target) -> tuple[bool, str]:
    """The owner's cookies on their own run's socket: its own origin opens it (else the probe
    shows nothing), and another scheme, another port of the same host and another host are
    refused, as a page there would be that the owner's browser visits with the same cookies."""
    run_id, owner = _own_run(t)
    cookie = "; ".join(f"{name}={value}" for name, value in owner.items())

    def opens(origin: str) -> bool:
        try:
            with connect(
                f"{t.ws_url}/ws/lab/runs/{run_id}/",
                additional_headers={"Origin": origin, "Cookie": cookie},
                open_timeout=10,
            ):
                return True
        except (InvalidStatus, InvalidHandshake):
            return False

    if not opens(t.url):
        return False, "the owner's socket from the server's own origin was refused too"
    others = [f"https://{t.host}:{t.port}", f"http://{t.host}:{t.port + 1}", "http://evil.example"]
    opened = [origin for origin in others if opens(origin)]
    return not opened, f"opened from {opened}" if opened else "3 foreign origins refused"


# --- throttles and budgets ----------------------------------------------------------------------

_accounts: dict[str, str] = {}


def _account(t: Target) -> str:
    """One account of the probe's own, signed up through the sign-up page."""
    if "name" not in _accounts:
        name = "probe" + secrets.token_hex(3)
        with t.client() as c:
            r = t.post(
                c,
                "/accounts/signup/",
                {"username": name, "password1": PASSWORD, "password2": PASSWORD},
            )
        if r.status_code not in (200, 302):
            raise RuntimeError(f"sign-up answered {r.status_code}")
        _accounts["name"] = name
    return _accounts["name"]


def sign_in_throttle_sees_unicode_spellings(t: Target) -> tuple[bool, str]:
    name = _account(t)
    with t.client() as c:
        for _ in range(6):
            t.post(c, "/accounts/login/", {"username": name, "password": "wrong-password"})
    spellings = {
        "fullwidth": "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in name),
        "upper": name.upper(),
    }
    let_in = []
    for label, spelling in spellings.items():
        assert unicodedata.normalize("NFKC", spelling).lower() == name
        with t.client() as c:
            r = t.post(c, "/accounts/login/", {"username": spelling, "password": PASSWORD})
        if r.status_code != 429:
            let_in.append(f"{label}: {r.status_code}")
    return not let_in, f"not throttled: {let_in}" if let_in else "every spelling got 429"


def sign_up_does_not_tell_who_exists(t: Target) -> tuple[bool, str]:
    name = _account(t)
    with t.client() as c:
        r = t.post(
            c,
            "/accounts/signup/",
            {"username": name, "password1": PASSWORD + "x", "password2": PASSWORD + "x"},
        )
    told = "already exists" in r.text or "is taken" in r.text
    return not told, "the answer names the account as existing" if told else "no enumeration"


def weak_password_refused(t: Target) -> tuple[bool, str]:
    with t.client() as c:
        name = "probe" + secrets.token_hex(3)
        r = t.post(
            c, "/accounts/signup/", {"username": name, "password1": "123", "password2": "123"}
        )
    return r.status_code != 302, f"sign-up with password 123: {r.status_code}"


def over_budget_run_refused(t: Target) -> tuple[bool, str]:
    fields = {"lane": "redis-short", "count": "2000", "countdown": "10800", "prediction": ""}
    with t.client() as c:
        r = t.post(c, "/lab/", fields)
    alert = re.search(r'role="alert".*?</div>', r.text, re.S)
    said = alert.group(0) if alert else ""
    refused = r.status_code in (400, 429) and "deliveries" in said and "at most" in said
    return refused, f"2000 tasks x 3 h on the 10 s lane: {r.status_code}" + (
        "" if refused else f", not refused for its cost ({r.headers.get('location', '')})"
    )


def progress_import_refuses_nested_and_huge(t: Target) -> tuple[bool, str]:
    bodies = {
        "nested": "[" * 5000 + "]" * 5000,
        "huge int": '{"version": 1, "answers": [' + "9" * 5000 + "]}",
    }
    seen = {}
    with t.client() as c:
        for label, body in bodies.items():
            token = t.token(c, "/progress/")
            r = c.post(
                "/progress/import/",
                data={"csrfmiddlewaretoken": token},
                files={"file": ("progress.json", body.encode(), "application/json")},
                headers={"Origin": t.url, "Referer": t.url + "/progress/"},
            )
            seen[label] = r.status_code
    return all(400 <= s < 500 for s in seen.values()), f"statuses: {seen}"


def _raw_post_head(t: Target, *, length: int | None) -> bytes:
    """A JSON post to the 2 MB import endpoint as a browser page would send it, with a body of
    `length` bytes, or chunked when None."""
    with t.client() as c:
        token = t.token(c, "/progress/")
        cookie = "; ".join(f"{name}={value}" for name, value in c.cookies.items())
    sized = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST /progress/import/ HTTP/1.1\r\nHost: {t.host}:{t.port}\r\n"
        f"Content-Type: application/json\r\nCookie: {cookie}\r\nX-CSRFToken: {token}\r\n"
        f"Origin: {t.url}\r\nReferer: {t.url}/progress/\r\n{sized}\r\n\r\n"
    ).encode()


def _status_line(sock: socket.socket, *, within: float) -> str:
    sock.settimeout(within)
    try:
        return sock.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
    except (TimeoutError, OSError) as exc:
        return f"no answer ({type(exc).__name__})"


def oversized_body_stopped(t: Target) -> tuple[bool, str]:
    """A body over the limit is refused while it is read, never spooled first: one announced
    as 300 MB gets its answer after 64 KB, and a chunked one once it passes the limit."""
    with socket.create_connection((t.host, t.port), timeout=10) as sock:
        sock.sendall(_raw_post_head(t, length=300 * 1024 * 1024) + b"x" * 65536)
        announced = _status_line(sock, within=10)
    piece, sent = b"x" * 65536, 0
    with socket.create_connection((t.host, t.port), timeout=10) as sock:
        sock.sendall(_raw_post_head(t, length=None))
        while sent < 64 * 1024 * 1024 and not select.select([sock], [], [], 0)[0]:
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:
                break
            sent += len(piece)
        chunked = _status_line(sock, within=10)
    refused = [line for line in (announced, chunked) if re.match(r"HTTP/1\.1 4\d\d", line)]
    # a server that read it all answers after the whole 64 MB; loopback buffers take some first
    held = len(refused) == 2 and sent < 32 * 1024 * 1024
    return held, (
        f"300 MB announced: {announced!r} after 64 KB; chunked: {chunked!r} after "
        f"{sent / 1024 / 1024:.0f} MB"
    )


def cookieless_client_gets_one_quota(t: Target) -> tuple[bool, str]:
    """Progress imports from a client that keeps only its CSRF cookie and drops the session
    and visitor cookies before each: charged to its network's pool, not a fresh quota each."""
    accepted = 0
    body = json.dumps({"format": "teachlab-progress", "version": 1}).encode()
    with t.client() as c:
        token = t.token(c, "/progress/")
        csrf = c.cookies.get("csrftoken")
        for _ in range(15):
            c.cookies.clear()
            c.cookies.set("csrftoken", csrf)
            r = c.post(
                "/progress/import/",
                data={"csrfmiddlewaretoken": token},
                files={"file": ("p.json", body, "application/json")},
                headers={"Origin": t.url, "Referer": t.url + "/progress/"},
            )
            accepted += r.status_code != 429
    return accepted <= 10, f"{accepted} of 15 cookie-less imports answered without 429"


def sign_up_throttled(t: Target) -> tuple[bool, str]:
    """Sign-ups from one network are budgeted: the 30th in a row is refused (run last: it
    spends the network's budget, which the probes' own account needs)."""
    codes = []
    with t.client() as c:
        for _ in range(30):
            name = "probe" + secrets.token_hex(4)
            r = t.post(
                c,
                "/accounts/signup/",
                {"username": name, "password1": PASSWORD, "password2": PASSWORD},
            )
            codes.append(r.status_code)
            c.cookies.clear()
            if r.status_code == 429:
                break
    return codes[-1] == 429, f"{len(codes)} sign-ups, the last answered {codes[-1]}"


PROBES = [
    Probe("POST without a CSRF token", post_without_csrf_token),
    Probe("POST from another origin", post_from_another_origin),
    Probe("bad Host header", bad_host),
    Probe("/readyz with a bad Host", readyz_bad_host),
    Probe("security headers", security_headers),
    Probe("reflected markup", reflected_markup_is_escaped),
    Probe("someone else's run", another_learners_run),
    Probe("worker controls as a visitor", worker_controls_for_a_visitor),
    Probe("admin as a learner", admin_for_a_learner),
    Probe("socket from another origin", socket_from_another_origin),
    Probe("open redirect after sign-in", open_redirect_after_sign_in),
    Probe("sign-up enumeration", sign_up_does_not_tell_who_exists),
    Probe("weak password", weak_password_refused),
    Probe("sign-in throttle, Unicode spellings", sign_in_throttle_sees_unicode_spellings),
    Probe("over-budget lab run", over_budget_run_refused),
    Probe("nested and huge JSON import", progress_import_refuses_nested_and_huge),
    Probe("oversized request body", oversized_body_stopped),
    Probe("cookie-less quota", cookieless_client_gets_one_quota),
    Probe("sign-up throttle", sign_up_throttled),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--only", action="append", default=[], help="a probe's function name")
    args = parser.parse_args(argv)
    target = Target(args.url)
    chosen = [p for p in PROBES if not args.only or p.run.__name__ in args.only]
    held = 0
    for probe in chosen:
        try:
            ok, detail = probe.run(target)
        except Exception as exc:  # a probe that cannot run is not one that held
            ok, detail = False, f"could not run: {type(exc).__name__}: {exc}"
        held += ok
        print(f"{'HELD  ' if ok else 'FAILED'} {probe.name}: {detail}", flush=True)
    print(f"{held} of {len(chosen)} probes held")
    return 0 if held == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
