from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "teachlab.lab.experiments"
    label = "lab_experiments"
    verbose_name = "Lab experiments"
    default_auto_field = "django.db.models.BigAutoField"
