"""What a web process loads before its first request, so that it can be frozen out of the
garbage collector's full passes (teachlab/asgi.py)."""

from __future__ import annotations


def warm_up() -> None:
    """Import every view and build the template engines: the first request would."""
    from django.template import engines
    from django.urls import get_resolver

    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 - imports every urls module and view
    resolver._populate()
    for engine in engines.all():
        engine.engine.template_loaders  # noqa: B018
