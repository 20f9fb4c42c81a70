"""HTTP input for rooms: Django forms give each bad field its own message."""

from django import forms

from teachlab.workshop import content
from teachlab.workshop.models import NICKNAME_MAX
from teachlab.workshop.rooms import TIERS


class RoomCreateForm(forms.Form):
    title = forms.CharField(max_length=120, required=False, label="Room title")


class JoinForm(forms.Form):
    code = forms.CharField(max_length=16, label="Room code")
    nickname = forms.CharField(max_length=NICKNAME_MAX, label="Nickname")


class RenameForm(forms.Form):
    nickname = forms.CharField(max_length=NICKNAME_MAX, label="New name")


class DriveForm(forms.Form):
    question = forms.CharField(max_length=100)
    tier = forms.ChoiceField(choices=[(t, t) for t in TIERS])


class ClaimForm(forms.Form):
    claim = forms.CharField(max_length=200)


# Timed rounds (rounds.py checks the seconds again, for the socket and the shell).
class TimerForm(forms.Form):
    seconds = forms.IntegerField(min_value=5, max_value=600, label="Timer (seconds)")


class AnswerRoundForm(forms.Form):
    seconds = forms.IntegerField(
        min_value=5, max_value=600, required=False, label="Timer (seconds)"
    )


class ShowForm(forms.Form):
    """A show/hide switch: "1" shows, "0" hides."""

    show = forms.ChoiceField(choices=[("1", "show"), ("0", "hide")])


class AnswerShowForm(ShowForm):
    answer = forms.IntegerField(min_value=1)


class RunOpenForm(forms.Form):
    experiment = forms.CharField(max_length=100, required=False)
    lane = forms.CharField(max_length=40, required=False)
    metric = forms.ChoiceField(choices=list(content.METRICS.items()), initial="receipts")
    prompt = forms.CharField(max_length=300, required=False)
    # Run parameters: the lab's schema checks them (predictions.clean_params).
    count = forms.CharField(max_length=40, required=False)
    countdown = forms.CharField(max_length=40, required=False)
    spacing = forms.CharField(max_length=40, required=False)
    duration = forms.CharField(max_length=40, required=False)
    acks_late = forms.BooleanField(required=False)
    guard = forms.BooleanField(required=False)


def form_error(form: forms.Form) -> str:
    """The first problem of a bound form, as one sentence."""
    for field, errors in form.errors.items():
        label = form.fields[field].label or field if field in form.fields else ""
        return f"{label}: {errors[0]}" if label else str(errors[0])
    return "Check the form and try again."
