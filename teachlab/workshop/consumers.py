"""The room's sockets: thin. Identify, join the room's hub, validate each frame, call a service.

A participant socket can only vote, predict and answer; a presenter socket needs the room's
instructor (or staff) and can also drive, reveal, fire, close and moderate (lock, kick,
readmit, rename); the projector's socket needs the same people and only listens.

Around them, plain functions: who a socket serves (socketaccess.py), what it is sent
(socketstate.py), what its frames set off (socketeffects.py), an action taken once however
often it comes (actiononce.py), and the votes and guesses stored a batch at a time
(castbatches.py). A presenter's frame goes through presenting.act like the console's buttons.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time

from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth import get_user_model

from teachlab.core import dbbusy
from teachlab.core.dbasync import HubFed, NoHopDispatch, db_async
from teachlab.core.socketframes import FrameSizeCapped
from teachlab.core.socketnames import CLOSE_ENDED, CLOSE_REFUSED
from teachlab.workshop import (
    actionids,
    fragments,
    heartbeat,
    presenting,
    ratelimit,
    socketaccess,
    socketeffects,
    socketstate,
)
from teachlab.workshop.actiononce import action_once
from teachlab.workshop.castbatches import PREDICTIONS, VOTES
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.frames import Frame, frame_aid, frame_parse
from teachlab.workshop.hub import hub_join, hub_leave
from teachlab.workshop.models import Room, Seat


class RoomSocket(FrameSizeCapped, HubFed, NoHopDispatch, AsyncWebsocketConsumer):
    is_presenter = False
    is_screen = False
    seat_id: int | None = None
    closing = False  # set when the server closes it: frames still queued are not acted on
    watch: asyncio.Task | None = None  # the silence watch, from the page's first beat
    silent = False  # counted out by the watch; any frame counts it back in
    frame_limit = ratelimit.PARTICIPANT_FRAMES
    room_frame_limit = ratelimit.ROOM_FRAMES

    async def connect(self) -> None:
        self.room_id = None
        self.heard_at = time.monotonic()
        code = self.scope["url_route"]["kwargs"]["code"]
        found = await db_async(self.identify)(code)
        if found is None:
            await self.close(code=CLOSE_REFUSED)
            return
        room, run_id = found
        self.room_id = room.pk
        await self.accept()
        if not room.is_open:
            await self.send(text_data=await db_async(self.render_ended)())
            await self.close(code=CLOSE_ENDED)
            return
        await hub_join(self.room_id, self, run_id=run_id)
        await self.send(text_data=await db_async(self.render_state)())
        await self.presence_change(entering=True)

    async def disconnect(self, code) -> None:
        if self.watch is not None:
            self.watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watch
        if self.room_id is not None:
            await hub_leave(self.room_id, self)
            await self.presence_change(entering=False)

    async def presence_change(self, *, entering: bool) -> None:
        """Participants count as present while their socket is open (presence.py)."""

    async def hub_push(self, html: str, *, close: bool = False, code: int | None = None) -> None:
        if html:
            await self.send(text_data=html)
        if close:
            self.closing = True
            # Out of the room's presence now, not when the browser's close frame comes back:
            # a removed seat must drop out of "N connected" with the presenter's next redraw.
            await self.presence_change(entering=False)
            await self.close(code=code or CLOSE_ENDED)

    async def beat(self) -> None:
        """A page's ping (heartbeat.py): answered, outside the frame budget; the first arms
        the silence watch."""
        await self.send(text_data=heartbeat.PONG)
        if self.watch is None:
            self.watch = asyncio.create_task(
                heartbeat.silence_watch(lambda: self.heard_at, self.fell_silent)
            )

    async def fell_silent(self) -> None:
        """No frame for heartbeat.SILENT_SECONDS: a silent cut, counted out of the room now."""
        self.silent = True
        await self.presence_change(entering=False)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if self.closing:
            return
        self.heard_at = time.monotonic()
        if self.silent:
            self.silent = False
            await self.presence_change(entering=True)
        if heartbeat.is_ping(text_data):
            await self.beat()
            return
        refusal = await self.over_budget()
        if refusal:
            await self.send(text_data=fragments.error_html(refusal))
            await self.ack(frame_aid(text_data), refusal=refusal)
            return
        aid, refused = "", None
        try:
            frame = frame_parse(text_data, presenter=self.is_presenter)
            aid = frame.aid
            html = await self.act_once(frame)
        except WorkshopError as exc:
            aid = aid or frame_aid(text_data)
            html, refused = fragments.error_html(exc.message), exc.message
        else:
            await socketeffects.frame_acted(room_id=self.room_id, action=frame.action)
        if html:
            await self.send(text_data=html)
        if html is not None:
            await self.ack(aid, refusal=refused)

    async def act_once(self, frame: Frame) -> str | None:
        """Participants' actions carry an id (actionids.py); presenters' are acted on as sent."""
        return await self.act_async(frame)

    async def ack(self, aid: str, *, refusal: str | None) -> None:
        """Tell the page its action `aid` was taken, or refused and why (ws-pending.js)."""
        if aid and self.seat_id is not None:
            frame = actionids.ack_frame(aid, ok=refusal is None, message=refusal or "")
            await self.send(text_data=frame)

    async def database_busy(self, message) -> None:
        """A frame whose database work failed is answered like a refused one (nothing of it
        was stored: its transaction rolled back); a handshake that failed closes to retry."""
        if message["type"] == "websocket.receive":
            await self.send(text_data=fragments.error_html(dbbusy.SOCKET_MESSAGE))
        else:
            await super().database_busy(message)

    async def act_async(self, frame: Frame) -> str:
        return await db_async(self.act)(frame)

    async def over_budget(self) -> str:
        """Why this frame is refused before it is read, or "" to go ahead."""
        return await socketeffects.frame_refusal(self.budgets())

    # --- run in a thread (database) ---
    def identify(self, code: str):
        raise NotImplementedError

    def render_state(self) -> str:
        raise NotImplementedError

    def render_ended(self) -> str:
        return socketstate.participant_ended_html(self.room_id)

    def act(self, frame: Frame) -> str:
        raise NotImplementedError

    def budgets(self) -> list[tuple[str, int]]:
        """(who, frames per window) this socket's frames spend from, its own first."""
        raise NotImplementedError


class ParticipantSocket(RoomSocket):
    def identify(self, code: str):
        found = socketaccess.participant_identify(code, self.scope.get("cookies"))
        if found is None:
            return None
        room, self.seat_id = found
        return room, socketaccess.run_to_follow(room)

    def seat_ref(self) -> Seat:
        """The seat by its ids only: the services re-read the room themselves."""
        return Seat(pk=self.seat_id, room_id=self.room_id)

    def budgets(self) -> list[tuple[str, int]]:
        # The room's budget as well: scripted seats must not each bring a budget of their own.
        return [
            (f"seat:{self.seat_id}", self.frame_limit),
            (f"room:{self.room_id}", self.room_frame_limit),
        ]

    async def presence_change(self, *, entering: bool) -> None:
        if not entering and not getattr(self, "present", False):
            return  # left already (a server-side close comes before the disconnect)
        if not hasattr(self, "socket_key"):
            self.socket_key = secrets.token_hex(8)
        self.present = entering
        await socketeffects.seat_presence_change(
            room_id=self.room_id,
            seat_id=self.seat_id,
            socket_key=self.socket_key,
            entering=entering,
        )

    def render_state(self) -> str:
        return socketstate.participant_state_html(self.seat_id)

    async def act_once(self, frame: Frame) -> str | None:
        """Once per action id, however often the frame comes (actiononce.py)."""
        return await action_once(
            seat_id=self.seat_id,
            frame=frame,
            act=self.act_async,
            state=db_async(self.render_state),
        )

    async def act_async(self, frame: Frame) -> str:
        # A room's votes and guesses are stored together (batching.py).
        if frame.action == "vote":
            ballot = (self.seat_id, frame.fields["round"], frame.fields["choice"])
            return await VOTES.submit(self.room_id, ballot)
        if frame.action == "predict":
            guess = (self.seat_id, frame.fields["run"], frame.fields["value"])
            return await PREDICTIONS.submit(self.room_id, guess)
        return await super().act_async(frame)

    def act(self, frame: Frame) -> str:
        if frame.action == "answer":
            return socketstate.answer_html(seat=self.seat_ref(), fields=frame.fields)
        raise WorkshopError("Unknown action.")


class PresenterSocket(RoomSocket):
    is_presenter = True
    frame_limit = ratelimit.PRESENTER_FRAMES

    def identify(self, code: str):
        user = self.scope.get("user")
        room = socketaccess.driver_identify(code, user)
        if room is None:
            return None
        self.user_id = user.pk
        return room, socketaccess.run_to_follow(room)

    def budgets(self) -> list[tuple[str, int]]:
        return [(f"presenter:{self.room_id}:{self.user_id}", self.frame_limit)]

    def room(self) -> Room:
        """The room, if this socket's user may still drive it (read again for each action)."""
        return socketaccess.driven_room(
            room_id=self.room_id, user_id=self.user_id, scope=self.scope
        )

    def render_state(self) -> str:
        return socketstate.presenter_state_html(self.room_id)

    def render_ended(self) -> str:
        return socketstate.presenter_ended_html(self.room_id)

    def act(self, frame: Frame) -> str:
        if frame.action in ("vote", "predict", "answer"):
            raise WorkshopError("The presenter screen does not vote; join as a participant.")
        room = self.room()
        # The same path as the console's buttons (actionviews.action_view): presenting.act.
        user = get_user_model().objects.get(pk=self.user_id)
        presenting.act(room=room, action=frame.action, fields=frame.fields, user=user)
        return fragments.error_html("")


class ScreenSocket(PresenterSocket):
    """The projector view: the instructor's (or staff's) read-only screen for the room."""

    is_presenter = False
    is_screen = True

    def budgets(self) -> list[tuple[str, int]]:
        return [(f"screen:{self.room_id}:{self.user_id}", self.frame_limit)]

    def render_state(self) -> str:
        return socketstate.screen_state_html(self.room_id)

    def render_ended(self) -> str:
        return socketstate.screen_ended_html(self.room_id)

    def act(self, frame: Frame) -> str:
        raise WorkshopError("The projector view only shows the room: use the instructor console.")
