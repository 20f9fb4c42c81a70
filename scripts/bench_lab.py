#!/usr/bin/env python
"""Benchmark (not a test): how long a lab event takes from the worker's signal to the watchers.

Against a running stack (scripts/run, or any daphne + lab workers), this fires one run through
the lab form as a fresh learner, opens N WebSocket clients on its page's socket with that
learner's session cookie (so they are the run's owner), and, optionally, one real Chromium
page. Every pushed fragment carries `data-at`, the epoch second the worker's signal fired;
latency = arrival time - data-at on the same machine's clock. The backlog sent on connect
(events from before the client joined) is not counted.

    .venv/bin/python scripts/bench_lab.py --base http://127.0.0.1:8000 --clients 50 --tasks 200

Prints p50 / p95 / max for the socket clients and, with --browser, for rows and cells added to
the page as a MutationObserver sees them, and saves them as a JSON result (bench-lab-<clients>) in
docs/measurements/results/ (teachlab/core/measurements.py; `--out DIR` for elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import os
import re
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402
from teachlab.core.percentiles import percentiles_ms  # noqa: E402

AT = re.compile(r'data-at="([0-9.]+)"')
GOALS = {  # watchers: the goal the README set for the event path
    50: "Chromium DOM p95 ≤ 100 ms with 50 watchers, five runs in a row",
    300: "Chromium DOM p95 ≤ 250 ms with 300 watchers",
}


def fire(base: str, *, lane: str, tasks: int, countdown: float, spacing: float):
    """POST the lab form as a new learner; return (run_id, session cookie)."""
    if not base.startswith(("http://", "https://")):
        sys.exit("--base must be an http(s) URL")
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/lab/", timeout=30).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": csrf,
            "lane": lane,
            "countdown": countdown,
            "count": tasks,
            "spacing": spacing,
            "duration": 0,
        }
    ).encode()
    headers = {"Referer": f"{base}/lab/"}
    request = urllib.request.Request(f"{base}/lab/", data=form, headers=headers)  # noqa: S310
    response = opener.open(request, timeout=60)
    match = re.search(r"/lab/runs/([\w-]+)/$", response.geturl())
    if match is None:
        body = response.read().decode(errors="replace")
        errors = re.findall(r'class="error">([^<]+)<', body)
        sys.exit(f"firing failed: {errors or response.geturl()}")
    session = next(c.value for c in jar if c.name == "sessionid")
    return match.group(1), session


async def client(url: str, origin: str, session: str, until: float, out: list[float]) -> int:
    import websockets

    headers = {"Cookie": f"sessionid={session}", "Origin": origin}
    frames = 0
    async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
        joined = time.time()
        first = True
        while time.time() < until:
            try:
                message = await asyncio.wait_for(ws.recv(), timeout=max(0.1, until - time.time()))
            except TimeoutError:
                break
            now = time.time()
            frames += 1
            if first:  # the backlog: events from before we joined
                first = False
                continue
            for at in AT.findall(message):
                at = float(at)
                if at >= joined:
                    out.append(now - at)
    return frames


def browser_watch(base: str, run_id: str, session: str, seconds: float) -> list[float]:
    from playwright.sync_api import sync_playwright

    host = urllib.parse.urlparse(base).hostname
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context()
        context.add_cookies([{"name": "sessionid", "value": session, "domain": host, "path": "/"}])
        page = context.new_page()
        page.add_init_script(
            """
            window.__lags = [];
            window.__arrivals = [];
            document.addEventListener('DOMContentLoaded', () => {
              const start = Date.now() / 1000;
              document.getElementById('live').addEventListener('htmx:wsBeforeMessage', (e) => {
                const now = Date.now() / 1000;
                for (const m of e.detail.message.matchAll(/data-at="([0-9.]+)"/g)) {
                  const at = parseFloat(m[1]);
                  if (at >= start) window.__arrivals.push(now - at);
                }
              });
              new MutationObserver((records) => {
                const now = Date.now() / 1000;
                for (const r of records) for (const n of r.addedNodes) {
                  if (n.nodeType !== 1) continue;
                  const hits = n.matches('[data-at]') ? [n] : [];
                  for (const el of hits) {
                    const at = parseFloat(el.dataset.at);
                    if (at >= start) window.__lags.push(now - at);
                  }
                }
              }).observe(document.getElementById('live'), {childList: true, subtree: true});
            });
            """
        )
        page.goto(f"{base}/lab/runs/{run_id}/")
        page.wait_for_timeout(seconds * 1000)
        lags = page.evaluate("window.__lags")
        arrivals = page.evaluate("window.__arrivals")
        browser.close()
    report("Chromium, socket message event (before htmx swaps it)", arrivals)
    return lags


def report(name: str, lags: list[float]) -> dict:
    """Print the lags' p50 / p95 / max; return them in ms (empty when there were none)."""
    if not lags:
        print(f"{name}: no live events measured")
        return {}
    ms = percentiles_ms(lags, qs=(0.5, 0.95), ndigits=1)
    print(
        f"{name}: n={len(lags)}  p50={ms['p50']:.1f} ms  p95={ms['p95']:.1f} ms  "
        f"max={ms['max']:.1f} ms"
    )
    return ms


def _figures(prefix: str, ms: dict) -> dict:
    return {f"{prefix}_{key}_ms": value for key, value in ms.items()}


async def main_async(args) -> dict:
    """Returns the figures of the result file."""
    run_id, session = fire(
        args.base, lane=args.lane, tasks=args.tasks, countdown=args.countdown,
        spacing=args.spacing,
    )  # fmt: skip
    print(f"run {run_id}: {args.tasks} tasks on {args.lane}, countdown {args.countdown} s")
    ws_base = args.base.replace("http", "ws", 1)
    until = time.time() + args.seconds
    lags: list[float] = []
    browser_task = None
    if args.browser:
        browser_task = asyncio.get_running_loop().run_in_executor(
            None, browser_watch, args.base, run_id, session, args.seconds
        )
    url = f"{ws_base}/ws/lab/runs/{run_id}/"
    dom = "Chromium page (signal -> row/cell in the DOM)"
    if args.clients == 0:
        return _figures("chromium_dom", report(dom, await browser_task))
    frames = await asyncio.gather(
        *(client(url, args.base, session, until, lags) for _ in range(args.clients))
    )
    print(f"{args.clients} socket clients received {sum(frames)} frames")
    figures = {"detail": {"frames": sum(frames)}}
    ms = report(f"{args.clients} WebSocket clients (signal -> frame received)", lags)
    figures.update(_figures("socket", ms))
    if browser_task is not None:
        figures.update(_figures("chromium_dom", report(dom, await browser_task)))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average during the run: {load} ({os.cpu_count()} cores)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--lane", default="redis-short")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--countdown", type=float, default=12)
    parser.add_argument("--spacing", type=float, default=0.02)
    parser.add_argument("--seconds", type=float, default=30, help="how long to watch")
    parser.add_argument("--browser", action="store_true", help="also watch in Chromium")
    out_option_add(parser)
    args = parser.parse_args()
    measurement = Measurement(f"bench-lab-{args.clients}", goal=GOALS.get(args.clients))
    figures = asyncio.run(main_async(args))
    print(f"result: {measurement.save(figures, out=args.out)}")


if __name__ == "__main__":
    main()
