"""Routes of the quiz, review, progress, self-rating and sign-up pages (namespace `lessons`:
included from lessons/urls.py)."""

from django.urls import path

from lessons import quiz_views as views

urlpatterns = [
    path("quiz/", views.quiz_index, name="quiz_index"),
    path("quiz/start/", views.quiz_start, name="quiz_start"),
    path("quiz/a/<int:attempt_id>/", views.quiz_attempt, name="quiz_attempt"),
    path("quiz/a/<int:attempt_id>/answer/", views.quiz_answer, name="quiz_answer"),
    path("quiz/a/<int:attempt_id>/result/", views.quiz_result, name="quiz_result"),
    path("quiz/a/<int:attempt_id>/retry/", views.quiz_retry, name="quiz_retry"),
    path("review/", views.review_page, name="review"),
    path("review/quiz/", views.review_quiz_start, name="review_quiz"),
    path("progress/", views.progress_page, name="progress"),
    path("progress/reset/", views.progress_reset, name="progress_reset"),
    path("progress/download/", views.progress_download, name="progress_download"),
    path("progress/import/", views.progress_import_view, name="progress_import"),
    path("q/<slug:slug>/<slug:tier>/rate/", views.rate, name="rate"),
    path("accounts/signup/", views.signup, name="signup"),
]
