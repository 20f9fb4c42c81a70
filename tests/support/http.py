"""A browser's cookie jar and forms, without the browser (httpx): what the drills, the
several-servers tests and the experiment jobs tests send to servers they started. Cookies for
127.0.0.1 go to any port, as a browser sends them to one site behind a proxy."""

from __future__ import annotations

import re

import httpx

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Visitor:
    def __init__(self) -> None:
        self.client = httpx.Client(follow_redirects=True, timeout=30)
        self.headers = httpx.Headers()  # the last post's response headers (any case)

    def cookie(self, name: str) -> str:
        for c in self.client.cookies.jar:
            if c.name == name:
                return c.value
        raise AssertionError(f"no {name} cookie; have {[c.name for c in self.client.cookies.jar]}")

    def open(self, method: str, url: str, **kwargs) -> httpx.Response:
        """Any request; an HTTP error status is returned, not raised."""
        return self.client.request(method, url, **kwargs)

    def get(self, url: str, timeout: float = 20) -> tuple[str, str]:
        """(final url, body) of a page that must answer 2xx (a 4xx or 5xx raises)."""
        response = self.client.get(url, timeout=timeout)
        response.raise_for_status()
        return str(response.url), response.text

    def token(self, page_url: str) -> str:
        found = TOKEN.search(self.get(page_url)[1])
        assert found, f"no CSRF token on {page_url}"
        return found.group(1)

    def post(self, page_url: str, action_url: str, fields: dict, *, token: str | None = None,
             headers: dict | None = None, timeout: float = 30,
             check: bool = False) -> tuple[str, int, str]:  # fmt: skip
        """Post a form as the page would (its CSRF token, Origin and Referer): (final url,
        status, body); `self.headers` keeps the response's headers. An HTTP error status is
        returned, so a drill can read a 503's message, unless `check` asks for a 2xx."""
        token = token or self.token(page_url)
        origin = re.match(r"https?://[^/]+", page_url).group(0)
        response = self.client.post(
            action_url,
            data={"csrfmiddlewaretoken": token, **fields},
            headers={"Origin": origin, "Referer": page_url, **(headers or {})},
            timeout=timeout,
        )
        self.headers = response.headers
        if check:
            assert response.is_success, (
                f"{action_url}: {response.status_code}\n{response.text[-2000:]}"
            )
        return str(response.url), response.status_code, response.text
