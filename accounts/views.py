"""Where a signed-in user lands: each role is sent to its own place."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.forms import ProfileForm


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
    """The signed-in person's own settings: the time zone their pages show times in."""
    form = ProfileForm(request.POST or None, initial={"time_zone": request.user.time_zone})
    if request.method == "POST" and form.is_valid():
        request.user.time_zone = form.cleaned_data["time_zone"]
        request.user.save(update_fields=["time_zone"])
        messages.success(request, f"Saved: times are shown in {request.user.time_zone}.")
        return redirect("accounts:profile")
    return render(request, "accounts/profile.html", {"form": form})
