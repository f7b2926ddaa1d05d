"""Signing in and out of the browser UI, resetting a forgotten password by e-mail, the landing page for roles
without a workspace yet, and one's own settings."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("login/", views.SignIn.as_view(), name="login"),
    # Django's LogoutView accepts POST only, so a link cannot sign anyone out.
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Django's password reset views (accounts.views): the link is e-mailed by a job (accounts.jobs) and works for
    # PASSWORD_RESET_TIMEOUT, an invitation's for FACTDESK_INVITATION_DAYS (accounts.tokens), until a password is
    # saved with it (accounts.password_reset.send_reset_link, send_invitation).
    path("password-reset/", views.RequestReset.as_view(), name="password_reset"),
    path("password-reset/sent/", views.ResetSent.as_view(), name="password_reset_done"),
    path("reset/<uidb64>/<token>/", views.ChooseNewPassword.as_view(), name="password_reset_confirm"),
    path("reset/done/", views.ResetDone.as_view(), name="password_reset_complete"),
    path("welcome/", views.welcome, name="welcome"),
    path("profile/", views.profile, name="profile"),
]
