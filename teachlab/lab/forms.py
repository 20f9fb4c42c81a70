"""The run form: what a learner may choose, checked before anything reaches a broker.

Per-learner limits (tasks per run, longest countdown, runs at once, runs per minute) are
checked by `run_fire` itself so the form, the CLI and workshop rooms all answer the same way.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings


def lane_choices() -> list[tuple[str, str]]:
    from teachlab.lab.lanes import lanes

    return [(lane.name, f"{lane.name}: {lane.title}") for lane in lanes(listed_only=True)]


class RunForm(forms.Form):
    lane = forms.ChoiceField(label="Lane", choices=())
    countdown = forms.FloatField(
        label="Countdown (s)",
        required=False,
        min_value=0,
        initial=25,
        help_text="Seconds until the first task is due. Leave empty when you give an ETA.",
    )
    eta = forms.DateTimeField(
        label="or ETA (UTC)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        input_formats=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"],
        help_text="A moment instead of a countdown.",
    )
    expires = forms.FloatField(
        label="Expires after (s)",
        required=False,
        min_value=0,
        help_text="A task not started by then is revoked. Empty: never.",
    )
    duration = forms.FloatField(
        label="Body takes (s)", required=False, min_value=0, max_value=600, initial=0
    )
    count = forms.IntegerField(label="How many tasks", min_value=1, initial=1)
    spacing = forms.FloatField(
        label="Spacing (s)",
        required=False,
        min_value=0,
        initial=0,
        help_text="Added to each next task's countdown.",
    )
    acks_late = forms.BooleanField(label="acks_late", required=False)
    guard = forms.BooleanField(
        label="Idempotency guard",
        required=False,
        help_text="Claim the work with SET NX before running it; later copies are skipped.",
    )
    prediction = forms.IntegerField(
        label="Your prediction: how many receipts?",
        required=False,
        min_value=0,
        help_text="Guess before you fire; it is shown next to the result.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["lane"].choices = lane_choices()
        # Limits as hints in the browser; run_fire is the one that enforces them.
        self.fields["count"].widget.attrs["max"] = settings.LAB_MAX_TASKS_PER_RUN
        self.fields["countdown"].widget.attrs["max"] = settings.LAB_MAX_COUNTDOWN
        for field in self.fields.values():
            if isinstance(field.widget, forms.NumberInput):
                field.widget.attrs.setdefault("step", "any")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("countdown") is not None and data.get("eta") is not None:
            raise forms.ValidationError("Give a countdown or an ETA, not both.")
        return data

    def params(self) -> dict[str, Any]:
        """The form as run_fire's `params` (only keys the learner set)."""
        data = self.cleaned_data
        params: dict[str, Any] = {
            "count": data["count"],
            "acks_late": bool(data.get("acks_late")),
            "guard": bool(data.get("guard")),
        }
        if data.get("eta") is not None:
            params["eta"] = data["eta"].isoformat()
        else:
            params["countdown"] = data.get("countdown") or 0
        for key in ("expires", "duration", "spacing"):
            if data.get(key) is not None:
                params[key] = data[key]
        return params
