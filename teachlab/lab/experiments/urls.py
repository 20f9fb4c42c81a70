from django.urls import path

import teachlab.lab.runs.converters  # noqa: F401 - registers <token:...>
from teachlab.lab.experiments import views

app_name = "experiments"
urlpatterns = [
    path("", views.experiment_list, name="list"),
    # Copies per task and receipts over time for any of the learner's runs; with HX-Request
    # just the fragment, so the live run page can pull it in (hx-get, hx-trigger="load").
    path("runs/<token:run_id>/", views.run_charts, name="run_charts"),
    path("<slug:slug>/", views.experiment_page, name="detail"),
    path("<slug:slug>/attempts/<token:attempt_id>/", views.attempt_page, name="attempt"),
    path("<slug:slug>/attempts/<token:attempt_id>/status/", views.attempt_status, name="status"),
]
