"""The versions a lab run records: copied from its lane's live workers' heartbeats, which
report what they run (teachlab.lab.worker.versions.worker_versions). Apart from versions.py because the
workers' heartbeat imports that module, and this one reads the heartbeats."""

from __future__ import annotations

from teachlab.lab.worker.workers import workers_list


def lane_versions(*, lane: str) -> dict[str, str]:
    """The versions the lane's live workers reported (the first that reported any); {} when
    none is up, so a run fired at a lane with no worker records nothing it did not see."""
    for worker in workers_list():
        if worker["lane"] == lane and worker["alive"] and worker.get("versions"):
            return dict(worker["versions"])
    return {}


def run_versions_fill(run) -> None:
    """A run fired while its lane's workers were restarting (an experiment's warm-shutdown or
    kill step) found no live worker to copy versions from; the workers that ran it are up by
    the time it settles, so it takes theirs then rather than staying blank."""
    if run.versions:
        return
    versions = lane_versions(lane=run.lane)
    if versions:
        type(run).objects.filter(pk=run.pk).update(versions=versions)
        run.versions = versions
