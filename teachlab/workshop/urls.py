from django.urls import path

from teachlab.workshop import actionviews, consoleviews, planviews, resultviews, views

app_name = "workshop"
urlpatterns = [
    path("", views.index, name="index"),
    path("rooms/new/", consoleviews.room_create, name="create"),
    path("join/", views.join, name="join"),
    path("r/<str:code>/", views.room, name="room"),
    path("r/<str:code>/browse/", views.browse, name="browse"),
    path("r/<str:code>/present/", consoleviews.present, name="present"),
    path("r/<str:code>/screen/", consoleviews.screen, name="screen"),
    path("r/<str:code>/drive/", actionviews.drive, name="drive"),
    path("r/<str:code>/claim/", actionviews.claim, name="claim"),
    path("r/<str:code>/reveal/", actionviews.reveal, name="reveal"),
    path("r/<str:code>/run/", actionviews.run_open, name="run"),
    path("r/<str:code>/fire/", actionviews.fire, name="fire"),
    path("r/<str:code>/outcome/", actionviews.outcome, name="outcome"),
    path("r/<str:code>/timer/", actionviews.timer, name="timer"),
    path("r/<str:code>/spread/", actionviews.spread, name="spread"),
    path("r/<str:code>/answers/open/", actionviews.answers_open, name="answers_open"),
    path("r/<str:code>/answers/end/", actionviews.answers_end, name="answers_end"),
    path("r/<str:code>/answers/show/", actionviews.answer_show, name="answer_show"),
    path("r/<str:code>/close/", actionviews.close, name="close"),
    path("r/<str:code>/plan/next/", actionviews.plan_next, name="plan_next"),
    path("r/<str:code>/plan/previous/", actionviews.plan_previous, name="plan_previous"),
    path("r/<str:code>/blank/", actionviews.blank, name="blank"),
    path("r/<str:code>/ranking/", views.ranking, name="ranking"),
    path("r/<str:code>/lock/", actionviews.lock, name="lock"),
    path("r/<str:code>/leaderboard/", actionviews.leaderboard, name="leaderboard"),
    path("r/<str:code>/seats/", actionviews.seats, name="seats"),
    path("r/<str:code>/seats/<int:seat_id>/kick/", actionviews.seat_kick, name="kick"),
    path("r/<str:code>/seats/<int:seat_id>/readmit/", actionviews.seat_readmit, name="readmit"),
    path("r/<str:code>/seats/<int:seat_id>/rename/", actionviews.seat_rename, name="rename"),
    path("r/<str:code>/results/", resultviews.results_page, name="results"),
    path("r/<str:code>/results/<str:kind>.csv", resultviews.results_csv, name="results_csv"),
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
