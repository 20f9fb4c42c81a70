"""Sign-in and sign-up rules around Django's auth: django-axes throttles failed sign-ins
(settings.AXES_*, keyed on the normalised username and the client address together); this
module gives its lockout a page and a 429, and makes sign-up check names the same way.

Throttled pages: /accounts/login/ and /admin/login/ (both authenticate through axes' backend).
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.shortcuts import render

from teachlab.core.identity import username_normal

USERNAME_REFUSED = (
    "That username cannot be used. Choose another (letters, digits and @ . + - _ only)."
)


def lockout_message(minutes: int) -> str:
    return (
        "Too many failed sign-ins for this username from your address. Try again in about "
        f"{minutes} minute{'s' if minutes != 1 else ''}."
    )


def lockout_response(request, original_response=None, credentials=None):
    """settings.AXES_LOCKOUT_CALLABLE: the sign-in page again, with why and for how long."""
    minutes = max(1, round(settings.SIGNIN_WINDOW_SECONDS / 60))
    form = AuthenticationForm(request)
    form.errors["__all__"] = form.error_class([lockout_message(minutes)])
    response = render(
        request,
        "registration/login.html",
        {"form": form, "next": request.POST.get("next", "")},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )
    response["Retry-After"] = str(settings.SIGNIN_WINDOW_SECONDS)
    return response


def username_taken(username: str) -> bool:
    """Taken in any spelling that normalises alike ('Bob', 'ｂｏｂ' and 'bob' are one name)."""
    wanted = username_normal(username)
    candidates = get_user_model().objects.filter(username__iexact=wanted[:150])
    nfkc_lower = get_user_model().objects.filter(username__iexact=username[:150])
    return any(username_normal(u.get_username()) == wanted for u in (*candidates, *nfkc_lower))


class SignupForm(UserCreationForm):
    """Django's form with the password validators, and one answer for a name that is taken
    or too close to one that is: the same words as for any other unusable name."""

    def clean_username(self):
        username = self.cleaned_data.get("username")
        if username and username_taken(username):
            raise forms.ValidationError(USERNAME_REFUSED, code="unusable")
        return username

    def validate_unique(self):
        # Django's own "A user with that username already exists." would name the reason.
        try:
            super().validate_unique()
        except forms.ValidationError:
            self.add_error("username", forms.ValidationError(USERNAME_REFUSED, code="unusable"))
