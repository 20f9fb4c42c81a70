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
    """The lane's broker cannot be reached."""
