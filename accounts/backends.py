"""How a signed-in person is loaded on each request."""

from __future__ import annotations

from django.contrib.auth import backends, get_user_model


class ModelBackend(backends.ModelBackend):
    """Django's model backend, loading the user's organisation with the user in one query: every page's
    header names it and the fact-checkers' pages scope by it, so it would otherwise cost a query a page."""

    def get_user(self, user_id):
        user_model = get_user_model()
        try:
            user = user_model._default_manager.select_related("organisation").get(pk=user_id)
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
