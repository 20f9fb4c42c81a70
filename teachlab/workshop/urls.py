from django.urls import path

from teachlab.workshop import planviews, views

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
    path("r/<str:code>/plan/next/", views.plan_next, name="plan_next"),
    path("r/<str:code>/plan/previous/", views.plan_previous, name="plan_previous"),
    path("r/<str:code>/blank/", views.blank, name="blank"),
    path("r/<str:code>/ranking/", views.ranking, name="ranking"),
    path("r/<str:code>/lock/", views.lock, name="lock"),
    path("r/<str:code>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("r/<str:code>/seats/", views.seats, name="seats"),
    path("r/<str:code>/seats/<int:seat_id>/kick/", views.seat_kick, name="kick"),
    path("r/<str:code>/seats/<int:seat_id>/readmit/", views.seat_readmit, name="readmit"),
    path("r/<str:code>/seats/<int:seat_id>/rename/", views.seat_rename, name="rename"),
    path("r/<str:code>/results/", views.results_page, name="results"),
    path("r/<str:code>/results/<str:kind>.csv", views.results_csv, name="results_csv"),
    # Session plans (planviews.py)
    path("plans/", planviews.plan_list, name="plans"),
    path("plans/new/", planviews.plan_new, name="plan_new"),
    path("plans/import/", planviews.plan_import, name="plan_import"),
    path("plans/<int:pk>/", planviews.plan_edit, name="plan"),
    path("plans/<int:pk>/title/", planviews.plan_title, name="plan_title"),
    path("plans/<int:pk>/steps/", planviews.step_add, name="plan_step_add"),
    path(
        "plans/<int:pk>/steps/<int:index>/remove/", planviews.step_remove, name="plan_step_remove"
    ),
    path("plans/<int:pk>/steps/<int:index>/move/", planviews.step_move, name="plan_step_move"),
    path("plans/<int:pk>/delete/", planviews.plan_delete, name="plan_delete"),
    path("plans/<int:pk>/export.json", planviews.plan_export, name="plan_export"),
    path("plans/<int:pk>/room/", planviews.plan_room, name="plan_room"),
]
