from django.apps import AppConfig


class FactcheckConfig(AppConfig):
    name = "factcheck"
    verbose_name = "Fact-checking"
