"""Lab errors: each str() is a message fit to show the learner as it is."""


class LabError(Exception):
    """Anything the lab refuses or cannot do; the message says why and what to do."""


class LabInputError(LabError):
    """Parameters that make no sense (negative counts, absurd countdowns, unknown keys)."""


class LabLimitError(LabError):
    """A per-learner limit (tasks per run, longest countdown, runs at once, runs per minute)."""


class LaneUnknown(LabInputError):
    """No lane by that name."""


class LaneUnavailable(LabError):
    """The lane's broker cannot be reached. Its message names the broker's address and the OS's
    error: for staff and local runs; everyone else is told BROKER_NOT_ANSWERING."""


# What a visitor on a shared server is told instead of a broker's host, port and OS error.
BROKER_NOT_ANSWERING = (
    "The lab's broker is not answering, so runs cannot be fired just now. Try again in a "
    "minute; if it stays down, tell whoever runs this server."
)


def learner_text(exc: BaseException, *, reference: str = "") -> str:
    """What a stored failure may say to whoever owns it (a run or an attempt page can be any
    visitor's): a lab refusal as it is, a broker that does not answer without its address or
    the OS's error, anything else without its internals. The details go to the server's log
    (issue 26: broker addresses and OS errors only for staff)."""
    if isinstance(exc, LaneUnavailable):
        return BROKER_NOT_ANSWERING
    if isinstance(exc, LabError):
        return str(exc)
    where = f" (logged on the server as {reference})" if reference else ""
    return (
        f"Something went wrong on the server{where}; try again, and if it keeps failing, "
        "tell whoever runs it."
    )
