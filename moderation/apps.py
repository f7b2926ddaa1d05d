from django.apps import AppConfig


class ModerationConfig(AppConfig):
    name = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        from moderation import checks, receivers  # noqa: F401  (registers the checks, connects the receiver)
