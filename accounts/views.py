"""Where a signed-in user lands (each role to its own place), signing in, and resetting a forgotten password."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods

from accounts.forms import NewPasswordForm, ProfileForm, ResetRequestForm, SignInForm
from accounts.password_reset import TooManyResetRequests, request_reset_link
from accounts.security import client_ip
from accounts.tokens import is_expired_invitation, link_tokens
from core.error_summary import error_summary


class WithErrorSummary:
    """Puts the bound form's errors in the context as `errors`, for templates/moderation/_error_summary.html."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        context["errors"] = error_summary(form) if form is not None and form.is_bound else []
        return context


class SignIn(WithErrorSummary, auth_views.LoginView):
    """/accounts/login/."""

    authentication_form = SignInForm
    redirect_authenticated_user = True


class RequestReset(WithErrorSummary, auth_views.PasswordResetView):
    """/accounts/password-reset/: a job e-mails a reset link to the account with that address, if there is one;
    the answer, and the work done for it, are the same either way. Requests are counted per address and per
    client (accounts.password_reset)."""

    form_class = ResetRequestForm
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: ResetRequestForm) -> HttpResponse:
        try:
            request_reset_link(email=form.cleaned_data["email"], client=client_ip(self.request))
        except TooManyResetRequests as refusal:
            form.add_error(None, refusal.message)
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        # Not PasswordResetView's form.save(): that looks the address up and sends in the request.
        return HttpResponseRedirect(self.get_success_url())


class ResetSent(auth_views.PasswordResetDoneView):
    """/accounts/password-reset/sent/."""


class ChooseNewPassword(WithErrorSummary, auth_views.PasswordResetConfirmView):
    """/accounts/reset/<uid>/<token>/: the link from the e-mail, a password-reset link or an invitation (each works
    for its own time, until a password is saved with it: accounts.tokens). Django keeps the token in the session and
    redirects to .../set-password/, so the token leaves the address bar (and the Referer); config.log_masking keeps
    it out of the logs. A refused invitation whose days have passed says so, and how to get a new link."""

    form_class = NewPasswordForm
    success_url = reverse_lazy("accounts:password_reset_complete")
    token_generator = link_tokens

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not self.validlink:
            token = self.kwargs.get("token")
            if token == self.reset_url_token:  # expired between opening the link and saving the password
                token = self.request.session.get(auth_views.INTERNAL_RESET_SESSION_TOKEN)
            context["expired_invitation"] = self.user is not None and is_expired_invitation(user=self.user,
                                                                                            token=token)
            context["invitation_days"] = settings.FACTDESK_INVITATION_DAYS
        return context


class ResetDone(auth_views.PasswordResetCompleteView):
    """/accounts/reset/done/."""


def home(request: HttpRequest) -> HttpResponse:
    """`/`: fact-checkers to the queue, staff to the admin, page owners to their portal, others to the welcome page."""
    user = request.user
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if user.is_staff:
        return redirect("admin:index")
    if user.is_factchecker:
        return redirect("factcheck:queue")
    if user.is_page_owner:
        return redirect("moderation:portal")
    return redirect("accounts:welcome")


@login_required
def welcome(request: HttpRequest) -> HttpResponse:
    """What a page owner or API client can do here until their own pages exist."""
    return render(request, "accounts/welcome.html")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    """The signed-in person's own settings: the time zone their pages show times in, and, for those who review
    posts (fact-checkers, trust-and-safety staff), whether posts' images are shown as they are or blurred."""
    user = request.user
    form = ProfileForm(request.POST or None, reviews_media=user.is_factchecker or user.is_trust_safety,
                       initial={"time_zone": user.time_zone, "show_media": user.show_media})
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in ("time_zone", "show_media") if name in form.fields}
        for name, value in changed.items():
            setattr(user, name, value)
        user.save(update_fields=list(changed))
        saved = f"Saved: times are shown in {user.time_zone}."
        if "show_media" in changed:
            saved += (" Posts' images are shown as they are." if user.show_media
                      else " Posts' images are blurred until you click one.")
        messages.success(request, saved)
        return redirect("accounts:profile")
    return render(request, "accounts/profile.html",
                  {"form": form, "errors": error_summary(form) if form.is_bound else []})
