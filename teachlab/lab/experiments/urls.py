from django.urls import path

from teachlab.lab.experiments import views

app_name = "experiments"
urlpatterns = [
    path("", views.experiment_list, name="list"),
    path("<slug:slug>/", views.experiment_page, name="detail"),
    path("<slug:slug>/attempts/<str:attempt_id>/", views.attempt_page, name="attempt"),
    path("<slug:slug>/attempts/<str:attempt_id>/status/", views.attempt_status, name="status"),
]
