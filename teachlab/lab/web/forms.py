"""The run form: the run-parameter schema (params.py) as fields a learner fills in.

Every value is checked by the schema, so a field refused here is refused with the same words
by `lab run` and by a workshop room. run_fire checks again, with the learner's own limits
(runs at once, runs per minute), before anything reaches a broker.
"""

from __future__ import annotations

from typing import Any

from django import forms

from teachlab.lab.runs.errors import LabInputError
from teachlab.lab.runs.params import (
    PARAMS,
    ParamsInvalid,
    RunParams,
    params_bounds,
    params_over_limits,
    params_parse,
    prediction_parse,
)

# The parameters a learner sets in the browser, in the order they are drawn; the rest keep
# their defaults (experiments and `lab run` set them).
FORM_PARAMS = ("countdown", "eta", "expires", "duration", "count", "spacing", "acks_late", "guard")
INITIAL = {"countdown": 25, "count": 1, "duration": 0, "spacing": 0}


def lane_choices() -> list[tuple[str, str]]:
    from teachlab.lab.runs.lanes import lanes

    return [(lane.name, f"{lane.name}: {lane.title}") for lane in lanes(listed_only=True)]


def param_field(name: str) -> forms.Field:
    """A form field for one schema parameter: the schema, not the field, checks the value."""
    p = PARAMS[name]
    options = {"label": p.label, "required": False, "help_text": p.help}
    if name in INITIAL:
        options["initial"] = INITIAL[name]
    if p.kind == "flag":
        return forms.BooleanField(**options)
    if p.kind == "moment":
        widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"})
        return forms.CharField(widget=widget, **options)
    return forms.CharField(widget=forms.NumberInput(attrs={"step": "any"}), **options)


class RunForm(forms.Form):
    lane = forms.ChoiceField(label="Lane", choices=())
    countdown = param_field("countdown")
    eta = param_field("eta")
    expires = param_field("expires")
    duration = param_field("duration")
    count = param_field("count")
    spacing = param_field("spacing")
    acks_late = param_field("acks_late")
    guard = param_field("guard")
    prediction = forms.CharField(
        label="Your prediction: how many receipts?",
        required=False,
        widget=forms.NumberInput(attrs={"min": 0, "step": 1}),
        help_text="Guess before you fire; it is shown next to the result.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["lane"].choices = lane_choices()
        self.run_params: RunParams | None = None
        # Limits as hints in the browser; the schema is what enforces them.
        for name, bounds in params_bounds().items():
            if name in self.fields:
                self.fields[name].widget.attrs.update(bounds)

    def clean_prediction(self) -> int | None:
        try:
            return prediction_parse(self.cleaned_data.get("prediction"))
        except LabInputError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        raw = {name: data.get(name) for name in FORM_PARAMS}
        try:
            p = params_parse(raw)
        except ParamsInvalid as exc:
            for name, message in exc.errors.items():
                self.add_error(name, message)
            return data
        for name, message in params_over_limits(p).items():
            self.add_error(name, message)
        self.run_params = p
        return data

    def params(self) -> RunParams:
        """The form as run_fire's `params`, checked by the schema."""
        assert self.run_params is not None, "call is_valid() first"
        return self.run_params
