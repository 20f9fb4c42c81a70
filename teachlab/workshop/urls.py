from django.urls import path

from teachlab.workshop import views

app_name = "workshop"
urlpatterns = [
    path("", views.index, name="index"),
    path("rooms/new/", views.room_create, name="create"),
    path("join/", views.join, name="join"),
    path("r/<str:code>/", views.room, name="room"),
    path("r/<str:code>/browse/", views.browse, name="browse"),
    path("r/<str:code>/present/", views.present, name="present"),
    path("r/<str:code>/screen/", views.screen, name="screen"),
    path("r/<str:code>/drive/", views.drive, name="drive"),
    path("r/<str:code>/claim/", views.claim, name="claim"),
    path("r/<str:code>/reveal/", views.reveal, name="reveal"),
    path("r/<str:code>/run/", views.run_open, name="run"),
    path("r/<str:code>/fire/", views.fire, name="fire"),
    path("r/<str:code>/outcome/", views.outcome, name="outcome"),
    path("r/<str:code>/timer/", views.timer, name="timer"),
    path("r/<str:code>/spread/", views.spread, name="spread"),
    path("r/<str:code>/answers/open/", views.answers_open, name="answers_open"),
    path("r/<str:code>/answers/end/", views.answers_end, name="answers_end"),
    path("r/<str:code>/answers/show/", views.answer_show, name="answer_show"),
    path("r/<str:code>/close/", views.close, name="close"),
    path("r/<str:code>/ranking/", views.ranking, name="ranking"),
    path("r/<str:code>/lock/", views.lock, name="lock"),
    path("r/<str:code>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("r/<str:code>/seats/", views.seats, name="seats"),
    path("r/<str:code>/seats/<int:seat_id>/kick/", views.seat_kick, name="kick"),
    path("r/<str:code>/seats/<int:seat_id>/readmit/", views.seat_readmit, name="readmit"),
    path("r/<str:code>/seats/<int:seat_id>/rename/", views.seat_rename, name="rename"),
    path("r/<str:code>/results/", views.results_page, name="results"),
    path("r/<str:code>/results/<str:kind>.csv", views.results_csv, name="results_csv"),
]
