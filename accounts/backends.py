"""How a signed-in person is loaded on each request."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import backends, get_user_model


class ModelBackend(backends.ModelBackend):
    """Django's model backend, loading with the user the relations named by settings.AUTH_USER_SELECT_RELATED
    in one query: every page's header and the fact-checkers' pages read them, so they would otherwise cost a
    query a page. A setting because those relations belong to the layers above this one."""

    def get_user(self, user_id):
        user_model = get_user_model()
        related = tuple(getattr(settings, "AUTH_USER_SELECT_RELATED", ()))
        try:
            user = user_model._default_manager.select_related(*related).get(pk=user_id)
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
