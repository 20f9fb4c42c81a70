"""The rules an experiment file follows, in one place for the validator, the loader and the
README (lessons/experiments/README.md describes the same rules)."""

from teachlab.lab.experiments.checks import BOUNDS, PER
from teachlab.lab.params import PARAMS as RUN_PARAMS

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
NAME_PATTERN = r"^[a-z][a-z0-9-]*$"
TIERS = ("basics", "solid", "senior")

# field -> required?
FIELDS = {
    "slug": True,
    "order": True,
    "title": True,
    "question": True,
    "backs": True,
    "prediction": True,
    "runs": True,
    "checks": True,
    "explanation": True,
    "links": False,
    "needs": False,
    "workers_may_exit": False,
}
BACKS_FIELDS = {"lesson": True, "claims": True}
PREDICTION_FIELDS = {
    "prompt": True,
    "kind": True,
    "observe": False,
    "unit": False,
    "choices": False,
    "timing": False,  # a second question, about when: {prompt, choices}
}
TIMING_FIELDS = {"prompt": True, "choices": True}
PREDICTION_KINDS = ("number", "choice")
CHOICE_FIELDS = {"id": True, "label": True, "when": True}
# `after`: start when that (earlier) run's steps are done, for runs that would disturb each
# other on one lane (a crash, then a warm shutdown); without it runs go side by side.
RUN_FIELDS = {
    "name": True,
    "lane": True,
    "params": True,
    "steps": True,
    "feeder": False,
    "after": False,
}
# `id`: a name unique in the file, for lessons to cite as evidence (`checks: [id]`).
# `on_redis` / `on_kombu` / `on_celery`: a version range of the run's Redis server / the
# workers' kombu / the workers' Celery (as they report them) the check applies to; elsewhere it is left out of the verdict, so an
# experiment whose outcome changed between releases states each outcome on its own releases.
CHECK_ON = ("on_redis", "on_kombu", "on_celery")
CHECK_FIELDS = {
    "id": False,
    **{name: False for name in CHECK_ON},
    "run": False,
    "what": True,
    "per": False,
    "says": True,
    **{b: False for b in BOUNDS},
}
CONDITION_FIELDS = {"run": False, "what": True, "per": False, **{b: False for b in BOUNDS}}
UNTIL_FIELDS = {**CONDITION_FIELDS, "within": True}
BOUND_REF_FIELDS = {"run": True, "what": True, "times": False, "plus": False}
LINK_FIELDS = {"lesson": True, "tier": True, "text": False}
# `needs`: the releases the checks depend on, as version ranges of the workers' packages, and
# why. `lab matrix` records a combination whose lock file pins a release outside a range as
# `skipped`, with the why, and starts no workers for it. Use it where a setting the
# experiment relies on does not exist in older releases (not to hide a behaviour that differs).
NEEDS_PACKAGES = ("celery", "kombu")
NEEDS_FIELDS = {**{name: False for name in NEEDS_PACKAGES}, "why": True}
PER_VALUES = PER

# Run parameters, their types and ranges: the lab's one schema (teachlab/lab/params.py).
# A fixed ETA would be in the past by the next attempt, so experiments give countdowns.
PARAMS = {name: p for name, p in RUN_PARAMS.items() if p.kind != "moment"}

# Steps: the bare word `fire`, or a one-key mapping:
#   wait: S             sleep S seconds
#   until: {condition, within: S}   poll until the condition holds (or S pass); it reads its
#                       own run unless it names another `run` of the experiment
#   crash: holder|any   SIGKILL the worker that holds the run's task (or any of the lane's)
#   shutdown: holder|any  warm shutdown (SIGTERM) of that worker
#   shutdown: {worker: holder|any, grace: S}  a supervisor's stop: SIGTERM, then SIGKILL
#                       when the worker is still there after S seconds
#   disconnect: holder|any  the broker closes that worker's connections (Redis lanes),
#                       as a network cut or a broker restart would; the worker stays up
#   evict: bindings     delete the lane's binding sets (`_kombu.binding.*`), as an eviction
#                       policy could; a restart of the worker declares them again
#   pause: holder|any   freeze that worker (SIGSTOP), as a long stall would; allowed before
#                       fire, and so is a `wait` after it (to let the worker's BRPOP run out)
#   resume: paused      let the workers this run paused go on (SIGCONT)
#   fill: memory        write filler values until the lane's Redis stands past its maxmemory
#                       (a lane on a server of its own, set to noeviction)
#   free: memory        delete the filler values; a run that fills must free
#   ready: workers      wait until every worker of the lane is alive again (allowed before fire)
STEP_WORDS = ("fire",)
STEP_KEYS = (
    "wait",
    "until",
    "crash",
    "shutdown",
    "disconnect",
    "evict",
    "pause",
    "resume",
    "fill",
    "free",
    "ready",
)
BEFORE_FIRE = ("ready", "pause")  # and a `wait` once a worker is paused
WORKER_TARGETS = ("holder", "any")
STOP_FIELDS = {"worker": True, "grace": True}

# An experiment must stay short enough that all of them run in CI in about ten minutes.
MAX_SECONDS = 150
