"""System checks of the review side's stored data: `manage.py check --database default` (they read the database, so
Django runs them only when asked to)."""

from __future__ import annotations

from typing import Any

from django.core.checks import Tags, Warning, register
from django.core.exceptions import ValidationError
from django.db import connections


@register(Tags.database)
def organisations_coverage_is_clean(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[Warning]:
    """Every organisation whose stored languages or countries `clean_coverage` refuses (written around
    Organisation.save): one not a list covers nothing until fixed (factcheck.coverage.listed_codes)."""
    from factcheck.coverage import clean_coverage
    from factcheck.models import Organisation

    # Like Django's own database checks: nothing unless asked for a database, and nothing before the table exists
    # (`manage.py migrate` runs the database checks before it migrates a fresh database).
    if not databases or "default" not in databases:
        return []
    if Organisation._meta.db_table not in connections["default"].introspection.table_names():
        return []
    found = []
    for pk, name, languages, countries in Organisation.objects.values_list("pk", "name", "languages", "countries"):
        problems = [f"{field}: stored as {value!r}, not a list, so it covers nothing"
                    for field, value in (("languages", languages), ("countries", countries))
                    if not isinstance(value, list)]
        try:
            clean_coverage(languages=languages, countries=countries)
        except ValidationError as refused:
            problems += [f"{field}: {' '.join(messages)}" for field, messages in refused.message_dict.items()
                         if f"{field}: stored as" not in " ".join(problems)]
        if problems:
            problems = "; ".join(problems)
            found.append(Warning(f"Organisation {pk} ({name}) has coverage Factdesk refuses: {problems}",
                                 id="factcheck.W001", obj=f"Organisation {pk}",
                                 hint="Fix its languages and countries in the admin (Organisations)."))
    return found
