from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts import (
            lockout,  # noqa: F401  (audits django-axes lockouts)
            password_reset,  # noqa: F401  (its deploy check: e-mails are sent, not logged)
            security,  # noqa: F401  (its deploy check: the trusted proxies)
        )
