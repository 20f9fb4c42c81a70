"""A run page's full redraw (every panel, from what the run's reader holds), drawn once per last
id and shared by the pages that join at the same moment."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from teachlab.lab.live import fragments


@dataclass
class Redraws:
    cache: tuple[str, str] | None = None  # (last id, html)
    pending: tuple[str, asyncio.Future] | None = None  # (last id, a redraw in a thread)

    def now(self, reader) -> str:
        """Drawn in the loop, from the reader's picture (a resync)."""
        if self.cache and self.cache[0] == reader.last:
            return self.cache[1]
        html = fragments.render_redraw_html(
            reader.picture,
            counts=reader.counts,
            prediction=reader.prediction,
            done=reader.done,
            last=reader.last,
            events=reader.events,
        )
        self.cache = (reader.last, html)
        return html

    async def in_thread(self, reader) -> tuple[str, str]:
        """(last id, html), drawn in a thread from a copy of the events so that the loop goes
        on delivering batches meanwhile. (Drawn in the loop, a 200-event redraw held every
        socket of the process for 60-190 ms as fifty pages joined: scripts/bench_lab.py.)"""
        if self.cache and self.cache[0] == reader.last:
            return self.cache
        if self.pending is None:
            last = reader.last
            work = asyncio.ensure_future(
                asyncio.to_thread(
                    fragments.render_redraw_events,  # looked up per call: tests count them
                    list(reader.events),
                    counts=reader.counts,
                    prediction=reader.prediction,
                    done=reader.done,
                    last=last,
                )
            )
            self.pending = (last, work)

            def keep(future: asyncio.Future) -> None:
                if self.pending and self.pending[1] is future:
                    self.pending = None
                    if not future.cancelled() and future.exception() is None:
                        self.cache = (last, future.result())

            work.add_done_callback(keep)
        last, work = self.pending
        return last, await asyncio.shield(work)
