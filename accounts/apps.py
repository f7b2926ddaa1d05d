from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts import (
            lockout,  # noqa: F401  (audits django-axes lockouts)
            security,  # noqa: F401  (its deploy check: the trusted proxies)
        )
