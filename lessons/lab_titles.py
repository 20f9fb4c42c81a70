"""The titles of the lab's experiments, the one place lessons read the lab's catalog.

Kept apart from the pages and progress modules so neither imports the other for it."""

from __future__ import annotations


def lab_experiment_titles() -> dict[str, str] | None:
    """slug -> title from the lab's experiment catalog; None when it cannot be read (then
    every slug still links, the lab page explains itself)."""
    try:
        # Imported here: the lab's catalog imports lessons' YAML and path modules, so a
        # module-level import would tie the two apps' import order together.
        from teachlab.lab.experiments.catalog import experiments_load

        return {e.slug: e.title for e in experiments_load()}
    except Exception:  # a lab catalog mid-edit must not take the lesson pages down
        return None
