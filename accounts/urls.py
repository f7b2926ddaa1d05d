"""Signing in and out of the browser UI, the landing page for roles without a workspace yet, and one's own settings."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.forms import SignInForm

app_name = "accounts"
urlpatterns = [
    path(
        "login/", auth_views.LoginView.as_view(redirect_authenticated_user=True, authentication_form=SignInForm),
        name="login",
    ),
    # Django's LogoutView accepts POST only, so a link cannot sign anyone out.
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("welcome/", views.welcome, name="welcome"),
    path("profile/", views.profile, name="profile"),
]
