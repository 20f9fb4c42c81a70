from django.apps import AppConfig


class LabConfig(AppConfig):
    name = "teachlab.lab"
    label = "lab"
    default_auto_field = "django.db.models.BigAutoField"
