"""The evidence pages "How we know" links to (lessons/evidence_views.py), under /evidence/."""

from django.urls import path

from lessons import evidence_views

urlpatterns = [
    path("evidence/notes/<int:number>/", evidence_views.note, name="evidence_note"),
    path("evidence/cases/<slug:slug>/", evidence_views.case, name="evidence_case"),
    path(
        "evidence/source/<str:module>/<str:function>/",
        evidence_views.source,
        name="evidence_source",
    ),
]
