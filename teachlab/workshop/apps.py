from django.apps import AppConfig


class WorkshopConfig(AppConfig):
    name = "teachlab.workshop"
    label = "workshop"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.apps import apps
        from django.db.models.signals import post_save

        from teachlab.workshop.signals import run_saved, run_settled

        if apps.is_installed("teachlab.lab"):
            from teachlab.lab.eventlog.settle import run_settled as lab_run_settled

            post_save.connect(
                run_saved, sender=apps.get_model("lab", "Run"), dispatch_uid="workshop-run-saved"
            )
            lab_run_settled.connect(run_settled, dispatch_uid="workshop-run-settled")
