"""Socket close codes and channel-group names, in one place for the lab and the workshop.

htmx's ws extension reconnects after 1006, 1012 and 1013 and never after a 4xxx close, so the
code a server closes with decides whether the page comes back on its own.
"""

# "Try again later": the page reconnects and catches up on what it missed.
CLOSE_TRY_AGAIN = 1013
# Not yours, not allowed, or no longer in the room: the page stays closed.
CLOSE_REFUSED = 4403
# The room is over: the page stays closed and says so.
CLOSE_ENDED = 4410

# A page's heartbeat (workshop/heartbeat.py, static/js/ws-reconnect.js): the ping exactly as
# the page sends it, checked before any parsing, and the answer, a JSON control frame the
# page's script takes and htmx never swaps.
PING = '{"action":"ping"}'
PONG = '{"pong":1}'

# The monitor's snapshots of the workers and of each Redis lane's broker (lab/eventlog/monitor.py).
WORKERS_GROUP = "lab.workers"


def broker_group(lane_name: str) -> str:
    return f"lab.broker.{lane_name}"


def room_group(room_id: int) -> str:
    """Everything a workshop room's screens are sent (workshop/broadcast.py, hub.py)."""
    return f"workshop.room.{room_id}"
