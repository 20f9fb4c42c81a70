from django.urls import include, path

import teachlab.lab.runs.converters  # noqa: F401 - registers <token:...>
from teachlab.lab.web import views

app_name = "lab"
urlpatterns = [
    path("experiments/", include("teachlab.lab.experiments.urls")),  # guided experiments
    path("", views.home, name="home"),
    path("estimate/", views.estimate, name="estimate"),
    path("workers/", views.workers_panel, name="workers"),
    path("workers/<str:name>/<slug:action>/", views.worker_action, name="worker_action"),
    path("runs/", views.history_page, name="history"),
    path("runs/<token:run_id>/", views.run_page, name="run"),
    path("runs/<token:run_id>/export.csv", views.export_csv, name="export_csv"),
    path("runs/<token:run_id>/export.json", views.export_json, name="export_json"),
]
