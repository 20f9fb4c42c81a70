"""The room's sockets: thin. Identify, join the room's hub, validate each frame, call a service.

A participant socket can only vote, predict and answer; a presenter socket needs the room's
instructor (or staff) and can also drive, reveal, fire, close and moderate (lock, kick,
readmit, rename); the projector's socket needs the same people and only listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from importlib import import_module
from types import SimpleNamespace

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model

from teachlab import dbbusy
from teachlab.dbasync import HubFed, NoHopDispatch, db_async
from teachlab.socketframes import FrameSizeCapped
from teachlab.socketnames import CLOSE_ENDED, CLOSE_REFUSED
from teachlab.workshop import (
    actionids,
    broadcast,
    fragments,
    heartbeat,
    livecounts,
    predictions,
    presence,
    presenting,
    ratelimit,
    rooms,
    rounds,
    screens,
    selectors,
    votes,
)
from teachlab.workshop.batching import RoomBatcher
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.frames import Frame, frame_aid, frame_parse
from teachlab.workshop.hub import hub_join, hub_leave
from teachlab.workshop.models import Room, Seat

log = logging.getLogger(__name__)

REFRESHES = {"predict": "spread", "answer": "answers"}  # what the presenter redraws after each
COUNTED = {"vote", "predict", "answer"}  # what changes the live counts (livecounts.py)


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
            if frame.action in REFRESHES:
                await broadcast.presenter_refresh_soon(
                    room_id=self.room_id, part=REFRESHES[frame.action]
                )
            if frame.action in COUNTED:
                await livecounts.counts_refresh_soon(room_id=self.room_id)
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
        try:
            spent = await ratelimit.frames_spend(self.budgets())
        except Exception:  # noqa: BLE001 - no budget check, no frame: refuse rather than trust
            log.warning("workshop rate limit unavailable", exc_info=True)
            return "The server is busy; send that again in a moment."
        if spent == 0:
            return ""
        if spent == 1:
            return "Too many messages; wait a moment."
        return (
            "The whole room is sending too many messages at once; send that again in a few seconds."
        )

    # --- run in a thread (database) ---
    def identify(self, code: str):
        raise NotImplementedError

    def render_state(self) -> str:
        raise NotImplementedError

    def render_ended(self) -> str:
        room = Room.objects.get(pk=self.room_id)
        return fragments.participant_html(room, ["ended"])

    def act(self, frame: Frame) -> str:
        raise NotImplementedError

    def budgets(self) -> list[tuple[str, int]]:
        """(who, frames per window) this socket's frames spend from, its own first."""
        raise NotImplementedError


def user_now(scope: dict):
    """The user the socket's session names now (AnonymousUser once it signed out or its
    password changed): the scope's user is the one at the handshake."""
    from django.contrib.auth import get_user

    session = scope.get("session")
    key = getattr(session, "session_key", None)
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    return get_user(SimpleNamespace(session=store))


def _run_to_follow(room: Room) -> str:
    shared = room.shared_run
    if shared is not None and shared.run_id and shared.observed is None:
        return shared.run_id
    return ""


def _own_answers(results: list, key, draw) -> list:
    """Each sender's own confirmation, drawn once per distinct `key(result)` (a small context,
    not the whole room's), or its refusal as the WorkshopError itself."""
    drawn: dict = {}
    out: list = []
    for result in results:
        if isinstance(result, WorkshopError):
            out.append(result)
            continue
        k = key(result)
        if k not in drawn:
            drawn[k] = draw(result)
        out.append(drawn[k])
    return out


def _votes_html(room_id: int, ballots: list[tuple[int, int, str]]) -> list:
    return _own_answers(
        votes.votes_cast(room_id=room_id, ballots=ballots),
        lambda vote: vote.choice,
        lambda vote: fragments.render_parts(
            fragments.PARTICIPANT, ["myvote", "error"], {"my_vote": vote}
        ),
    )


VOTES = RoomBatcher(_votes_html)


def _predictions_html(room_id: int, guesses: list[tuple]) -> list:
    return _own_answers(
        predictions.predictions_make(room_id=room_id, guesses=guesses),
        lambda guess: guess.value,
        lambda guess: fragments.render_parts(
            fragments.PARTICIPANT,
            ["myprediction", "error"],
            {"my_prediction": guess, "shared": guess.shared_run},
        ),
    )


PREDICTIONS = RoomBatcher(_predictions_html)


class ParticipantSocket(RoomSocket):
    def identify(self, code: str):
        room = selectors.room_for_code(code)
        if room is None:
            return None
        token = (self.scope.get("cookies") or {}).get(rooms.seat_cookie_name(room.code))
        seat = selectors.seat_for_token(room=room, token=token)
        if seat is None:
            return None
        self.seat_id = seat.pk
        return room, _run_to_follow(room)

    def seat(self) -> Seat:
        return Seat.objects.select_related("room").get(pk=self.seat_id)

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
        change = presence.presence_enter if entering else presence.presence_leave
        try:
            await change(room_id=self.room_id, seat_id=self.seat_id, socket_key=self.socket_key)
        except Exception:  # noqa: BLE001 - presence is a count on a screen, not the room
            log.warning("workshop presence not recorded", exc_info=True)
            return
        await livecounts.counts_refresh_soon(room_id=self.room_id)

    def render_state(self) -> str:
        seat = self.seat()
        return fragments.participant_html(
            seat.room, ["stage", "banner", "claim", "run", "error"], seat=seat, live=True
        ) + fragments.scores_html(seat.room, ["leaderboard"], seat=seat)

    async def act_once(self, frame: Frame) -> str | None:
        """A copy of an action already taken, or one older than an action already applied to
        the same thing, changes nothing: the page gets the seat's state as it is now (and the
        first copy's refusal, if it was refused); None while the first copy is still being
        stored, so the page keeps it pending."""
        if not frame.aid:
            return await self.act_async(frame)
        ids = {"seat_id": self.seat_id, "aid": frame.aid}
        try:
            first = await actionids.action_claim(**ids)
        except Exception:  # noqa: BLE001 - votes, answers and guesses are upserts: act anyway
            log.warning("workshop action ids unavailable", exc_info=True)
            return await self.act_async(frame)
        if first == actionids.IN_FLIGHT:
            return None
        if first is not None:
            kind, _, refusal = first.partition("\n")
            if kind == actionids.REFUSED:
                raise WorkshopError(refusal)
            return await db_async(self.render_state)()
        target = f"{frame.action}:{frame.fields.get('round') or frame.fields.get('run')}"
        try:
            newest = not frame.at or await actionids.action_is_newest(
                seat_id=self.seat_id, target=target, at=frame.at
            )
        except Exception:  # noqa: BLE001 - as above: act on it
            log.warning("workshop action times unavailable", exc_info=True)
            newest = True
        if not newest:
            await actionids.action_settle(**ids)  # taken, and replaced by the later one
            return await db_async(self.render_state)()
        try:
            html = await self.act_async(frame)
        except WorkshopError as exc:
            await actionids.action_settle(**ids, refusal=exc.message)
            raise
        except BaseException:
            await actionids.action_release(**ids)
            raise
        await actionids.action_settle(**ids)
        return html

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
        seat = self.seat_ref()
        if frame.action == "answer":
            answer = rounds.answer_submit(
                seat=seat, round_id=frame.fields["round"], text=frame.fields["text"]
            )
            ctx = {"my_answer": answer, "answers_open": True}
            return fragments.render_parts(fragments.PARTICIPANT, ["myanswer", "error"], ctx)
        raise WorkshopError("Unknown action.")


class PresenterSocket(RoomSocket):
    is_presenter = True
    frame_limit = ratelimit.PRESENTER_FRAMES

    def identify(self, code: str):
        room = selectors.room_for_code(code)
        user = self.scope.get("user")
        if room is None or not rooms.can_drive(user=user, room=room):
            return None
        self.user_id = user.pk
        return room, _run_to_follow(room)

    def budgets(self) -> list[tuple[str, int]]:
        return [(f"presenter:{self.room_id}:{self.user_id}", self.frame_limit)]

    def room(self) -> Room:
        """The room, if this socket's user may still drive it: the user and the session are read
        again for each action, so one demoted or signed out since the socket opened is refused."""
        room = Room.objects.get(pk=self.room_id)
        user = user_now(self.scope)
        if not user.is_authenticated:
            raise WorkshopError("You are signed out: sign in again to run the room.")
        if user.pk != self.user_id or not rooms.can_drive(user=user, room=room):
            raise WorkshopError("Only the room's instructor can do that.")
        return room

    def render_state(self) -> str:
        room = Room.objects.get(pk=self.room_id)
        return (
            fragments.presenter_html(
                room, ["stage", "claims", "claim", "seats", "run", "error"], live=True
            )
            + fragments.scores_html(room, ["leaderboard"])
            + fragments.moderation_html(room, ["status"])
        )

    def render_ended(self) -> str:
        room = Room.objects.get(pk=self.room_id)
        return fragments.presenter_html(room, ["ended"])

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
        room = Room.objects.get(pk=self.room_id)
        return screens.screen_html(
            room, ["stage", "claim", "answers", "run", "presence", "joinstate", "joined"], live=True
        )

    def render_ended(self) -> str:
        room = Room.objects.get(pk=self.room_id)
        return screens.screen_html(room, ["ended"])

    def act(self, frame: Frame) -> str:
        raise WorkshopError("The projector view only shows the room: use the instructor console.")
