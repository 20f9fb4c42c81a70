"""A room's results for its instructor: the page, and each table as a CSV (results.py)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from teachlab.workshop import results
from teachlab.workshop.models import Room
from teachlab.workshop.viewaccess import driver_only


@require_GET
@driver_only
def results_page(request: HttpRequest, room: Room) -> HttpResponse:
    ctx = {
        "room": room,
        "participants": results.participant_rows(room),
        "claims": results.claim_rows(room),
        "runs": results.run_rows(room),
        "standings": results.score_rows(room),
    }
    return render(request, "workshop/results.html", ctx)


@require_GET
@driver_only
def results_csv(request: HttpRequest, room: Room, kind: str) -> HttpResponse:
    if kind not in results.EXPORTS:
        raise Http404(f"Exports: {', '.join(results.EXPORTS)}.")
    rows_for, columns = results.EXPORTS[kind]
    response = HttpResponse(
        results.rows_csv(rows_for(room), columns), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="workshop-{room.code}-{kind}.csv"'
    return response
