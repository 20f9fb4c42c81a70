from django.apps import AppConfig


class WorkshopConfig(AppConfig):
    name = "teachlab.workshop"
    label = "workshop"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.apps import apps
        from django.db.models.signals import post_save

        from teachlab.workshop.signals import run_saved

        if apps.is_installed("teachlab.lab"):
            post_save.connect(
                run_saved, sender=apps.get_model("lab", "Run"), dispatch_uid="workshop-run-saved"
            )
