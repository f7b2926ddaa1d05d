"""Signing in (the site's and the admin's login forms), resetting a forgotten password, and the signed-in
person's own settings."""

from __future__ import annotations

import zoneinfo
from functools import lru_cache

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, SetPasswordForm


@lru_cache(maxsize=1)
def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone this machine knows, UTC first, then by name ("Europe/Paris")."""
    names = sorted(name for name in zoneinfo.available_timezones() if "/" in name and not name.startswith("Etc/"))
    return [("UTC", "UTC"), *((name, name.replace("_", " ")) for name in names)]


class ProfileForm(forms.Form):
    time_zone = forms.ChoiceField(
        label="Time zone", choices=time_zone_choices,
        help_text="Claims, ratings and timelines show their times in this zone.",
    )
    # Reviewer wellness (PRODUCT.md, "Media"): pictures start blurred and grey unless the person chooses this.
    show_media = forms.BooleanField(
        label="Show posts' images as they are", required=False,
        help_text="Off, images on the post page and in the queue are blurred and grey until you click one.",
    )

    def __init__(self, *args, reviews_media: bool = True, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        if not reviews_media:  # page owners see their own posts' images as they are; API clients see no pages
            del self.fields["show_media"]
        describe_by_help(self)


class BoundedUsername:
    """A username longer than any account's is a wrong sign-in, refused before anything is looked up.

    Django's login form only tells the browser the limit (the `maxlength` attribute); the name typed
    still reached authentication, and django-axes then failed to record the failure (its column holds
    255 characters): a 500. Refused here, it is the usual "enter a correct username and password",
    and nothing is written.
    """

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if len(username) > self.username_field.max_length:
            raise self.get_invalid_login_error()
        return super().clean()


class SignInForm(BoundedUsername, AuthenticationForm):
    """/accounts/login/. An empty field's error names it: the error summary's two links both read "This field is
    required." and a screen reader could not tell them apart."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].error_messages["required"] = "Enter your username."
        self.fields["password"].error_messages["required"] = "Enter your password."


class AdminSignInForm(BoundedUsername, AdminAuthenticationForm):
    """/admin/login/."""


def describe_by_help(form: forms.Form) -> None:
    """Each field with help text is described by it (templates/registration/_field.html gives it the id)."""
    for name, field in form.fields.items():
        if field.help_text:
            field.widget.attrs["aria-describedby"] = form[name].auto_id + "_help"


class ResetRequestForm(PasswordResetForm):
    """/accounts/password-reset/: the address to send a reset link to."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["email"].label = "E-mail address"
        self.fields["email"].help_text = (
            "The address your Factdesk account has. The link works for an hour, until a password is saved with it."
        )
        self.fields["email"].error_messages.update(
            required="Enter the e-mail address of your account.",
            invalid="Enter an e-mail address in the form name@example.org.",
        )
        describe_by_help(self)


class NewPasswordForm(SetPasswordForm):
    """/accounts/reset/…: the new password, checked by AUTH_PASSWORD_VALIDATORS."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["new_password2"].label = "New password again"
        self.fields["new_password2"].help_text = "The same password, to be sure it was typed as meant."
        describe_by_help(self)
