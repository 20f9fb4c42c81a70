from django.urls import include, path

from lessons import views

app_name = "lessons"
urlpatterns = [
    path("", views.index, name="index"),
    path("glossary/", views.glossary, name="glossary"),
    path("search/", views.search, name="search"),
    path("settings/theme/", views.theme_set, name="theme"),
    path("q/<slug:slug>/", views.question, name="question"),
    path("q/<slug:slug>/<slug:tier>/", views.tier, name="tier"),
    path("", include("lessons.quiz_urls")),
    path(
        "", include("lessons.evidence_urls")
    ),  # measurement notes, case studies, source  # quiz, review, progress, self-rating, sign-up
]
