from django.apps import AppConfig


class FactcheckConfig(AppConfig):
    name = "factcheck"
    verbose_name = "Fact-checking"

    def ready(self) -> None:
        from factcheck import checks  # noqa: F401  (registers the checks)
